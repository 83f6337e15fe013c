"""`sluice schemas register|check`."""

from __future__ import annotations

import click

from streams.cli.main import settings_of
from streams.contracts import check_all, register_all


@click.group()
def schemas() -> None:
    """Avro contracts in schemas/, registered as <topic>-value."""


@schemas.command()
@click.pass_context
def register(ctx: click.Context) -> None:
    """Register every contract (compatibility: backward-transitive)."""
    for reg in register_all(settings_of(ctx)):
        click.echo(f"{reg.subject:<34} id={reg.schema_id} version={reg.version}")


@schemas.command()
@click.pass_context
def check(ctx: click.Context) -> None:
    """Would the local contracts be accepted by the registry? Exit 1 if any is incompatible."""
    bad = 0
    for result in check_all(settings_of(ctx)):
        click.echo(f"{result.subject:<34} {result.detail}")
        bad += not result.compatible
    if bad:
        raise SystemExit(1)


COMMANDS = [schemas]
