"""`sluice schemas register|check`."""

from __future__ import annotations

import click

from streams.cli.main import require
from streams.contracts import check_all, register_all
from streams.errors import SluiceError


@click.group()
def schemas() -> None:
    """Avro contracts in schemas/, registered as <topic>-value."""


@schemas.command()
@click.pass_context
def register(ctx: click.Context) -> None:
    """Register every contract (compatibility: backward-transitive)."""
    for reg in register_all(require(ctx, "registry")):
        click.echo(f"{reg.subject:<34} schema id {reg.schema_id}, version {reg.version}")


@schemas.command()
@click.pass_context
def check(ctx: click.Context) -> None:
    """Would the local contracts be accepted by the registry? Exit 1 if any is incompatible."""
    bad = 0
    for result in check_all(require(ctx, "registry")):
        click.echo(f"{result.subject:<34} {result.detail}")
        bad += not result.compatible
    if bad:
        raise SluiceError(f"{bad} contract(s) would not be accepted by the registry: see above")


COMMANDS = [schemas]
