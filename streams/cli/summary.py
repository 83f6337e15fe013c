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
@click.option("--send", is_flag=True,
              help="deliver each project's report to its webhook and e-mail addresses (watch.report.targets); "
                   "exit 1 if a delivery failed")
@click.pass_context
def summary(ctx: click.Context, day: str, project: str | None, top: int, to_index: bool, send: bool) -> None:
    """The daily report per project: jobs started, finished and failed by class, GPU-hours and mean GPU
    utilisation per task, GPU-idle incidents, top errors, links into Kibana."""
    settings = settings_of(ctx)
    day = day if is_day(day) else instant_datetime(day, int(time.time() * 1000)).strftime("%Y-%m-%d")
    reports = summarize_day(settings, day, project, top, to_index)
    for report in reports:
        click.echo(json.dumps(report))
    if send:
        from streams.watch.report_send import deliver_all

        failed = 0
        for delivery in deliver_all(reports, settings.watch.report):
            click.echo(f"{delivery.project}: {delivery.channel} {'sent' if delivery.ok else 'FAILED'} "
                       f"({delivery.detail})", err=True)
            failed += not delivery.ok
        if not reports:
            click.echo(f"no report for {day}: nothing in the hot tier that day", err=True)
        if failed:
            raise SystemExit(1)


COMMANDS = [summary]
