"""What a failure while handling one record, one line or one block becomes: one dead letter.

Bad data that a step recognises (an unreadable record, JSON past the limits) has its own
``error_type``. Any other exception is a bug in Sluice, not in the data: its letter says
``internal``, with the step that failed, the exception type and a short traceback in the letter's
headers, so that it is reported and re-driven rather than taken for data loss.

The step is read from the traceback: the deepest frame of Sluice's own code names it (a table of
modules, below); a module not in the table leaves the caller's coarse step (``build``, ``merge``).
Pure: no I/O, no clock.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any

from streams.assemble.lines import Block
from streams.assemble.times import MAX_MS  # a later time is no date to a timestamp-millis reader

STAGE = "assemble"
MAX_ERROR_CHARS = 2000  # an exception can quote a whole value (fastavro does): the letter keeps the head
TRACEBACK_FRAMES = 4
MAX_KEY_BYTES = 4096  # a letter's key past this is cut (and its length kept in the headers)

# The step a module's code belongs to, for the letters of internal errors.
STEP_OF_MODULE = {
    "streams.assemble.decode": "decode",
    "streams.assemble.envelopes": "decode",
    "streams.assemble.otlp": "decode",
    "streams.assemble.syslog": "decode",
    "streams.assemble.timefmt": "decode",
    "streams.assemble.jsonlimits": "decode",
    "streams.assemble.partials": "join",
    "streams.assemble.merger": "merge",
    "streams.assemble.rules": "merge",
    "streams.assemble.parse": "parse",
    "streams.assemble.records": "parse",
    "streams.assemble.lift": "parse",
    "streams.assemble.keys": "parse",
    "streams.assemble.steplines": "parse",
    "streams.assemble.times": "parse",
    "streams.assemble.metrics": "parse",
    "streams.assemble.fields": "build",
    "streams.assemble.metadata": "build",
    "streams.assemble.classify": "classify",
    "streams.assemble.redact": "redact",
    "streams.assemble.route": "route",
    "streams.assemble.outputs": "encode",
    "streams.avro_writer": "encode",
}


@dataclass(frozen=True, slots=True)
class Failure:
    """An exception while handling data, described for a dead letter."""

    step: str
    error_type: str
    error: str  # what happened and what to do, without the where
    headers: dict[str, str]


def clean(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Text an Avro string can hold (no lone surrogates), at most ``limit`` characters."""
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit:,} more characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _step_of(exc: BaseException, default: str) -> str:
    step = default
    for frame, _line in traceback.walk_tb(exc.__traceback__):
        found = STEP_OF_MODULE.get(frame.f_globals.get("__name__", ""))
        if found is not None:
            step = found
    return step


def short_traceback(exc: BaseException, frames: int = TRACEBACK_FRAMES) -> str:
    """The innermost ``frames`` frames, one line each (a RecursionError has thousands)."""
    walked = list(traceback.walk_tb(exc.__traceback__))
    tail = traceback.StackSummary.extract(iter(walked[-frames:]), lookup_lines=False)
    lines = [f"{'/'.join(f.filename.split('/')[-2:])}:{f.lineno} in {f.name}" for f in tail]
    if len(walked) > frames:
        lines.append(f"({len(walked) - frames} outer frames)")
    lines[:len(tail)] = reversed(lines[:len(tail)])
    return clean(" <- ".join(lines))


def internal(exc: BaseException, step: str) -> Failure:
    """An exception nobody raised on purpose: a bug, named by its step and type."""
    found = _step_of(exc, step)
    name = type(exc).__name__
    error = (f"internal error in step {found} ({name}: {clean(str(exc), 500)}): a bug in Sluice, not in the "
             "data; report it with this letter, and re-drive the letter once the fix is deployed")
    return Failure(found, "internal", clean(error),
                   {"step": found, "exception": name, "traceback": short_traceback(exc)})


def known(step: str, error: str, error_type: str) -> Failure:
    """Bad data a step recognised (``error_type`` says what)."""
    return Failure(step, error_type, clean(error), {"step": step})


def letter(original: bytes, key: bytes | None, topic: str, partition: int, offset: int, where: str,
           failure: Failure, timestamp_ms: int, headers: dict[str, str] | None = None) -> dict:
    """A ``sluice.v1.DeadLetter`` value."""
    headers = {**failure.headers, **(headers or {})}
    if key is not None and len(key) > MAX_KEY_BYTES:  # it is the letter's Kafka key too: twice in the message
        headers["key_bytes"], key = str(len(key)), key[:MAX_KEY_BYTES]
    if not (isinstance(timestamp_ms, int) and 0 <= timestamp_ms <= MAX_MS):
        headers["timestamp"], timestamp_ms = clean(str(timestamp_ms), 100), 0  # readers make a date of it
    return {
        "original": original, "key": key, "topic": topic, "partition": partition, "offset": offset,
        "stage": STAGE, "error": clean(f"{where}: {failure.error}"), "error_type": failure.error_type,
        "timestamp": timestamp_ms, "attempts": 1, "headers": headers,
    }


def text_bytes(texts: list[str]) -> bytes:
    """Lines as the bytes of one plain-text record (what a re-drive sends back to the raw topic)."""
    return ("\n".join(texts) + "\n").encode("utf-8", "surrogatepass")


def block_letter(b: Block, topic: str, partition: int, where: str, failure: Failure) -> dict:
    """The letter of a merged block: its lines as plain text (a block can span many records, and a
    record many blocks), keyed by its source, from its first raw offset; the source fields and labels
    the lines came with are in the headers, as JSON."""
    return letter(text_bytes(b.texts), b.source_id.encode("utf-8", "surrogatepass"), topic, partition,
                  b.first_offset, where, failure, b.first_ts_ms,
                  {"original": "lines", "lines": str(len(b.texts)), "last_offset": str(b.last_offset),
                   "source": clean(json.dumps(b.source, default=str)),
                   "labels": clean(json.dumps(b.labels, default=str))})


def bare(value: dict, exc: BaseException) -> dict:
    """The letter reduced to fields that always encode, when the letter itself could not be encoded: where
    it came from, its error type and the exception's type (no text that could quote the data)."""
    def number(v: object, bits: int) -> int:
        return v if isinstance(v, int) and -(2 ** (bits - 1)) <= v < 2 ** (bits - 1) else -1

    key = value.get("key")
    topic, partition, offset = clean(str(value.get("topic"))), number(value.get("partition"), 32), \
        number(value.get("offset"), 64)
    error_type = clean(str(value.get("error_type")))
    return {"original": b"", "key": key if isinstance(key, bytes) else None, "topic": topic,
            "partition": partition, "offset": offset, "stage": STAGE,
            "error": f"{topic}/{partition}@{offset}: a {error_type} letter that could not be encoded "
                     f"({type(exc).__name__}); its original and error text are left out",
            "error_type": error_type, "timestamp": min(max(0, number(value.get("timestamp"), 64)), MAX_MS),
            "attempts": 1, "headers": {"original_cut": "true", "exception": type(exc).__name__}}


def redacted(value: dict, redact: Any) -> dict:
    """The letter's error and readable text redacted (``Redactor.letter``); when redacting fails on
    this letter, it keeps no readable text (the original stays, sealed where it is written)."""
    try:
        redact.letter(value)
    except Exception as exc:  # noqa: BLE001 - the letter must still be written
        value["text"] = f"(no readable text: redacting this letter failed with {type(exc).__name__})"
        value["sealed"] = None
    return value


def holds_line(blocks: list[Block], text: str, offset: int) -> bool:
    """Did a failed merge get as far as adding the line at ``offset`` to one of these blocks?"""
    return any(b.last_offset == offset and text in b.texts for b in blocks)


def cut_to_fit(value: dict, encoded_size: int, limit: int) -> dict:
    """The letter with its original (and its readable text) cut so that it encodes under ``limit``
    bytes, flagged in its headers with the original's full size."""
    original: bytes = value["original"]
    text = value.get("text") or ""
    text_size = len(text.encode("utf-8", "surrogatepass"))
    room = max(0, limit - (encoded_size - len(original) - text_size) - 512)  # 512: the flags, a seal, slack
    keep_text = min(len(text), room // 16)  # a readable view of the head is enough; chars take up to 4 bytes
    keep = max(0, room - 4 * keep_text)
    cut = {**value, "original": original[:keep],
           "headers": {**value["headers"], "original_bytes": value["headers"].get("original_bytes", str(len(original))),
                       "original_cut": "true"}}
    if text:
        cut["text"] = text[:keep_text] + " …" if keep_text < len(text) else text
    return cut
