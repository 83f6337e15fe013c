"""The assemble stage as one pure object, plus the offline ``sluice parse`` mode.

API (what the Faust agent and the CLI call)::

    asm = Assembler(schema_lookup=None, router=None, redactor=None,
                    max_lines=1000, max_bytes=512 * 1024, idle_timeout_ms=5000)
    asm.feed(record) -> list[Output]          # record: RawRecord or anything with
                                              # .topic .partition .offset .key .value .timestamp_ms
    asm.flush_idle(now_ms) -> list[Output]    # emit blocks idle for idle_timeout_ms (stream or wall time)
    asm.flush_all() -> list[Output]           # end of input / planned shutdown
    asm.oldest_open_offset() -> int | None    # first Kafka offset still needed (open block or partial)
    asm.committable_offset() -> int | None    # the offset to commit: everything below it is emitted

    parse_files(paths, labels=None, router=None, default_ts_ms=None) -> Iterator[dict]

Fields (time, level, task, step metrics, source metadata, bounds) are built by
:class:`streams.assemble.fields.EventBuilder`; ``limits`` and ``metadata`` configure it.

``Output(kind, topic, key, value)``: ``kind`` is ``"event"`` (value: a ``sluice.v1.LogEvent`` dict,
topic ``logs.events.<project>``), ``"metric"`` (a ``sluice.v1.MetricPoint`` dict, ``logs.metrics``)
or ``"dead_letter"`` (a ``sluice.v1.DeadLetter`` dict, ``logs.dlq``). ``key`` is the event id (or
the original key for a dead letter), as bytes.

Use one Assembler per raw-topic partition: offsets are only comparable within a partition. Commit
only offsets below ``committable_offset()`` after the outputs are acknowledged; after a crash,
resume from the committed offset and the same lines give the same events and event ids.
Timestamps come from the records, never from a clock, so a replay is deterministic as long as
``flush_idle`` is driven by stream time (e.g. the newest record timestamp seen).
"""

from __future__ import annotations

import heapq
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from streams.assemble.decode import PartialJoiner, SchemaLookup
from streams.assemble.engine import decoder
from streams.assemble.fields import METRICS_TOPIC, EventBuilder, FieldLimits
from streams.assemble.lines import Block, Output, RawLine
from streams.assemble.merger import MultilineMerger
from streams.assemble.metadata import SourceMetadata
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter
from streams.errors import DecodeError

__all__ = ["DLQ_TOPIC", "METRICS_TOPIC", "Assembler", "Output", "RawRecord", "parse_files"]

DLQ_TOPIC = "logs.dlq"


@dataclass(frozen=True, slots=True)
class RawRecord:
    """A record of ``logs.raw`` as the core needs it (the agent adapts Faust's event to this)."""

    topic: str
    partition: int
    offset: int
    value: bytes | None
    key: bytes | None = None
    timestamp_ms: int = 0


def key_source_id(key: bytes) -> str:
    """A record key as a source id. A key that is not UTF-8 (the collector's 16-byte resource hash)
    keeps its bytes as escapes: replacing them would make different keys one source."""
    return key.decode("utf-8", "backslashreplace")


def source_id(key: bytes | None, line: RawLine) -> str:
    """The identity of one ordered stream of lines: the Kafka key, else the source fields."""
    if key:
        return key_source_id(key)
    s = line.source
    return "|".join(str(s.get(k) or "") for k in ("host", "namespace", "pod", "container", "file", "stream"))


class Assembler:
    """Decode, join partials, merge, parse, classify, split metrics, redact and route."""

    def __init__(self, schema_lookup: SchemaLookup | None = None, router: ProjectRouter | None = None,
                 *, redactor: Redactor | None = None, max_lines: int = 1000, max_bytes: int = 512 * 1024,
                 idle_timeout_ms: int = 5000, max_partial_bytes: int = 1 << 20,
                 limits: FieldLimits | None = None, metadata: SourceMetadata | None = None,
                 on_new_source: Callable[[str, int], None] | None = None, engine: str | None = None) -> None:
        self.schema_lookup = schema_lookup
        self.decode = decoder(engine)  # native where built (streams/assemble/engine.py)
        self.router = router or ProjectRouter()
        self.redact = redactor or Redactor()
        self.builder = EventBuilder(self.router, self.redact, limits=limits, metadata=metadata)
        self.merger = MultilineMerger(max_lines, max_bytes, idle_timeout_ms)
        self.joiner = PartialJoiner(max_partial_bytes)
        self.topic = ""
        self.partition = 0
        self._last_offset: int | None = None
        self._last_ts = self.builder.last_ts  # source -> time of its last timed event (state.py keeps it)
        self._sid_of_key: dict[bytes, str] = {}
        # Called with (source id, partition) the first time this assembler sees a source: the worker
        # notices a source that arrives on several partitions (streams/assemble/spread.py).
        self.on_new_source = on_new_source
        self._keyless_sids: set[str] = set()
        self.dirty: set[str] = set()  # sources whose state changed since take_dirty() (see state.py)

    # -- feeding ---------------------------------------------------------------------------
    def feed(self, record) -> list[Output]:
        self.topic, self.partition = record.topic, record.partition
        self._last_offset = record.offset
        try:
            lines = self.decode(record.value, record.key, self.schema_lookup)
        except DecodeError as exc:
            return [self._dead_letter(record, str(exc), exc.error_type)]
        except Exception as exc:  # noqa: BLE001 - never let one record stop the partition: it goes to the DLQ
            return [self._dead_letter(record, f"unexpected {type(exc).__name__}: {exc}", "internal")]
        out: list[Output] = []
        ts = record.timestamp_ms
        key = record.key
        for decoded in lines:
            if key and key.__class__ is bytes:  # the key names the source: decode it once per key
                sid = self._sid_of_key.get(key)
                if sid is None:
                    sid = self._new_key(key, record.partition)
            else:
                sid = self._keyless_sid(key, decoded, record.partition)
            self.dirty.add(sid)
            if decoded.partial or self.joiner._open:
                joined = self.joiner.push(sid, decoded, record.offset)
                if joined is None:
                    continue
                blocks = self.merger.push(sid, joined[0], joined[1], ts)
            else:
                blocks = self.merger.push(sid, decoded, record.offset, ts)
            for b in blocks:
                out.append(self._output(b))
        return out

    def _new_key(self, key: bytes, partition: int) -> str:
        sid = key_source_id(key)
        if len(self._sid_of_key) < 10000:
            self._sid_of_key[key] = sid
        if self.on_new_source is not None:
            self.on_new_source(sid, partition)
        return sid

    def _keyless_sid(self, key: bytes | None, line: RawLine, partition: int) -> str:
        sid = source_id(key, line)
        if self.on_new_source is not None and sid not in self._keyless_sids:
            if len(self._keyless_sids) >= 10000:
                self._keyless_sids.clear()
            self._keyless_sids.add(sid)
            self.on_new_source(sid, partition)
        return sid

    def flush_idle(self, now_ms: int) -> list[Output]:
        blocks = self.merger.flush_idle(now_ms)
        self.dirty.update(b.source_id for b in blocks)
        return [self._output(b) for b in blocks]

    def take_dirty(self) -> set[str]:
        """Sources whose state changed since the last call."""
        out, self.dirty = self.dirty, set()
        return out

    def flush_all(self) -> list[Output]:
        blocks = []
        for sid, line, off in self.joiner.drain():
            # A held partial can close the block before it: keep what push returns (found by fuzzing).
            blocks += self.merger.push(sid, line, off, line.ts_ms or 0)
        blocks += self.merger.flush_all()
        self.dirty.update(b.source_id for b in blocks)
        return [self._output(b) for b in blocks]

    def oldest_open_offset(self) -> int | None:
        a = self.merger.oldest_open_offset()
        b = self.joiner.oldest_offset()
        return b if a is None else a if b is None else min(a, b)

    def committable_offset(self) -> int | None:
        """Kafka's "next offset to read": all records below it are fully emitted."""
        oldest = self.oldest_open_offset()
        if oldest is not None:
            return oldest
        return None if self._last_offset is None else self._last_offset + 1

    # -- building outputs ------------------------------------------------------------------
    def _dead_letter(self, record, error: str, error_type: str) -> Output:
        where = f"{record.topic}/{record.partition}@{record.offset}"
        return self.redact.output(Output("dead_letter", DLQ_TOPIC, record.key, {
            "original": record.value or b"", "key": record.key, "topic": record.topic,
            "partition": record.partition, "offset": record.offset, "stage": "assemble",
            "error": f"{where}: {error}", "error_type": error_type, "timestamp": record.timestamp_ms,
            "attempts": 1, "headers": {},
        }))

    def _output(self, b: Block) -> Output:
        if b.nbytes > self.merger.max_bytes or len(b.texts[-1]) > self.merger.max_bytes:
            b.texts = self.redact(b.message).split("\n")  # before the cut: a cut token matches no rule
            cap_block(b, self.merger.max_bytes)
        return self.redact.output(self.builder.build(b, self.topic, self.partition))


def cap_block(b: Block, max_chars: int) -> None:
    """Cut a block (or one huge line: a 10 MB tqdm redraw, a JSON blob) to ``max_chars``, flagged.

    The merger closes a block once it reaches the limit, but the line that crossed it can be of
    any length; the event must not be.
    """
    if b.nbytes <= max_chars and len(b.texts[-1]) <= max_chars:
        return
    kept: list[str] = []
    room = max_chars
    for text in b.texts:
        if len(text) >= room:
            kept.append(text[:room])
            break
        kept.append(text)
        room -= len(text) + 1
    if sum(len(t) for t in kept) < sum(len(t) for t in b.texts):
        b.texts = kept
        b.truncated = True


def _file_lines(path: Path) -> Iterator[bytes]:
    """The file's lines; ``-`` is standard input."""
    data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return iter(lines)


def parse_files(  # noqa: PLR0912 - one straight loop over lines; splitting it would hide the order
        paths: Iterable[str | os.PathLike], labels: dict | None = None,
                router: ProjectRouter | None = None, default_ts_ms: int | None = None,
                include_metrics: bool = True, limits: FieldLimits | None = None,
                metadata: SourceMetadata | None = None, engine: str | None = None, **merger_opts) -> Iterator[dict]:
    """Offline mode (``sluice parse FILE...``): yield event dicts (and metric points) per file.

    Each file is one source (``-``: standard input); envelopes (JSON, CRI) and plain text are detected
    per line. Kafka coordinates are faked: topic ``"file"``, partition 0, offset = 1-based line number. Times
    missing from a line default to ``default_ts_ms`` or else the file's modification time.
    Metric points (step-metric lines) are recognisable by their ``metrics`` key. A line's own time is
    believed however old unless ``limits`` say otherwise (``FieldLimits.offline()``).
    """
    router = router or ProjectRouter()
    redact = Redactor()
    limits = limits or FieldLimits.offline()
    decode_record = decoder(engine)
    for arg in paths:
        path = Path(arg)
        if default_ts_ms is None and str(path) == "-":
            raise ValueError("standard input has no modification time: pass default_ts_ms")
        ts = default_ts_ms if default_ts_ms is not None else int(path.stat().st_mtime * 1000)
        merger = MultilineMerger(**merger_opts)
        joiner = PartialJoiner()
        sid = str(path)
        src = {"host": None, "namespace": None, "pod": None, "container": None, "file": str(path),
               "stream": None, "node_role": None, "rank": None}
        lab = dict(labels or {})
        held: list[tuple[int, int, int, Block]] = []  # heap: emit in file order, not closing order
        builder = EventBuilder(router, redact, limits=limits, metadata=metadata)
        seq = 0
        for no, raw in enumerate(_file_lines(path), 1):
            if raw.strip():
                try:
                    lines = decode_record(raw, None, None)
                except DecodeError:
                    lines = [RawLine(raw.decode("utf-8", "replace"))]
            else:
                lines = [RawLine("")]
            for decoded in lines:
                line = RawLine(decoded.text, None, decoded.ts_ms, src if not any(decoded.source.values()) else
                               {**decoded.source, "file": str(path)}, {**lab, **decoded.labels}, decoded.partial, 0)
                off = no
                if line.partial or joiner._open:
                    j = joiner.push(sid, line, no)
                    if j is None:
                        continue
                    line, off = j
                for b in merger.push(sid, line, off, ts):
                    heapq.heappush(held, (b.first_offset, b.first_index, seq, b))
                    seq += 1
            if held:
                oldest = merger.oldest_open_offset()
                while held and (oldest is None or held[0][0] < oldest):
                    yield from _emit(heapq.heappop(held)[3], builder, include_metrics)
        for s, line, off in joiner.drain():
            for b in merger.push(s, line, off, ts):
                heapq.heappush(held, (b.first_offset, b.first_index, seq, b))
                seq += 1
        for b in merger.flush_all():
            heapq.heappush(held, (b.first_offset, b.first_index, seq, b))
            seq += 1
        while held:
            yield from _emit(heapq.heappop(held)[3], builder, include_metrics)


def _emit(b: Block, builder: EventBuilder, include_metrics: bool) -> Iterator[dict]:
    out = builder.redact.output(builder.build(b, "file", 0))
    if out.kind == "event" or include_metrics:
        yield out.value
