"""The assembler's state of one source as JSON: what is needed to carry on after a restart.

Per source: its open multiline blocks (one per prefix, with the merger's mode), the prefix it last
wrote under, the indent a copy put before all its lines, a held partial line (CRI ``P`` / docker
partial) with the arrival of its newest fragment, its timed lines that an untimed block may take the
time of (:mod:`streams.assemble.timebase`), the task fields its last records named, the
column-table header its next rows are read against (:mod:`streams.assemble.tables`), and what the
redactor has open over its events (a private key's lines to come: ``Redactor.source_state``).
The assemble worker writes the state of every source a turn touched to a compacted topic, in the
same Kafka transaction as the turn's outputs and raw offsets, and restores it when it takes over a
partition: a restarted or rebalanced worker resumes exactly where the last committed turn ended, so
nothing is emitted twice and no block is cut where it would not have been.

Pure: no Kafka here. JSON (not pickle): the topic holds data, never code.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from streams.assemble.lines import Output, RawLine, saved
from streams.assemble.partials import HeldLine
from streams.assemble.pipeline import Assembler
from streams.assemble.tables import Header
from streams.assemble.timebase import SourceTimes

VERSION = 1


def source_state(asm: Assembler, sid: str) -> bytes | None:
    """The state of ``sid`` as bytes, or None when it holds nothing (then the key is deleted).

    The source's timed lines and its task are state too: an untimed block after a restart (a bare
    traceback) takes their time and task, so a source that has either keeps its key with nothing open; so
    does one whose merger remembers its widths or indent (``MultilineMerger.remembers``).
    ``last_ts`` (the time furthest into the source) is what a worker that keeps no ``times`` reads."""
    opened = asm.merger._src.get(sid)
    partial = asm.joiner.held.get(sid)
    times = asm.builder.times.get(sid)
    task = asm.builder.last_task.get(sid)
    table = asm.builder.tables.headers.get(sid)
    upper = asm.builder.tables.upper.get(sid)
    secrets = asm.redact.source_state(sid)
    if not opened and partial is None and times is None and not task and table is None and upper is None \
            and secrets is None and not asm.merger.remembers(sid):
        return None
    doc: dict[str, Any] = {"v": VERSION, "sid": sid, **asm.merger.source_state(sid),
                           "last_ts": times.latest() if times is not None else None,
                           "times": times.to_dict() if times is not None else None, "last_task": task}
    if table is not None:
        doc["table"] = dataclasses.asdict(table)
    if upper is not None:
        doc["upper"] = upper
    if secrets is not None:
        doc["redact"] = secrets
    if partial is not None:
        doc["partial"] = {"parts": partial.parts, "first": saved(partial.first), "offset": partial.offset,
                          "size": partial.size, "seen": partial.seen_ms}
    return json.dumps(doc, separators=(",", ":")).encode()


def fitting_state(asm: Assembler, sid: str, limit: int) -> tuple[bytes | None, list[Output]]:
    """The state of ``sid`` as :func:`source_state` writes it, at most ``limit`` bytes, and the outputs
    it took to get there. A state over the limit (blocks open under a thousand prefixes, a partial line
    of a million escaped characters, a label map of megabytes on every held line) is one record the
    state topic refuses on every retry: the partition would stop for good. Such a source's open blocks
    and partial line are emitted as they stand instead (``Assembler.flush_source``), and what is left
    (its times, task and table header) is saved."""
    value = source_state(asm, sid)
    if value is None or len(value) <= limit:
        return value, []
    out = asm.flush_source(sid)
    return source_state(asm, sid), out


def restore_source(asm: Assembler, value: bytes) -> str:
    """Put a state written by :func:`source_state` back into ``asm``; returns the source id."""
    doc = json.loads(value)
    if doc.get("v") != VERSION:
        raise ValueError(f"assembler state version {doc.get('v')!r}, this worker reads {VERSION}")
    sid = doc["sid"]
    asm.merger.restore_source(sid, doc)
    if doc.get("times"):
        asm.builder.times[sid] = SourceTimes.from_dict(doc["times"])
    elif doc.get("last_ts") is not None:
        asm.builder.times[sid] = SourceTimes.carried(doc["last_ts"])
    if doc.get("last_task"):
        asm.builder.last_task[sid] = doc["last_task"]
    if doc.get("table"):
        asm.builder.tables.headers[sid] = Header(**doc["table"])
    if doc.get("upper"):
        asm.builder.tables.upper[sid] = doc["upper"]
    asm.redact.restore_source(sid, doc.get("redact"))
    if "partial" in doc:
        p = doc["partial"]
        # "seen" (the newest fragment's arrival, for the idle release) is absent from older states:
        # the first fragment's own time stands in for it.
        first = RawLine(**p["first"])
        seen = p.get("seen", first.ts_ms or 0)
        asm.joiner.held[sid] = HeldLine(p["parts"], first, p["offset"], p["size"], seen)
    return sid


def forget_source(asm: Assembler, sid: str) -> None:
    """A deleted key (tombstone): the source holds nothing."""
    asm.merger._src.pop(sid, None)
    asm.merger._last_key.pop(sid, None)
    asm.merger._shift.pop(sid, None)
    asm.joiner.drop(sid)
    asm.builder.times.pop(sid, None)
    asm.builder.last_task.pop(sid, None)
    asm.builder.tables.headers.pop(sid, None)
    asm.builder.tables.upper.pop(sid, None)
    asm.redact.forget_source(sid)


def state_key(partition: int, sid: str) -> bytes:
    return f"{partition}\x00{sid}".encode()


def sid_of_key(key: bytes) -> str:
    return key.decode().split("\x00", 1)[1]
