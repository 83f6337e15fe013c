"""`sluice demo`: the whole pipeline on a corpus burst, with where to look."""

from __future__ import annotations

import click

from streams.cli.main import settings_of
from streams.demo import run_demo


@click.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the pipeline on a real burst from the corpus (needs `sluice stack up`)."""
    run_demo(settings_of(ctx), say=click.echo)


COMMANDS = [demo]
