"""`sluice summary`."""

from __future__ import annotations

import time
from typing import Any

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.timespec import instant_datetime, is_day
from streams.watch.report import day_indices, summarize_day


@click.command()
@click.option("--day", default="-1d", show_default=True,
              help="the UTC day: YYYY-MM-DD, or a time within it (-1d is yesterday, now is today)")
@click.option("--project", help="one project (default: all)")
@click.option("--top", default=10, show_default=True, help="how many top errors")
@click.option("--index", "to_index", is_flag=True, help="also index each report into sluice-summary-<project>")
@output_option
@click.pass_context
def summary(ctx: click.Context, day: str, project: str | None, top: int, to_index: bool, output: str) -> None:
    """The daily report per project: jobs seen, jobs failed, failures by error class, top errors, job
    incidents by root class.

    Reads the hot tier's indices of the day (rehydrated days included), each project's index_prefix
    honoured; says so when the day holds nothing.
    """
    settings = require(ctx, "elasticsearch")
    day = day if is_day(day) else instant_datetime(day, int(time.time() * 1000)).strftime("%Y-%m-%d")
    reports = summarize_day(settings, day, project, top, to_index)
    where = ", ".join(day_indices(settings, project))
    lines = [line for report in reports for line in _words(report)]
    if not reports:
        lines = [f"no events or metric points on {day} (UTC){f' for project {project}' if project else ''} "
                 f"in {where} at {settings.elasticsearch.url}"]
    emit(output, lines, {"day": day, "project": project, "indices": where, "reports": reports})


def _words(report: dict[str, Any]) -> list[str]:
    lines = [f"{report['day']} {report['project']}: {report['jobs_seen']} job(s) seen, {report['jobs_failed']} "
             f"failed; {report['events']} event(s), {report['metric_points']} metric point(s)"]
    if report["failures_by_class"]:
        lines.append("  failures by class: " + ", ".join(f"{c} {n}" for c, n in report["failures_by_class"].items()))
    lines += [f"  {e['count']:>6} x {e['error']}" for e in report["top_errors"]]
    if report.get("incidents"):
        lines.append(f"  job incidents: {report['incidents']} in {report['tasks_with_incidents']} task(s), by root "
                     "cause: " + ", ".join(f"{c} {n}" for c, n in report["incidents_by_root_class"].items()))
    return lines


COMMANDS = [summary]
