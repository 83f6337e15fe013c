"""`sluice rehydrate`: a task's cold events back into Elasticsearch, with a progress bar."""

from __future__ import annotations

import time
from typing import Any

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.sinks.objectstore.rehydrate import parse_bound
from streams.sinks.objectstore.rehydrate import rehydrate as rehydrate_events
from streams.timespec import TIME_HELP, instant_datetime, is_day


@click.command()
@click.option("--project", required=True, help="the project whose bucket and prefix to read")
@click.option("--task", "task_id", required=True, help="the task id (the second level of the object keys)")
@click.option("--from", "start", required=True,
              help=f"first day (2026-11-29, from its start), or {TIME_HELP}")
@click.option("--to", "end", default="now", show_default=True, help="last day (inclusive), or a time as --from")
@click.option("--index", default=None,
              help="put everything into this one index instead of the hot tier's daily indices (it gets the hot "
                   "tier's field types only if its name matches the index template, e.g. sluice-logs-*)")
@click.option("--metrics", is_flag=True,
              help="the task's metric points (loss curves, GPU samples) instead of its events, into its daily "
                   "sluice-metrics-<project>-* indices")
@output_option
@click.pass_context
def rehydrate(ctx: click.Context, project: str, task_id: str, start: str, end: str, index: str | None,
              metrics: bool, output: str) -> None:
    """Read cold objects of one task back into Elasticsearch, into the indices the hot tier uses.

    Same daily indices, same documents, _id = event_id: an event still in the hot tier is overwritten
    by itself (counts never double), and running it twice changes nothing.
    """
    settings = require(ctx, "object_store", "elasticsearch")
    now_ms = int(time.time() * 1000)
    first = parse_bound(start, end=False) if is_day(start) else instant_datetime(start, now_ms)
    last = parse_bound(end, end=True) if is_day(end) else instant_datetime(end, now_ms)
    bar: dict[str, Any] = {}

    def on_plan(total: int) -> None:
        bar["bar"] = click.progressbar(length=max(total, 1), label=f"rehydrating {project}/{task_id}",
                                       show_pos=True, file=click.get_text_stream("stderr"))
        bar["bar"].__enter__()

    try:
        report = rehydrate_events(settings, project, task_id, first, last, index=index, on_plan=on_plan,
                                  metrics=metrics, on_progress=lambda n: bar["bar"].update(n) if "bar" in bar else None)
    finally:
        if "bar" in bar:
            bar["bar"].__exit__(None, None, None)
    indices = sorted(report.indices)
    shown = ", ".join(indices[:5]) + (f" and {len(indices) - 5} more" if len(indices) > 5 else "")
    emit(output, [
        f"rehydrated {report.events_indexed} event(s) of project {project}, task {task_id} from "
        f"{report.objects_read} object(s) in bucket {report.bucket} into {shown or 'no index'}",
        f"{report.objects_skipped} of {report.objects_listed} object(s) listed were outside the range",
    ], {"project": project, "task": task_id, "bucket": report.bucket, "indices": indices,
        "events_indexed": report.events_indexed, "objects_read": report.objects_read,
        "objects_listed": report.objects_listed, "objects_skipped": report.objects_skipped})


COMMANDS = [rehydrate]
