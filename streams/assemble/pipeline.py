"""The assemble stage as one pure object, plus the offline ``sluice parse`` mode.

API (what the Faust agent and the CLI call)::

    asm = Assembler(schema_lookup=None, router=None, redactor=None,
                    max_lines=1000, max_bytes=512 * 1024, idle_timeout_ms=5000,
                    encode=None, max_output_bytes=1 << 62, topic="", partition=0,
                    limits=None, metadata=None, on_new_source=None)
    asm.feed(record) -> list[Output]          # record: RawRecord or anything with
                                              # .topic .partition .offset .key .value .timestamp_ms
    asm.flush_idle(now_ms) -> list[Output]    # emit blocks idle for idle_timeout_ms (stream or wall time)
    asm.flush_all() -> list[Output]           # end of input / planned shutdown
    asm.oldest_open_offset() -> int | None    # first Kafka offset still needed (open block or partial)
    asm.committable_offset() -> int | None    # the offset to commit: everything below it is emitted

    parse_files(paths, labels=None, router=None, default_ts_ms=None) -> Iterator[dict]

Fields (time, level, task, step metrics, source metadata, bounds) are built by
:class:`streams.assemble.fields.EventBuilder`; ``limits`` and ``metadata`` configure it.

``Output(kind, topic, key, value, body)``: ``kind`` is ``"event"`` (value: a ``sluice.v1.LogEvent`` dict,
topic ``logs.events.<project>``), ``"metric"`` (a ``sluice.v1.MetricPoint`` dict, ``logs.metrics``)
or ``"dead_letter"`` (a ``sluice.v1.DeadLetter`` dict, ``logs.dlq``). ``key`` is the event id (or
the original key for a dead letter), as bytes; ``body`` is the value's Avro body when the Assembler
was given ``encode`` (the worker's body writer), else None. No exception leaves ``feed``,
``flush_idle`` or ``flush_all``: a failure costs one dead letter (see ``Assembler``).

Use one Assembler per raw-topic partition: offsets are only comparable within a partition. Commit
only offsets below ``committable_offset()`` after the outputs are acknowledged; after a crash,
resume from the committed offset and the same lines give the same events and event ids.
Timestamps come from the records, never from a clock, so a replay is deterministic as long as
``flush_idle`` is driven by stream time (e.g. the newest record timestamp seen).
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from streams.assemble import failures as F
from streams.assemble.decode import SchemaLookup
from streams.assemble.engine import Decode, decoder
from streams.assemble.fields import METRICS_TOPIC, EventBuilder, FieldLimits
from streams.assemble.lines import Block, Output, RawLine, utf8_len, utf8_prefix
from streams.assemble.merger import MultilineMerger
from streams.assemble.metadata import SourceMetadata
from streams.assemble.partials import PartialJoiner, starts_cut
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter
from streams.assemble.times import MAX_MS
from streams.errors import DecodeError, DependencyFailure, SluiceError, TooManyLines
from streams.widetext import HEAD, HEAD_BYTES, WideNewlines

__all__ = ["DLQ_TOPIC", "METRICS_TOPIC", "Assembler", "Output", "RawRecord", "parse_files"]

DLQ_TOPIC = "logs.dlq"
# Lines one record may bring (assemble.max_record_lines). Each line costs tens of microseconds of
# merging, parsing and redaction, so a record of a million tiny lines (or of binary cut into lines at
# every 0x0A) would hold its partition up for tens of seconds; the shipper sends 5,000 at most
# (ship.max_batch_lines) and the OpenTelemetry Collector's batch processor 8,192 by default.
MAX_RECORD_LINES = 10_000


# First bytes of the formats whose line count is not the count of their 0x0A bytes (Avro, JSON, protobuf):
# any other record is text, lines at least as many as its line breaks, counted before it is decoded.
NOT_COUNTED_BY_NEWLINES = frozenset(b"\x00{\n")


def too_many_lines(n: int, limit: int) -> F.Failure:
    return F.known("decode", f"a record of {n:,} lines or more, over assemble.max_record_lines={limit:,}: not read "
                   "(its per-line work would hold up the partition); split the producer's records (sluice ship: "
                   "ship.max_batch_lines) or raise the limit, then re-drive this letter", "too_many_lines")


def record_time(ts_ms: int) -> int:
    """A record's Kafka timestamp as the time its lines arrive: clamped between the epoch and the last
    millisecond of year 9999. A producer may stamp any long; past 9999 no event body reads back as a
    date, and a block stamped near 2**62 is never quiet long enough for any idle flush, flush_all included."""
    if ts_ms.__class__ is not int:
        return 0
    return 0 if ts_ms < 0 else MAX_MS if ts_ms > MAX_MS else ts_ms


# Labels a line may carry, and the longest label name (Kubernetes': a 253-character prefix, "/", 63
# characters). Every event of the line carries them and each is redacted, tens of microseconds a label:
# an agent's envelope with 100,000 labels cost 1.8 CPU-seconds an event, its body near a megabyte.
MAX_LABELS = 128
MAX_LABEL_NAME = 317
# The characters of a line's label names and values in all. Each of its events carries every label: 127 labels
# of a kilobyte on a record of 8,000 short lines (260 KB) made 960 MB of events and 7 CPU-seconds. Kubernetes'
# labels are 63 characters a value; a pod's labels and short annotations fill a few kilobytes.
MAX_LABEL_CHARS = 8 * 1024
LABELS_DROPPED = "sluice.labels_dropped"  # how many a line had past the bounds (names too long, too many, too big)
# The longest source field (host, namespace, pod, container, file, ...) or label value a line keeps whole;
# a longer one keeps its start and a hash of the whole (:func:`bounded_text`), so two sources that differ
# only past the cut stay two. Kubernetes' names are 253 characters at most and a real path is rarely
# near this; an envelope's megabyte pod name was a megabyte in every event of its source.
MAX_SOURCE_VALUE = 1024


def bounded_text(text: str, limit: int) -> str:
    """``text``, or when it is longer than ``limit`` characters its start and a hash of the whole,
    ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    return _cut(text, text.encode("utf-8", "surrogatepass"), limit)


def _cut(head: str, whole: bytes, limit: int) -> str:
    """The start of ``head`` and a hash of ``whole``, ``limit`` characters in all."""
    return f"{head[:limit - 17]}~{hashlib.blake2b(whole, digest_size=8).hexdigest()}"


def bounded_labels(lines: list[RawLine]) -> list[RawLine]:
    """``lines`` with at most ``MAX_LABELS`` labels each (the first ones), none named longer than
    ``MAX_LABEL_NAME``, and no source field or label value longer than ``MAX_SOURCE_VALUE``; a line that
    had too many labels says how many it lost under ``LABELS_DROPPED``."""
    out = lines
    done: dict[int, dict] = {}  # the lines of a batch share one labels dict and one source dict: bound each once
    for i, ln in enumerate(lines):
        labels, source = ln.labels, ln.source
        if labels:
            bounded = done.get(id(labels))
            if bounded is None:
                bounded = done[id(labels)] = _bounded(labels)
        else:
            bounded = labels
        src = done.get(id(source))
        if src is None:
            src = done[id(source)] = _bounded_values(source)
        if bounded is not labels or src is not source:
            if out is lines:
                out = list(lines)
            out[i] = replace(ln, labels=bounded, source=src)
    return out


def _label_chars(labels: dict) -> int:
    return sum(len(k) + (len(v) if v.__class__ is str else 0) for k, v in labels.items())


def _bounded(labels: dict) -> dict:
    if len(labels) <= MAX_LABELS and max(map(len, labels)) <= MAX_LABEL_NAME:
        fields = _bounded_values(labels)
        if _label_chars(fields) <= MAX_LABEL_CHARS:
            return fields
    # The first ones that fit: a later short label (a project's) is still kept after a long annotation.
    kept: dict = {}
    room = MAX_LABEL_CHARS - len(LABELS_DROPPED) - 20  # (and the count of those dropped)
    for k, v in labels.items():
        if len(k) > MAX_LABEL_NAME or k == LABELS_DROPPED:
            continue
        value = bounded_text(v, MAX_SOURCE_VALUE) if v.__class__ is str else v
        size = len(k) + (len(value) if value.__class__ is str else 0)
        if size <= room:
            kept[k] = value
            room -= size
            if len(kept) == MAX_LABELS - 1:
                break
    kept[LABELS_DROPPED] = str(len(labels) - len(kept))
    return kept


def _bounded_values(fields: dict) -> dict:
    """``fields`` (a source or labels), each string value at most ``MAX_SOURCE_VALUE`` characters."""
    for v in fields.values():
        if v.__class__ is str and len(v) > MAX_SOURCE_VALUE:
            break
    else:
        return fields
    return {k: bounded_text(v, MAX_SOURCE_VALUE) if v.__class__ is str else v for k, v in fields.items()}


@dataclass(frozen=True, slots=True)
class RawRecord:
    """A record of ``logs.raw`` as the core needs it (the agent adapts Faust's event to this)."""

    topic: str
    partition: int
    offset: int
    value: bytes | None
    key: bytes | None = None
    timestamp_ms: int = 0


# A source id longer than this keeps its start and a hash of the whole. A producer may send a key of a
# megabyte: as it stood, the id would be held once per source in every per-source table (tens of GB over
# the key cache's 10,000 sources), and the saved state would be over the state topic's record limit, its
# id being both the record's key and in its body, JSON-escaped.
MAX_SID_CHARS = 512


def bounded_sid(sid: str) -> str:
    return bounded_text(sid, MAX_SID_CHARS)


def key_source_id(key: bytes) -> str:
    """A record key as a source id. A key that is not UTF-8 (the collector's 16-byte resource hash)
    keeps its bytes as escapes: replacing them would make different keys one source."""
    if len(key) > MAX_SID_CHARS:  # its start, and a hash of all its bytes
        return _cut(key[:MAX_SID_CHARS].decode("utf-8", "backslashreplace"), key, MAX_SID_CHARS)
    return key.decode("utf-8", "backslashreplace")


def source_id(key: bytes | None, line: RawLine) -> str:
    """The identity of one ordered stream of lines: the Kafka key, else the source fields."""
    if key:
        return key_source_id(key)
    s = line.source
    sid = "|".join(str(s.get(k) or "") for k in ("host", "namespace", "pod", "container", "file", "stream"))
    if not sid.isascii():  # a JSON envelope's "\ud800" is a lone surrogate: no key or id can hold one
        sid = sid.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return bounded_sid(sid)


class Assembler:
    """Decode, join partials, merge, parse, classify, split metrics, redact, route (and encode).

    Per-record isolation: an exception while handling one record never leaves ``feed``,
    ``flush_idle`` or ``flush_all``. It becomes one dead letter (:mod:`streams.assemble.failures`):
    the record, when decoding it failed; the source's open block, when building or encoding the
    block's output failed; the source's whole held state (its open blocks, a held partial line) and the
    failing line, when joining or merging failed, since that state may be half updated. Other sources
    are untouched.

    ``encode(output) -> bytes``, when given, writes each output's Avro body (``Output.body``) as part
    of the same guarded step: an output that cannot be encoded, or whose body is over
    ``max_output_bytes``, is the dead letter of its block instead.
    """

    def __init__(self, schema_lookup: SchemaLookup | None = None, router: ProjectRouter | None = None,
                 *, redactor: Redactor | None = None, max_lines: int = 1000, max_bytes: int = 512 * 1024,
                 idle_timeout_ms: int = 5000, max_partial_bytes: int = 1 << 20,
                 encode: Callable[[Output], bytes] | None = None, max_output_bytes: int = 1 << 62,
                 topic: str = "", partition: int = 0,
                 limits: FieldLimits | None = None, metadata: SourceMetadata | None = None,
                 on_new_source: Callable[[str, int], None] | None = None, engine: str | None = None,
                 max_record_lines: int = MAX_RECORD_LINES) -> None:
        self.schema_lookup = schema_lookup
        self.max_record_lines = max_record_lines
        self.decode = decoder(engine)  # native where built (streams/assemble/engine.py)
        self.router = router or ProjectRouter()
        self.redact = redactor or Redactor()
        self.builder = EventBuilder(self.router, self.redact, limits=limits, metadata=metadata)
        self.merger = MultilineMerger(max_lines, max_bytes, idle_timeout_ms)
        self.joiner = PartialJoiner(max_partial_bytes)
        self.encode = encode
        self.max_output_bytes = max_output_bytes
        # The raw partition (set again by each record): blocks restored after a restart and flushed
        # before any record is read must still name it, in their ids and coordinates.
        self.topic = topic
        self.partition = partition
        self._last_offset: int | None = None
        self._sid_of_key: dict[bytes, str] = {}
        # Called with (source id, partition) the first time this assembler sees a source: the worker
        # notices a source that arrives on several partitions (streams/assemble/spread.py).
        self.on_new_source = on_new_source
        self._keyless_sids: set[str] = set()
        self.dirty: set[str] = set()  # sources whose state changed since take_dirty() (see state.py)
        self.flushed_sources = 0  # sources flushed because their state was too large to save (never reset)

    # -- feeding ---------------------------------------------------------------------------
    def feed(self, record) -> list[Output]:
        self.topic, self.partition = record.topic, record.partition
        self._last_offset = record.offset
        lines = self._read(record)
        if isinstance(lines, Output):
            return [lines]
        out: list[Output] = []
        ts = record_time(record.timestamp_ms)
        key = record.key
        for decoded in lines:
            if key and key.__class__ is bytes:  # the key names the source: decode it once per key
                sid = self._sid_of_key.get(key)
                if sid is None:
                    sid = self._new_key(key, record.partition)
            else:
                sid = self._keyless_sid(key, decoded, record.partition)
            self.dirty.add(sid)
            line, offset = decoded, record.offset
            try:
                if decoded.partial or self.joiner.held or starts_cut(decoded.text):  # a dict: no call per line
                    joined = self.joiner.push(sid, decoded, record.offset, ts)
                    if joined is None:
                        continue
                    line, offset = joined
                blocks = self.merger.push(sid, line, offset, ts)
            except Exception as exc:  # noqa: BLE001 - the source's state may be half updated: drop it, letter it
                out.append(self._source_letter(sid, line, offset, record, len(lines), F.internal(exc, "merge")))
                continue
            for b in blocks:
                out.append(self._output(b))
        return out

    def _read(self, record) -> list[RawLine] | Output:
        """The record's lines, or its dead letter."""
        value = record.value
        if value and value[0] not in NOT_COUNTED_BY_NEWLINES:
            newlines = value.count(b"\n")
            if newlines > self.max_record_lines:
                return self._record_letter(record, too_many_lines(newlines, self.max_record_lines))
        try:
            lines = self.decode(value, record.key, self.schema_lookup, self.max_record_lines)
        except TooManyLines as exc:  # counted while decoding (JSON escapes, OTLP log records, Avro items)
            return self._record_letter(record, too_many_lines(exc.lines, self.max_record_lines))
        except DecodeError as exc:
            return self._record_letter(record, F.known("decode", str(exc), exc.error_type))
        except DependencyFailure:  # the registry, not the record: the worker waits and feeds it again
            raise
        except Exception as exc:  # noqa: BLE001 - never let one record stop the partition: it goes to the DLQ
            return self._record_letter(record, F.internal(exc, "decode"))
        if len(lines) > self.max_record_lines:
            return self._record_letter(record, too_many_lines(len(lines), self.max_record_lines))
        return bounded_labels(lines)

    def _new_key(self, key: bytes, partition: int) -> str:
        sid = key_source_id(key)
        if len(key) > MAX_SID_CHARS:  # not cached: the cache would hold the whole key; hashed again each time
            self._seen(sid, partition)
            return sid
        if len(self._sid_of_key) < 10000:
            self._sid_of_key[key] = sid
        if self.on_new_source is not None:
            self.on_new_source(sid, partition)
        return sid

    def _keyless_sid(self, key: bytes | None, line: RawLine, partition: int) -> str:
        sid = source_id(key, line)
        self._seen(sid, partition)
        return sid

    def _seen(self, sid: str, partition: int) -> None:
        """``on_new_source`` for a source that no key cache remembers."""
        if self.on_new_source is not None and sid not in self._keyless_sids:
            if len(self._keyless_sids) >= 10000:
                self._keyless_sids.clear()
            self._keyless_sids.add(sid)
            self.on_new_source(sid, partition)

    def flush_idle(self, now_ms: int) -> list[Output]:
        """Blocks quiet for ``idle_timeout_ms``, and held partial lines as quiet (a container that died
        never writes the end of its last line)."""
        out = self._release(self.joiner.due(now_ms, self.merger.idle_timeout_ms)) if self.joiner.held else []
        blocks = self.merger.flush_idle(now_ms)
        self.dirty.update(b.source_id for b in blocks)
        if self.merger.forgotten:
            self.dirty |= self.merger.forgotten
            self.merger.forgotten = set()
        out += [self._output(b) for b in blocks]
        return out

    def flush_source(self, sid: str) -> list[Output]:
        """Emit everything ``sid`` holds: its held partial line as a whole line, then its open blocks.
        What the worker does with a source whose saved state would not fit in one Kafka record
        (:func:`streams.assemble.state.fitting_state`); counted in ``flushed_sources``."""
        self.flushed_sources += 1
        self.dirty.add(sid)
        partial = self.joiner.held.pop(sid, None)
        out = self._release([(sid, partial.line(), partial.offset, partial.seen_ms)]) if partial is not None else []
        out += [self._output(b) for b in self.merger.flush_source(sid)]
        return out

    def take_dirty(self) -> set[str]:
        """Sources whose state changed since the last call."""
        out, self.dirty = self.dirty, set()
        return out

    def flush_all(self) -> list[Output]:
        # A held partial can close the block before it: keep what push returns (found by fuzzing).
        out = self._release([(sid, line, off, line.ts_ms or 0) for sid, line, off in self.joiner.drain()])
        blocks = self.merger.flush_all()
        self.dirty.update(b.source_id for b in blocks)
        out += [self._output(b) for b in blocks]
        return out

    def _release(self, held: list[tuple[str, RawLine, int, int]]) -> list[Output]:
        """Partial lines given up on, merged as whole lines (arriving when their last fragment did)."""
        out: list[Output] = []
        for sid, line, off, seen_ms in held:
            self.dirty.add(sid)
            try:
                blocks = self.merger.push(sid, line, off, seen_ms)
            except Exception as exc:  # noqa: BLE001 - as in feed: the source's state goes to the DLQ
                out.append(self._source_letter(sid, line, off, None, 1, F.internal(exc, "merge")))
                continue
            out += [self._output(b) for b in blocks]
        return out

    def oldest_open_offset(self) -> int | None:
        a = self.merger.oldest_open_offset()
        b = self.joiner.oldest_offset()
        return b if a is None else a if b is None else min(a, b)

    def newest_ts(self) -> int:
        """The newest arrival time among open blocks and held partial lines (0 when none)."""
        return max([self.merger.newest_ts(), *(h.seen_ms for h in self.joiner.held.values())])

    def committable_offset(self) -> int | None:
        """Kafka's "next offset to read": all records below it are fully emitted."""
        oldest = self.oldest_open_offset()
        if oldest is not None:
            return oldest
        return None if self._last_offset is None else self._last_offset + 1

    # -- building outputs ------------------------------------------------------------------
    def _output(self, b: Block) -> Output:
        try:
            if b.nbytes > self.merger.max_bytes or utf8_len(b.texts[-1]) > self.merger.max_bytes:
                b.texts = self.redact(b.message).split("\n")  # before the cut: a cut token matches no rule
                cap_block(b, self.merger.max_bytes)
            out = self.redact.output(self.builder.build(b, self.topic, self.partition), b.source_id)
        except Exception as exc:  # noqa: BLE001 - one block's failure is that block's dead letter
            return self._block_letter(b, F.internal(exc, "build"))
        if self.encode is None:
            return out
        try:
            body = self.encode(out)
        except Exception as exc:  # noqa: BLE001 - as above, for the Avro body
            return self._block_letter(b, F.internal(exc, "encode"))
        if len(body) > self.max_output_bytes:
            return self._block_letter(b, F.known("encode", f"its {out.kind} encodes to {len(body):,} bytes, over "
                                                 f"the {self.max_output_bytes:,}-byte message limit", "too_large"))
        return Output(out.kind, out.topic, out.key, out.value, body)

    def _where(self, offset: int) -> str:
        return f"{self.topic}/{self.partition}@{offset}"

    def _record_letter(self, record, failure: F.Failure) -> Output:
        return self._letter(F.letter(record.value or b"", record.key, record.topic, record.partition, record.offset,
                                     f"{record.topic}/{record.partition}@{record.offset}", failure,
                                     record.timestamp_ms))

    def _block_letter(self, b: Block, failure: F.Failure) -> Output:
        return self._letter(F.block_letter(b, self.topic, self.partition, self._where(b.first_offset), failure))

    def _source_letter(self, sid: str, line: RawLine, offset: int, record, record_lines: int,
                       failure: F.Failure) -> Output:
        """Joining or merging ``line`` failed: the source's held state and the line, as one letter."""
        self.dirty.add(sid)
        blocks = self.merger.drop_source(sid)
        partial = self.joiner.drop(sid)
        texts = [t for b in blocks for t in b.texts]
        first = min([offset, *(b.first_offset for b in blocks), *([partial[1]] if partial else [])])
        if partial is not None:
            texts.append(partial[0].text)
        if not F.holds_line(blocks, line.text, offset):
            texts.append(line.text)
        if record is not None and not blocks and partial is None and record_lines == 1 and offset == record.offset:
            original, kind, ts = record.value or b"", "record", record.timestamp_ms  # nothing else held: as read
        else:
            original, kind, ts = F.text_bytes(texts), "lines", line.ts_ms or (record.timestamp_ms if record else 0)
        key = record.key if record is not None and record.key else sid.encode("utf-8", "surrogatepass")
        last = record.offset if record is not None else offset
        return self._letter(F.letter(original, key, self.topic, self.partition, first, self._where(first), failure,
                                     ts, {"original": kind, "lines": str(len(texts)), "last_offset": str(last)}))

    def _letter(self, value: dict) -> Output:
        """A dead letter Output, its error and readable text redacted, encoded when the Assembler
        encodes (cut to fit the message limit)."""
        value = F.redacted(value, self.redact)
        out = Output("dead_letter", DLQ_TOPIC, value["key"], value)
        if self.encode is None:
            return out
        try:
            body = self.encode(out)
        except Exception as exc:  # noqa: BLE001 - the letter of a letter would fail alike: keep what surely encodes
            value = F.bare(value, exc)
            out = Output("dead_letter", DLQ_TOPIC, value["key"], value)
            body = self.encode(out)
        for _ in range(3):  # the cut is computed from one encoding: check it, and cut again if need be
            if len(body) <= self.max_output_bytes:
                break
            value = F.cut_to_fit(value, len(body), self.max_output_bytes)
            out = Output("dead_letter", DLQ_TOPIC, value["key"], value)
            body = self.encode(out)
        return Output("dead_letter", DLQ_TOPIC, value["key"], value, body)


def cap_block(b: Block, max_bytes: int) -> None:
    """Cut a block (or one huge line: a 10 MB tqdm redraw, a JSON blob) to ``max_bytes`` of UTF-8, flagged.

    The merger closes a block once it reaches the limit, but the line that crossed it can be of
    any length; the event must not be. Bytes, not characters: a line of CJK text or emoji is up to
    four times its length on Kafka, and the topics' limit is in bytes.
    """
    if b.nbytes <= max_bytes and utf8_len(b.texts[-1]) <= max_bytes:
        return
    kept: list[str] = []
    room = max_bytes
    for text in b.texts:
        size = utf8_len(text)
        if size >= room:
            kept.append(utf8_prefix(text, room))
            break
        kept.append(text)
        room -= size + 1
    if len(kept) < len(b.texts) or kept[-1] != b.texts[len(kept) - 1]:
        b.texts = kept
        b.truncated = True
        b.nbytes = sum(utf8_len(t) + 1 for t in kept) - 1


# Decode errors that, in a file, only mean "not an envelope": the line is text. JSON past the limits
# is a dead letter, as in the worker.
TEXT_IN_FILES = frozenset(("empty_record", "schema_not_found", "corrupt_avro", "undecodable"))


READ_BYTES = 1 << 20  # bytes read at a time while skipping the rest of an over-long line


def _file_lines(path: Path, max_line_bytes: int) -> Iterator[tuple[bytes, bool, int]]:
    """The file's lines, whether each was cut, and how many 0x0A bytes it ends at (one, but in a UTF-16 or UTF-32
    file, where a character may hold a 0x0A byte: ``widetext.WideNewlines``); ``-`` is standard input. The file is
    read a line at a time, so memory stays bounded by ``max_line_bytes`` whatever the file or its longest line."""
    limit = max_line_bytes + 1
    try:
        stream = sys.stdin.buffer if str(path) == "-" else path.open("rb")
        wide = WideNewlines(_head(stream))
    except OSError as exc:
        raise SluiceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        if wide.width:
            yield from _wide_lines(stream, wide, max_line_bytes)
            return
        while raw := stream.readline(limit):
            if raw.endswith(b"\n"):
                yield raw[:-1], False, 1
            elif len(raw) <= max_line_bytes:
                yield raw, False, 1  # the last line, without its newline
            else:
                yield (*_cut_line(stream, raw, max_line_bytes), 1)
    except OSError as exc:
        raise SluiceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _wide_lines(stream, wide: WideNewlines, max_line_bytes: int) -> Iterator[tuple[bytes, bool, int]]:
    """A UTF-16 or UTF-32 file's lines as :func:`_file_lines` gives them, decoded where they read as wide text:
    a line goes on past a 0x0A inside a character; one longer than ``max_line_bytes`` keeps its head, its rest
    read and dropped."""
    limit = max_line_bytes + 1
    kept, length, tail = _piece(stream, limit)
    while length:
        line, cut, pieces = kept, len(kept) < length, 1
        after = _piece(stream, limit) if tail.endswith(b"\n") else (b"", 0, b"")
        while after[1] and wide.goes_on(line[:HEAD_BYTES], length, tail, after[0]):
            room = limit - len(line)
            line += after[0][:max(room, 0)]
            cut = cut or len(after[0]) > room or after[1] > len(after[0])
            length, tail, pieces = length + after[1], (tail + after[2])[-4:], pieces + 1
            after = _piece(stream, limit) if tail.endswith(b"\n") else (b"", 0, b"")
        ended = tail.endswith(b"\n")
        cut = cut or len(line) > limit
        line = line[:max_line_bytes] if cut else line[:-1] if ended else line
        yield wide.line(line, ended, not cut), cut, pieces
        kept, length, tail = after


def _piece(stream, limit: int) -> tuple[bytes, int, bytes]:
    """The next piece of a file cut at each 0x0A: its first ``limit`` bytes, its length, its last bytes (the rest of
    a longer one read and dropped)."""
    kept = stream.readline(limit)
    length, tail = len(kept), kept[-4:]
    if len(kept) == limit and not kept.endswith(b"\n"):
        while chunk := stream.readline(READ_BYTES):
            length, tail = length + len(chunk), (tail + chunk)[-4:]
            if chunk.endswith(b"\n"):
                break
    return kept, length, tail


def _head(stream) -> bytes:
    """The first bytes of ``stream``, left to be read (none where it can neither peek nor seek)."""
    if hasattr(stream, "peek"):
        return stream.peek(HEAD)[:HEAD]
    if stream.seekable():
        at = stream.tell()
        head = stream.read(HEAD)
        stream.seek(at)
        return head
    return b""


def _cut_line(stream, raw: bytes, limit: int) -> tuple[bytes, bool]:
    """An over-long line: its first ``limit`` bytes, the rest read and dropped but for its last non-empty
    ``\\r`` segment (``limit`` bytes of it at most), and whether what the decoder shows of it was cut. A
    terminal shows a progress bar's final redraw, and so does the decoder (``final_redraw``): it must find
    the same one in the cut line as in the whole, and a whole final redraw is no cut event."""
    head, chunk = raw[:limit], raw[limit:]
    crossed = False  # a \r seen past the head: the segments after it are whole
    cur, last = b"", b""  # the segment being read, the last non-empty one finished
    while True:
        end = chunk.endswith(b"\n")
        pieces = chunk.rstrip(b"\n").split(b"\r") if end else chunk.split(b"\r")
        if len(pieces) > 1:
            done = [cur + pieces[0]] if crossed else []
            done += pieces[1:-1]
            for piece in reversed(done):
                if piece:
                    last = piece[:limit]
                    break
            crossed, cur = True, pieces[-1][:limit]
        elif crossed and len(cur) < limit:
            cur = (cur + pieces[0])[:limit]
        if end:
            break
        chunk = stream.readline(READ_BYTES)
        if not chunk:
            break
    final = cur or last
    if crossed and final:
        return head + b"\r" + final, len(final) >= limit
    return head, True


def parse_files(paths: Iterable[str | os.PathLike], labels: dict | None = None,
                router: ProjectRouter | None = None, default_ts_ms: int | None = None,
                include_metrics: bool = True, encode: Callable[[Output], bytes] | None = None,
                limits: FieldLimits | None = None, metadata: SourceMetadata | None = None,
                engine: str | None = None, **merger_opts) -> Iterator[dict]:
    """Offline mode (``sluice parse FILE...``): yield event dicts (and metric points) per file.

    Each file is one source (``-``: standard input); envelopes (JSON, CRI) and plain text are detected
    per line. Kafka coordinates are faked: topic ``"file"``, partition 0, offset = 1-based line number. Times
    missing from a line default to ``default_ts_ms`` or else the file's modification time.
    Metric points (step-metric lines) are recognisable by their ``metrics`` key. A line's own time is
    believed however old unless ``limits`` say otherwise (``FieldLimits.offline()``). A line or block
    the worker would dead-letter comes out as a ``sluice.v1.DeadLetter`` dict with ``"kind":
    "dead_letter"`` (``encode``, the worker's Avro body writer, makes encoding failures show too),
    and parsing goes on. Files are read a line at a time; a line over twice the merger's ``max_bytes``
    (no record the worker is sent can hold it) is cut as it is read, its event flagged truncated.
    """
    router = router or ProjectRouter()
    redact = Redactor()
    limits = limits or FieldLimits.offline()
    decode = decoder(engine)
    for arg in paths:
        builder = EventBuilder(router, redact, limits=limits, metadata=metadata)
        yield from FileParse(Path(arg), labels, builder, default_ts_ms, include_metrics, encode,
                             merger_opts, decode).outputs()


class FileParse:
    """One file as one source, emitted in file order (see :func:`parse_files`)."""

    def __init__(self, path: Path, labels: dict | None, builder: EventBuilder, default_ts_ms: int | None,
                 include_metrics: bool, encode: Callable[[Output], bytes] | None, merger_opts: dict,
                 decode: Decode | None = None) -> None:
        self.path = path
        self.decode_record = decode or decoder("python")
        self.sid = str(path)
        if default_ts_ms is None and str(path) == "-":
            raise ValueError("standard input has no modification time: pass default_ts_ms")
        self.ts = default_ts_ms if default_ts_ms is not None else int(path.stat().st_mtime * 1000)
        self.merger = MultilineMerger(**merger_opts)
        self.joiner = PartialJoiner()
        self.builder, self.encode = builder, encode
        self.include_metrics = include_metrics
        self.src = {"host": None, "namespace": None, "pod": None, "container": None, "file": str(path),
                    "stream": None, "node_role": None, "rank": None}
        self.labels = dict(labels or {})
        # heap of (first line, index in its record, arrival order, block or letter): file order, not closing order
        self.held: list[tuple[int, int, int, Block | dict]] = []
        self.seq = 0
        # A line longer than any record the worker can be sent (kafka.max_message_bytes, by default twice
        # assemble.max_bytes) is cut as it is read; below that, the worker's own cut of the event applies.
        self.max_line_bytes = 2 * self.merger.max_bytes
        self.cut: list[int] = []  # numbers of the lines cut as read, in order: their events are truncated

    def outputs(self) -> Iterator[dict]:
        no = 0
        for raw, cut, pieces in _file_lines(self.path, self.max_line_bytes):
            no += 1
            if cut:
                self.cut.append(no)
            self._line(no, raw)
            if self.held:
                blocks, partial = self.merger.oldest_open_offset(), self.joiner.oldest_offset()
                oldest = partial if blocks is None else blocks if partial is None else min(blocks, partial)
                while self.held and (oldest is None or self.held[0][0] < oldest):
                    yield from self._emit(heapq.heappop(self.held)[3])
            no += pieces - 1  # (a wide line past a 0x0A inside a character: the file's next line keeps its number)
        for _sid, line, off in self.joiner.drain():
            self._merge(line, off)
        for b in self.merger.flush_all():
            self._hold(b)
        while self.held:
            yield from self._emit(heapq.heappop(self.held)[3])

    def _decode(self, raw: bytes) -> list[RawLine]:
        if not raw.strip():
            # (blanks kept as a record carries them: a formatter's indent alone is a line of its record)
            return [RawLine(raw.decode("ascii", "replace").rstrip("\r\n"))]
        try:
            return self.decode_record(raw, None, None, None)
        except DecodeError as exc:
            if exc.error_type in TEXT_IN_FILES:  # NULs out, as from any text (decode.py)
                return [RawLine(raw.decode("utf-8", "replace").replace("\x00", ""))]
            raise

    def _line(self, no: int, raw: bytes) -> None:
        try:
            lines = self._decode(raw)
        except DecodeError as exc:
            self._hold_letter(raw, no, F.known("decode", str(exc), exc.error_type))
            return
        except Exception as exc:  # noqa: BLE001 - one line's failure is that line's dead letter
            self._hold_letter(raw, no, F.internal(exc, "decode"))
            return
        for decoded in lines:
            line = RawLine(decoded.text, None, decoded.ts_ms, self.src if not any(decoded.source.values()) else
                           {**decoded.source, "file": str(self.path)}, {**self.labels, **decoded.labels},
                           decoded.partial, 0, decoded.level, decoded.fields)
            off = no
            try:
                if line.partial or self.joiner.held or starts_cut(line.text):
                    j = self.joiner.push(self.sid, line, no, self.ts)
                    if j is None:
                        continue
                    line, off = j
            except Exception as exc:  # noqa: BLE001 - as in the Assembler: the source's state is lettered
                self._drop(line, off, exc)
                continue
            self._merge(line, off)

    def _merge(self, line: RawLine, off: int) -> None:
        try:
            blocks = self.merger.push(self.sid, line, off, self.ts)
        except Exception as exc:  # noqa: BLE001 - as in the Assembler: the source's state is lettered
            self._drop(line, off, exc)
            return
        for b in blocks:
            self._hold(b)

    def _drop(self, line: RawLine, off: int, exc: Exception) -> None:
        """Joining or merging failed: the file's open blocks, held partial and the line as one letter."""
        blocks = self.merger.drop_source(self.sid)
        partial = self.joiner.drop(self.sid)
        texts = [t for b in blocks for t in b.texts] + ([partial[0].text] if partial else [])
        if not F.holds_line(blocks, line.text, off):
            texts.append(line.text)
        first = min([off, *(b.first_offset for b in blocks), *([partial[1]] if partial else [])])
        self._hold_letter(F.text_bytes(texts), first, F.internal(exc, "merge"),
                          {"original": "lines", "lines": str(len(texts))})

    def _hold(self, b: Block) -> None:
        heapq.heappush(self.held, (b.first_offset, b.first_index, self.seq, b))
        self.seq += 1

    def _hold_letter(self, original: bytes, no: int, failure: F.Failure, headers: dict | None = None) -> None:
        letter = F.redacted(F.letter(original, self.sid.encode("utf-8", "surrogatepass"), "file", 0, no,
                                     f"{self.path}:{no}", failure, self.ts, headers), self.builder.redact)
        heapq.heappush(self.held, (no, 0, self.seq, {"kind": "dead_letter", **letter}))
        self.seq += 1

    def _emit(self, item: Block | dict) -> Iterator[dict]:
        if isinstance(item, dict):
            yield item
            return
        b = item
        step = "build"
        if self.cut:  # blocks come out in the order of their first lines: cut lines before this one are done
            i = bisect.bisect_left(self.cut, b.first_offset)
            del self.cut[:i]
            b.truncated = b.truncated or bool(self.cut and self.cut[0] <= b.last_offset)
        try:
            if b.nbytes > self.merger.max_bytes or utf8_len(b.texts[-1]) > self.merger.max_bytes:
                b.texts = self.builder.redact(b.message).split("\n")  # before the cut, as in the Assembler
                cap_block(b, self.merger.max_bytes)
            out = self.builder.redact.output(self.builder.build(b, "file", 0), b.source_id)
            if self.encode is not None:
                step = "encode"
                self.encode(out)
        except Exception as exc:  # noqa: BLE001 - one block's failure is that block's dead letter
            where = f"{self.path}:{b.first_offset}" + (f"-{b.last_offset}" if b.last_offset != b.first_offset else "")
            letter = F.redacted(F.block_letter(b, "file", 0, where, F.internal(exc, step)), self.builder.redact)
            yield {"kind": "dead_letter", **letter}
            return
        if out.kind == "event" or self.include_metrics:
            yield out.value
