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
@click.option("--send", is_flag=True,
              help="deliver each project's report to its webhook and e-mail addresses (watch.report.targets); "
                   "exit 1 if a delivery failed")
@output_option
@click.pass_context
def summary(ctx: click.Context, day: str, project: str | None, top: int, to_index: bool, send: bool,
            output: str) -> None:
    """The daily report per project: jobs started, finished and failed by class, GPU-hours and mean GPU
    utilisation per task, GPU-idle incidents, top errors, job incidents by root class, links into Kibana.

    Reads the hot tier's indices of the day (rehydrated days included), each project's index_prefix
    honoured; says so when the day holds nothing. --send delivers each report (docs/gpu.md).
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
    if send:
        _send(settings, reports)


def _send(settings: Any, reports: list[dict[str, Any]]) -> None:
    from streams.watch.report_send import deliver_all

    failed = 0
    for delivery in deliver_all(reports, settings.watch.report):
        click.echo(f"{delivery.project}: {delivery.channel} {'sent' if delivery.ok else 'FAILED'} "
                   f"({delivery.detail})", err=True)
        failed += not delivery.ok
    if failed:
        raise SystemExit(1)


def _words(report: dict[str, Any]) -> list[str]:
    lines = [f"{report['day']} {report['project']}: {report['jobs_seen']} job(s) seen, {report['jobs_failed']} "
             f"failed; {report['events']} event(s), {report['metric_points']} metric point(s)",
             f"  {report['jobs_started']} started, {report['jobs_finished']} finished; {report['gpu_hours']:g} "
             f"GPU-hour(s), mean GPU utilisation "
             f"{'-' if report['mean_gpu_util_pct'] is None else format(report['mean_gpu_util_pct'], 'g') + '%'}, "
             f"{len(report['idle_incidents'])} GPU-idle incident(s)"]
    if report["failures_by_class"]:
        lines.append("  failures by class: " + ", ".join(f"{c} {n}" for c, n in report["failures_by_class"].items()))
    lines += [f"  {e['count']:>6} x {e['error']}" for e in report["top_errors"]]
    if report.get("incidents"):
        lines.append(f"  job incidents: {report['incidents']} in {report['tasks_with_incidents']} task(s), by root "
                     "cause: " + ", ".join(f"{c} {n}" for c, n in report["incidents_by_root_class"].items()))
    return lines


COMMANDS = [summary]
