"""`sluice summary`."""

from __future__ import annotations

import json
import time

import click

from streams.cli.main import settings_of
from streams.timespec import instant_datetime, is_day
from streams.watch.report import summarize_day


@click.command()
@click.option("--day", default="-1d", show_default=True,
              help="the UTC day: YYYY-MM-DD, or a time within it (-1d is yesterday, now is today)")
@click.option("--project", help="one project (default: all)")
@click.option("--top", default=10, show_default=True, help="how many top errors")
@click.option("--index", "to_index", is_flag=True, help="also index each report into sluice-summary-<project>")
@click.pass_context
def summary(ctx: click.Context, day: str, project: str | None, top: int, to_index: bool) -> None:
    """The daily report per project: jobs seen, jobs failed, failures by error class, top errors."""
    day = day if is_day(day) else instant_datetime(day, int(time.time() * 1000)).strftime("%Y-%m-%d")
    for report in summarize_day(settings_of(ctx), day, project, top, to_index):
        click.echo(json.dumps(report))


COMMANDS = [summary]
