"""`sluice dlq ls|show|redrive`."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import click

from streams.cli.main import settings_of
from streams.dlq import Letter, LetterFilter, list_letters, redrive
from streams.timespec import TIME_HELP, parse_instant


def _filter(stage: str | None, error_type: str | None, contains: str | None, since: str | None,
            until: str | None) -> LetterFilter:
    now_ms = int(time.time() * 1000)
    return LetterFilter(stage, error_type, contains, parse_instant(since, now_ms) if since else None,
                        parse_instant(until, now_ms) if until else None)


def filter_options(fn: Any) -> Any:
    for option in reversed([
        click.option("--stage", help="decode, assemble, hot_sink, cold_sink, watch"),
        click.option("--error-type", help="e.g. undecodable, schema_not_found, mapping"),
        click.option("--contains", help="a substring of the error text"),
        click.option("--since", help=f"only letters since {TIME_HELP}"),
        click.option("--until", help=f"only letters before {TIME_HELP}"),
    ]):
        fn = option(fn)
    return fn


def _when(letter: Letter) -> str:
    ts = letter.value["timestamp"]
    return ts.strftime("%Y-%m-%d %H:%M:%S") if isinstance(ts, datetime) else str(ts)


@click.group()
def dlq() -> None:
    """Dead letters: what could not be processed, with the reason and the original bytes."""


@dlq.command(name="ls")
@filter_options
@click.option("--limit", type=int, default=100, show_default=True)
@click.pass_context
def ls(ctx: click.Context, limit: int, **filters: str | None) -> None:
    """List dead letters (newest last)."""
    letters = list_letters(settings_of(ctx), _filter(**filters), limit)
    click.echo(f"{'where':<10} {'time (UTC)':<20} {'stage':<10} {'error type':<18} {'from':<30} error")
    for letter in letters:
        v = letter.value
        origin = f"{v['topic']}/{v['partition']}@{v['offset']}"
        click.echo(f"{letter.partition}@{letter.offset:<8} {_when(letter):<20} {v['stage']:<10} "
                   f"{v['error_type']:<18} {origin:<30} {v['error'][:100]}")
    click.echo(f"{len(letters)} dead letter(s)")


@dlq.command()
@click.argument("where", metavar="PARTITION@OFFSET")
@click.pass_context
def show(ctx: click.Context, where: str) -> None:
    """One dead letter in full, with a preview of its original bytes."""
    try:
        partition, offset = (int(x) for x in where.split("@"))
    except ValueError:
        raise click.BadParameter("expected PARTITION@OFFSET, as `sluice dlq ls` prints it") from None
    for letter in list_letters(settings_of(ctx), LetterFilter()):
        if (letter.partition, letter.offset) == (partition, offset):
            v = letter.value
            for key in ("stage", "error_type", "error", "topic", "partition", "offset", "attempts", "timestamp"):
                click.echo(f"{key:>11}: {v[key]}")
            click.echo(f"{'original':>11}: {len(v['original'])} bytes")
            click.echo(v["original"][:2000].decode("utf-8", errors="backslashreplace"))
            return
    raise click.ClickException(f"no dead letter at {where} in {settings_of(ctx).topics.dlq}")


@dlq.command(name="redrive")
@filter_options
@click.option("--group", default="sluice-dlq-redrive", show_default=True,
              help="consumer group: each letter is re-driven once per group")
@click.option("--to-topic", help="send here instead of the letter's original topic")
@click.option("--dry-run", is_flag=True, help="list what would be re-sent")
@click.pass_context
def redrive_cmd(ctx: click.Context, group: str, to_topic: str | None, dry_run: bool, **filters: str | None) -> None:
    """Re-send dead letters' original bytes to their topic, after the cause is fixed."""
    sent = redrive(settings_of(ctx), _filter(**filters), group_id=group, to_topic=to_topic, dry_run=dry_run,
                   progress=lambda letter: click.echo(f"{'would re-send' if dry_run else 're-sent'} "
                                                      f"{letter.partition}@{letter.offset} -> "
                                                      f"{to_topic or letter.value['topic']}"))
    click.echo(f"{len(sent)} dead letter(s) {'would be ' if dry_run else ''}re-driven")


COMMANDS = [dlq]
