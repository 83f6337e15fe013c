"""`sluice stack up|down|status`."""

from __future__ import annotations

import click

from streams.cli.main import settings_of
from streams.stack import manager


@click.group()
def stack() -> None:
    """The local Kafka, schema registry, Elasticsearch and object store (no Docker needed)."""


def _only(names: tuple[str, ...]) -> list[str] | None:
    return list(names) or None


SERVICE_NAMES = click.Choice(["kafka", "registry", "elasticsearch", "objectstore"])


@stack.command()
@click.argument("services", nargs=-1, type=SERVICE_NAMES)
@click.pass_context
def up(ctx: click.Context, services: tuple[str, ...]) -> None:
    """Install (first time) and start the servers; a no-op for those already healthy."""
    settings = settings_of(ctx)
    click.echo(f"stack directory: {settings.stack.dir}")
    seconds = manager.up(settings, log=click.echo, only=_only(services))
    click.echo(f"stack up in {seconds:.1f}s")


@stack.command()
@click.argument("services", nargs=-1, type=SERVICE_NAMES)
@click.pass_context
def down(ctx: click.Context, services: tuple[str, ...]) -> None:
    """Stop the servers (data is kept under the stack directory)."""
    manager.down(settings_of(ctx), log=click.echo, only=_only(services))


@stack.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Each server: running, healthy, endpoint, resident memory."""
    rows = manager.status(settings_of(ctx))
    click.echo(f"{'service':<14}{'state':<12}{'pid':>8}{'rss MB':>9}  endpoint")
    for row in rows:
        state = "healthy" if row.healthy else ("starting" if row.running else "stopped")
        rss = f"{row.rss_mb:.0f}" if row.rss_mb else "-"
        click.echo(f"{row.name:<14}{state:<12}{row.pid or '-':>8}{rss:>9}  {row.endpoint}")
    if not all(r.healthy for r in rows):
        raise SystemExit(3)


COMMANDS = [stack]
