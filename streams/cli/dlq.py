"""`sluice dlq ls|show|redrive`."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from streams.assemble.redact import redactor_from
from streams.cli.main import settings_of
from streams.config import Settings
from streams.deadletter import escape_controls, letter_seal, new_key, open_original, readable_text
from streams.dlq import Letter, LetterFilter, list_letters, redrive
from streams.errors import SluiceError
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
    safe = _safe_text(settings_of(ctx))
    for letter in letters:
        v = letter.value
        origin = safe(f"{v['topic']}/{v['partition']}@{v['offset']}")
        click.echo(f"{letter.partition}@{letter.offset:<8} {_when(letter):<20} {safe(v['stage']):<10} "
                   f"{safe(v['error_type']):<18} {origin:<30} {safe(v['error'])[:100]}")
    click.echo(f"{len(letters)} dead letter(s)")


def _safe_text(settings: Settings) -> Callable[[str], str]:
    """Text from a letter as a terminal may show it: redacted (older letters were written unredacted),
    control characters and escape sequences escaped."""
    redact = redactor_from(settings.redaction)
    return lambda text: escape_controls(redact(str(text)))


@dlq.command()
@click.argument("where", metavar="PARTITION@OFFSET")
@click.option("--raw", is_flag=True,
              help="the original bytes unredacted (opening a sealed one needs the dead-letter key); "
                   "written as they are to a pipe or file, with control characters escaped on a terminal")
@click.pass_context
def show(ctx: click.Context, where: str, raw: bool) -> None:
    """One dead letter in full: its text redacted and control characters escaped, unless --raw."""
    try:
        partition, offset = (int(x) for x in where.split("@"))
    except ValueError:
        raise click.BadParameter("expected PARTITION@OFFSET, as `sluice dlq ls` prints it") from None
    settings = settings_of(ctx)
    for letter in list_letters(settings, LetterFilter()):
        if (letter.partition, letter.offset) != (partition, offset):
            continue
        v = letter.value
        if raw:
            try:
                original = open_original(v, letter_seal(settings.dead_letters))
            except SluiceError as exc:
                raise click.ClickException(f"{where}: {exc}") from None
            out = click.get_binary_stream("stdout")
            if out.isatty():
                click.echo(escape_controls(original.decode("utf-8", "backslashreplace")))
            else:
                out.write(original)
                out.flush()
            return
        safe = _safe_text(settings)
        for key in ("stage", "error_type", "error", "topic", "partition", "offset", "attempts", "timestamp"):
            click.echo(f"{key:>11}: {safe(v[key])}")
        sealed = v.get("sealed")
        click.echo(f"{'original':>11}: {len(v['original'])} bytes, "
                   + (f"sealed ({safe(sealed)})" if sealed else "not sealed (no dead-letter key was set)"))
        text = v.get("text")
        if text is None:
            text = "(sealed; this letter carries no readable text)" if sealed else \
                readable_text(bytes(v["original"]), redactor_from(settings.redaction))
        click.echo(safe(text))
        return
    raise click.ClickException(f"no dead letter at {where} in {settings.topics.dlq}")


@dlq.command()
def keygen() -> None:
    """Print a new dead-letter key (set it as dead_letters.key or in the file dead_letters.key_file)."""
    click.echo(new_key())


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
