"""Resources across records: one source writing under very many stream prefixes, and a source whose saved
state would be larger than the state topic takes.

Both used to grow without a bound: a line of a source with N open blocks looked at all N (20,000 prefixes
cost 2.4 ms a line, quadratic in the prefixes), and the source's state, one record of the state topic, grew
past its limit (13.6 MB for 20,000 open tracebacks): the producer refuses such a record on every retry, so
the partition never got past that turn. Kafka is not here: a fake writer refuses what the producer would.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from streams.assemble import state as S
from streams.assemble.lines import RawLine
from streams.assemble.merger import MAX_OPEN_PER_SOURCE, MultilineMerger
from streams.assemble.pipeline import Assembler, RawRecord
from streams.config import Settings
from streams.rdkafka import Message
from streams.topics import state_max_message_bytes
from streams.workers.assemble import AssembleStage

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000
SOURCE = b"node-1/train.log"
HEAD = "Traceback (most recent call last):"


def raw(offset: int, text: str, key: bytes = SOURCE) -> RawRecord:
    return RawRecord("logs.raw", 0, offset, text.encode(), key, TS)


def texts_of(outputs: list[Any]) -> list[str]:
    return [t for o in outputs if o.kind == "event" for t in o.value["message"].split("\n")]


def test_a_source_under_many_prefixes_holds_a_bounded_number_of_blocks_and_loses_no_line():
    asm = Assembler()
    n = MAX_OPEN_PER_SOURCE * 3
    lines = [f"[rank{i}]: {HEAD}" for i in range(n)]
    out: list[Any] = []
    started = time.process_time()
    for i, line in enumerate(lines):
        out += asm.feed(raw(i, line))
        assert asm.merger.open_count() <= MAX_OPEN_PER_SOURCE
    per_line = (time.process_time() - started) / n
    assert asm.merger.evicted == n - MAX_OPEN_PER_SOURCE
    # each block emitted early is whole so far: its line, once; the rest come out at the end
    out += asm.flush_all()
    assert sorted(texts_of(out)) == sorted(lines)
    assert per_line < 0.004, f"{per_line * 1e3:.1f} ms a line"


def test_an_evicted_block_is_the_one_written_to_longest_ago():
    asm = Assembler()
    for i in range(MAX_OPEN_PER_SOURCE):
        asm.feed(raw(i, f"[rank{i}]: {HEAD}"))
    asm.feed(raw(MAX_OPEN_PER_SOURCE, '[rank0]:   File "/a.py", line 1, in f'))  # rank0 written to again
    out = asm.feed(raw(MAX_OPEN_PER_SOURCE + 1, f"[rank{MAX_OPEN_PER_SOURCE}]: {HEAD}"))
    assert [o.value["message"] for o in out] == [f"[rank1]: {HEAD}"]


def big_state_records() -> list[Any]:
    """Twelve ranks of one file, each a traceback of 40 KB frames still open: about 5 MB of state."""
    pad = "a" * 40_000
    lines = [f"[rank{r}]: {HEAD}" for r in range(12)]
    lines += [f'[rank{r}]:   File "/{pad}{i}.py", line {i}, in f' for i in range(10) for r in range(12)]
    return [Message(topic="logs.raw", partition=0, offset=100 + i, value=line.encode() + b"\n", key=SOURCE,
                    timestamp=TS / 1000, headers=None, generation_id=0) for i, line in enumerate(lines)]


class RefusingWriter:
    """Refuses a transaction holding a record over the producer's ``message.max.bytes``, as librdkafka
    does (MSG_SIZE_TOO_LARGE, every time: the turn is read again and refused again)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.outputs: list[tuple[str, bytes | None, bytes | None]] = []
        self.state: dict[bytes, bytes | None] = {}

    def write(self, messages: list[tuple[str, bytes | None, bytes | None, int]], offsets: dict, _metadata: Any) -> None:
        for topic, key, value, _p in messages:
            size = len(key or b"") + len(value or b"")
            assert size <= self.limit, f"{topic} record of {size:,} bytes refused (MSG_SIZE_TOO_LARGE)"
        for topic, key, value, _p in messages:
            if topic.endswith("-state"):
                self.state[key or b""] = value
            else:
                self.outputs.append((topic, key, value))


def test_a_source_state_over_the_state_topics_limit_is_emitted_not_refused_forever():
    settings = Settings()
    stage = AssembleStage(settings, registry=SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(
        schema_id=1)))
    writer = RefusingWriter(state_max_message_bytes(settings))
    stage.writer = writer  # type: ignore[assignment]
    records = big_state_records()
    asyncio.run(stage.on_batch(records))
    # every turn went through (the writer refuses none): the tracebacks came out as they stood each time the
    # source's state grew past the limit, and what is saved of the source fits
    asm = stage.states[0].assembler
    assert asm.flushed_sources >= 1
    assert len(writer.outputs) >= 12
    state = writer.state[S.state_key(0, SOURCE.decode())]
    assert state is None or len(state) <= state_max_message_bytes(settings)


def test_fitting_state_releases_a_held_partial_line_too():
    asm = Assembler(max_partial_bytes=1 << 22)
    # a CRI partial line of 1.5 M characters, each written by JSON as a six-byte escape
    asm.feed(RawRecord("logs.raw", 0, 0, b"2024-01-01T00:00:00Z stdout P " + "\u00e9".encode() * 1_500_000, SOURCE, TS))
    assert asm.joiner.held
    value, out = S.fitting_state(asm, SOURCE.decode(), 4 << 20)
    assert [o.kind for o in out] == ["event"] and not asm.joiner.held
    assert value is None or len(value) <= 4 << 20
    small, none = S.fitting_state(asm, SOURCE.decode(), 4 << 20)
    assert small == value and none == []


def test_a_turns_end_with_many_sources_open_does_not_look_at_each_of_them():
    """Each turn's end asks for the blocks gone quiet; with 100,000 sources open (each the head of a
    traceback) that was a scan of every block, 0.1 s a turn, however few were due."""
    merger = MultilineMerger()
    for i in range(100_000):
        merger.push(f"pod-{i}", RawLine(HEAD), i, TS)
    assert merger.flush_idle(TS) == []  # (one scan: what is open, and since when)
    started = time.process_time()
    for turn in range(200):
        assert merger.flush_idle(TS + turn) == []
    assert time.process_time() - started < 1.0
    assert len(merger.flush_idle(TS + merger.idle_timeout_ms)) == 100_000


def test_a_line_arriving_before_the_quiet_blocks_is_still_flushed_in_time():
    merger = MultilineMerger()
    merger.push("a", RawLine(HEAD), 0, TS)
    assert merger.flush_idle(TS) == []
    merger.push("b", RawLine(HEAD), 1, TS - 60_000)  # (read again, or pushed by a caller with its own times)
    assert [b.source_id for b in merger.flush_idle(TS - 60_000 + merger.idle_timeout_ms)] == ["b"]
    assert [b.source_id for b in merger.flush_idle(TS + merger.idle_timeout_ms)] == ["a"]
