"""`sluice dlq ls|show|redrive`."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from streams.assemble.redact import redactor_from
from streams.cli.main import require, settings_of
from streams.cli.output import emit, output_option
from streams.config import Settings
from streams.deadletter import escape_controls, letter_seal, new_key, open_original, readable_text
from streams.dlq import (
    DEFAULT_MAX_REDRIVES,
    Letter,
    LetterFilter,
    RedriveReport,
    list_letters,
    redrive,
    scan_letters,
)
from streams.errors import PartlyDone, SluiceError
from streams.redrive_marks import redrives_of
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
@click.option("--limit", type=int, default=100, show_default=True, help="show the newest N that match")
@output_option
@click.pass_context
def ls(ctx: click.Context, limit: int, output: str, **filters: str | None) -> None:
    """List dead letters that match, newest last (the newest --limit of them)."""
    settings = require(ctx, "kafka", "registry")
    listing = scan_letters(settings, _filter(**filters), max(0, limit))
    topic = listing.topic
    safe = _safe_text(settings)
    head = (f"{listing.matched} of {listing.scanned} dead letter(s) in {topic} match"
            if listing.matched else f"no dead letter in {topic} matches ({listing.scanned} read)")
    if listing.more:
        head += f"; the newest {len(listing.letters)} below, {listing.more} older not shown (raise --limit)"
    elif listing.letters:
        head += ", newest last"
    lines = [head]
    if listing.letters:
        lines.append(f"{'at':<10} {'time (UTC)':<24} {'stage':<10} {'error type':<18} {'from':<30} error")
    for letter in listing.letters:
        row = letter.summary(topic, safe)
        lines.append(f"{letter.partition}@{letter.offset:<8} {row['time']:<24} {row['stage']:<10} "
                     f"{row['error_type']:<18} {row['from']:<30} {row['error'][:100]}")
    lines += [f"could not decode {u}" for u in listing.undecodable]
    emit(output, lines, {
        "topic": topic, "read": listing.scanned, "matched": listing.matched, "shown": len(listing.letters),
        "older_not_shown": listing.more, "letters": [lt.summary(topic, safe) for lt in listing.letters],
        "undecodable": listing.undecodable,
    })


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
@click.option("--max-redrives", type=click.IntRange(min=1), default=DEFAULT_MAX_REDRIVES, show_default=True,
              help="a letter whose bytes were re-driven this many times already is reported, not sent again")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="seconds to watch for re-sent letters that fail again (0: do not wait)")
@output_option
@click.pass_context
def redrive_cmd(ctx: click.Context, group: str, to_topic: str | None, dry_run: bool, max_redrives: int,
                wait_s: float, output: str, **filters: str | None) -> None:
    """Re-send dead letters' original bytes to their topic, after the cause is fixed.

    Works on the letters there are when it starts; each re-sent record carries where its letter was,
    so a letter that fails again is reported (and counted towards --max-redrives), not re-sent in a loop.
    Exit status 6 when a letter failed again or was not re-sent.
    """
    settings = require(ctx, "kafka", "registry")
    verb = "would re-send" if dry_run else "re-sent"
    report = redrive(settings, _filter(**filters), group_id=group, to_topic=to_topic, dry_run=dry_run,
                     max_redrives=max_redrives, wait_s=wait_s,
                     progress=lambda sent: click.echo(f"{verb} {sent.letter.partition}@{sent.letter.offset} -> "
                                                      f"{sent.to_topic}", err=True))
    _redrive_report(report, output, _safe_text(settings))
    problems = [f"{len(report.failed_again)} failed again"] if report.failed_again else []
    if report.given_up:
        problems.append(f"{len(report.given_up)} not re-sent (re-driven {max_redrives} times already)")
    if report.no_topic:
        problems.append(f"{len(report.no_topic)} not re-sent (no such topic)")
    if problems:
        raise PartlyDone(f"re-drive partly done: {', '.join(problems)}; see the report above")


def _redrive_report(report: RedriveReport, output: str, safe: Callable[[str], str]) -> None:
    topic = report.topic
    what = "would be re-driven" if report.dry_run else "re-driven"
    lines = [f"{len(report.sent)} dead letter(s) {what} from {topic} (group {report.group}; "
             f"{report.matched} of {report.scanned} read matched)"]
    if report.failed_again:
        lines.append(f"{len(report.failed_again)} failed again within {report.waited_s:.1f} s:")
        for sent, new in report.failed_again:
            count = redrives_of(new.value.get("headers"))
            lines.append(f"  {sent.letter.partition}@{sent.letter.offset} came back as {new.partition}@{new.offset} "
                         f"(re-driven {count} of {report.max_redrives} times): {safe(new.value['error'])[:160]}")
    elif report.sent and not report.dry_run and report.waited_s:
        lines.append(f"none came back as a dead letter within {report.waited_s:.0f} s")
    if report.given_up:
        lines.append(f"{len(report.given_up)} not re-sent: re-driven {report.max_redrives} times already "
                     "(--max-redrives); fix the cause, then re-drive with a higher limit:")
        lines += [f"  {lt.partition}@{lt.offset} {safe(lt.value['error'])[:160]}" for lt in report.given_up]
    if report.no_topic:
        lines.append(f"{len(report.no_topic)} not re-sent: their topic does not exist (add the project with "
                     "`sluice project add`, or use --to-topic):")
        lines += [f"  {s.letter.partition}@{s.letter.offset} -> {s.to_topic}" for s in report.no_topic]
    lines += [f"could not decode {u}" for u in report.undecodable]
    emit(output, lines, {
        "topic": topic, "group": report.group, "dry_run": report.dry_run, "read": report.scanned,
        "matched": report.matched, "max_redrives": report.max_redrives, "waited_s": round(report.waited_s, 1),
        "sent": [{**s.letter.summary(topic, safe), "to": s.to_topic} for s in report.sent],
        "failed_again": [{"sent": s.letter.summary(topic, safe), "new_letter": new.summary(topic, safe)}
                         for s, new in report.failed_again],
        "given_up": [lt.summary(topic, safe) for lt in report.given_up],
        "no_topic": [{**s.letter.summary(topic, safe), "to": s.to_topic} for s in report.no_topic],
        "undecodable": report.undecodable,
    })


COMMANDS = [dlq]
