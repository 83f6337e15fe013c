"""`sluice replay`."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import click

from streams.cli.main import settings_of
from streams.replay import Bound, ReplayFilter, ReplayState, plan_range, run_replay
from streams.timespec import TIME_HELP, parse_instant


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
@click.pass_context
def replay(ctx: click.Context, topic: str, start: str | None, end: str | None, partitions: str | None,
           project: str | None, task_id: str | None, into: str, target: str | None, rate: float | None,
           state_path: Path | None) -> None:
    """Re-run a range of history through the sinks, beside the live workers (their groups are untouched).

    To re-assemble raw history, copy it to a topic of its own (--into topic --target logs.raw.replay)
    and run `SLUICE_TOPICS__RAW=logs.raw.replay SLUICE_ASSEMBLE__APP_ID=sluice-assemble-replay sluice
    worker assemble`: the same assemble code, the same event ids.
    """
    settings = settings_of(ctx)
    parts = [int(p) for p in partitions.split(",")] if partitions else None
    now_ms = int(time.time() * 1000)
    plan = plan_range(settings, topic, _bound(start, now_ms), _bound(end, now_ms), parts)
    key = "|".join(str(x) for x in (topic, plan.start, plan.end, project, task_id, into, target))
    default_state = Path(".sluice-replay") / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    state = ReplayState.load(state_path or default_state)
    done = sum(max(0, min(off, plan.end[p]) - plan.start[p]) for p, off in state.next_offset.items())
    click.echo(f"replaying {plan.total} records of {topic} into {into}"
               + (f" ({done} already done, resuming from {state.path})" if done else f" (progress: {state.path})"))
    with click.progressbar(length=plan.total, label="replay", show_eta=True, show_percent=True) as bar:
        bar.update(done)
        stats = run_replay(settings, plan, into, state, ReplayFilter(project, task_id), rate, target, bar.update)
    click.echo(f"done: {stats}")


def _bound(text: str | None, now_ms: int) -> Bound | None:
    """``@OFFSET`` or a time (``-2d``, ``1h``, ISO-8601, epoch ms)."""
    if text is None:
        return None
    if text.startswith("@"):
        return Bound.parse(text)
    return Bound(time_ms=parse_instant(text, now_ms))


COMMANDS = [replay]
