"""`sluice summary`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import click

from streams.cli.main import settings_of
from streams.watch.report import summarize_day


@click.command()
@click.option("--day", help="UTC day YYYY-MM-DD (default: yesterday)")
@click.option("--project", help="one project (default: all)")
@click.option("--top", default=10, show_default=True, help="how many top errors")
@click.option("--index", "to_index", is_flag=True, help="also index each report into sluice-summary-<project>")
@click.pass_context
def summary(ctx: click.Context, day: str | None, project: str | None, top: int, to_index: bool) -> None:
    """The daily report per project: jobs seen, jobs failed, failures by error class, top errors."""
    day = day or (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
    for report in summarize_day(settings_of(ctx), day, project, top, to_index):
        click.echo(json.dumps(report))


COMMANDS = [summary]
