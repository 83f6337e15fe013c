"""`sluice` entry point: command groups of DESIGN.md, each a thin layer over the library."""

from __future__ import annotations

import sys
from typing import Any

import click

from streams.config import Settings, load_settings
from streams.errors import SluiceError


class SluiceGroup(click.Group):
    """Turns a SluiceError into a one-line message and exit code 1 instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SluiceError as exc:
            click.echo(f"sluice: {exc}", err=True)
            sys.exit(1)


@click.group(cls=SluiceGroup)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Sluice: Kafka-buffered processing of GPU training-cluster logs."""
    ctx.obj = None


def settings_of(ctx: click.Context) -> Settings:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = load_settings()
    settings: Settings = root.obj
    return settings


def _register_commands() -> None:
    from streams.cli import dlq, rehydrate, replay, schemas, ship, summary, top, topics, worker

    for module in (topics, schemas, worker, ship, replay, dlq, rehydrate, top, summary):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
