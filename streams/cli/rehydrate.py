"""`sluice rehydrate`: a task's cold events back into Elasticsearch, with a progress bar."""

from __future__ import annotations

import time
from typing import Any

import click

from streams.cli.main import settings_of
from streams.sinks.objectstore.rehydrate import parse_bound
from streams.sinks.objectstore.rehydrate import rehydrate as rehydrate_events
from streams.timespec import TIME_HELP, instant_datetime, is_day


@click.command()
@click.option("--project", required=True, help="the project whose bucket and prefix to read")
@click.option("--task", "task_id", required=True, help="the task id (the second level of the object keys)")
@click.option("--from", "start", required=True,
              help=f"first day (2026-11-29, from its start), or {TIME_HELP}")
@click.option("--to", "end", default="now", show_default=True, help="last day (inclusive), or a time as --from")
@click.option("--index", default=None, help="target index [default: <index prefix of the project>-rehydrated]")
@click.pass_context
def rehydrate(ctx: click.Context, project: str, task_id: str, start: str, end: str, index: str | None) -> None:
    """Read cold objects of one task back into Elasticsearch (event_id is the _id: safe to repeat)."""
    settings = settings_of(ctx)
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
                                  on_progress=lambda n: bar["bar"].update(n) if "bar" in bar else None)
    finally:
        if "bar" in bar:
            bar["bar"].__exit__(None, None, None)
    click.echo(f"{report.events_indexed} event(s) from {report.objects_read} object(s) into {report.index} "
               f"({report.objects_skipped} of {report.objects_listed} object(s) outside the range, "
               f"bucket {report.bucket})")


COMMANDS = [rehydrate]
