"""`sluice replay`."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.errors import PartlyDone
from streams.replay import Bound, ReplayFilter, ReplayState, plan_range, run_replay
from streams.timespec import TIME_HELP, parse_instant

# What a replay's counts mean, in the order they are reported.
WORDS = {"acked": "written", "copied": "copied", "dead_lettered": "dead-lettered", "retried": "retried",
         "throttled": "throttled flushes"}


@click.command()
@click.option("--topic", required=True, help="the topic to replay (logs.events.<project>, logs.metrics, logs.raw)")
@click.option("--from", "start", help=f"@OFFSET, or {TIME_HELP}; default: the beginning")
@click.option("--to", "end", help="@OFFSET, or a time as --from; exclusive; default: the end as of now")
@click.option("--partitions", help="comma-separated partition numbers (default: all)")
@click.option("--project", help="only events of this project")
@click.option("--task", "task_id", help="only events of this task_id")
@click.option("--into", type=click.Choice(["es", "s3", "topic"]), required=True)
@click.option("--target", help="with --into topic: where to copy the records")
@click.option("--rate", type=float, help="events per second (default: the sink's own budget)")
@click.option("--state", "state_path", type=click.Path(path_type=Path),
              help="progress file (default: .sluice-replay/<hash of the arguments>.json); rerun to resume")
@output_option
@click.pass_context
def replay(ctx: click.Context, topic: str, start: str | None, end: str | None, partitions: str | None,
           project: str | None, task_id: str | None, into: str, target: str | None, rate: float | None,
           state_path: Path | None, output: str) -> None:
    """Re-run a range of history through the sinks, beside the live workers (their groups are untouched).

    To re-assemble raw history, copy it to a topic of its own (--into topic --target logs.raw.replay)
    and run `SLUICE_TOPICS__RAW=logs.raw.replay SLUICE_ASSEMBLE__APP_ID=sluice-assemble-replay sluice
    worker assemble`: the same assemble code, the same event ids.
    """
    store = {"es": ("elasticsearch",), "s3": ("object_store",), "topic": ()}[into]
    settings = require(ctx, "kafka", "registry", *store)
    parts = [int(p) for p in partitions.split(",")] if partitions else None
    now_ms = int(time.time() * 1000)
    plan = plan_range(settings, topic, _bound(start, now_ms), _bound(end, now_ms), parts)
    key = "|".join(str(x) for x in (topic, plan.start, plan.end, project, task_id, into, target))
    default_state = Path(".sluice-replay") / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    state = ReplayState.load(state_path or default_state)
    done = sum(max(0, min(off, plan.end[p]) - plan.start[p]) for p, off in state.next_offset.items())
    where = {"es": "Elasticsearch", "s3": "the object store", "topic": target or "a topic"}[into]
    click.echo(f"replaying offsets {_span(plan)} of {topic} ({plan.total} offsets) into {where}"
               + (f"; {done} already done, resuming from {state.path}" if done else f"; progress in {state.path}"),
               err=output == "json")
    with click.progressbar(length=plan.total, label="replay", show_eta=True, show_percent=True,
                           file=click.get_text_stream("stderr")) as bar:
        bar.update(done)
        stats = run_replay(settings, plan, into, state, ReplayFilter(project, task_id), rate, target, bar.update)
    said = ", ".join(f"{stats[k]} {w}" for k, w in WORDS.items() if k in stats and (stats[k] or k in ("acked",
                                                                                                       "copied")))
    emit(output, [f"replay of {topic} into {where} done: {said}"],
         {"topic": topic, "into": into, "target": target, "start": plan.start, "end": plan.end,
          "offsets": plan.total, "state": str(state.path), **stats})
    if stats.get("dead_lettered"):
        raise PartlyDone(f"{stats['dead_lettered']} record(s) of the range could not be written and went to "
                         f"{settings.topics.dlq}: `sluice dlq ls --stage replay`")


def _span(plan: Any) -> str:
    return ", ".join(f"[{p}] {plan.start[p]}-{plan.end[p]}" for p in sorted(plan.start)) or "none"


def _bound(text: str | None, now_ms: int) -> Bound | None:
    """``@OFFSET`` or a time (``-2d``, ``1h``, ISO-8601, epoch ms)."""
    if text is None:
        return None
    if text.startswith("@"):
        return Bound.parse(text)
    return Bound(time_ms=parse_instant(text, now_ms))


COMMANDS = [replay]
