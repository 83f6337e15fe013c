"""Both engines give the same bytes: the assemble stage's encoded outputs and per-source state.

The decoders are compared on every record of every corpus file (one line per record, RawBatch records
of 200 and of 7 lines): the same lines, or the same error. The whole stage, Python core (the reference)
against the native engine, runs over fixed samples of the corpus files (``corpus_sample``: a stable
hash of the path picks them, a different part for each test), every agent's recorded records and
generated hostile input; each output is compared as the bytes that go to Kafka, and after every record
the state of each source the record touched (what the worker writes to its state topic). The restarted
variant puts the assembler's state through its JSON after every record, into a new assembler, as a
worker that crashes after every turn would.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.assemble.decode import decode_record
from streams.assemble.engine import NativeDecode
from streams.assemble.lines import SOURCE_FIELDS, RawLine
from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import Assembler, Output, RawRecord, parse_files
from streams.assemble.state import restore_source, source_state
from streams.assemble.times import MAX_MS
from tests.unit.assemble.test_fuzz import hostile
from tests.unit.native.corpus_records import (
    LOGICAL_ID,
    PLAIN_ID,
    TS,
    agent_cases,
    agent_records,
    batch_records,
    corpus_files,
    corpus_sample,
    line_records,
    lookup,
    raw_batch,
)
from tests.unit.native.engines import native_or_skip

MAX_OUTPUT_BYTES = 96 * 1024


def encoded(outputs: Iterable[Output]) -> list[tuple[str, str, bytes | None, bytes | None]]:
    """The outputs as the worker writes them: each body written by the Assembler's encode hook."""
    out = [(o.kind, o.topic, o.key, o.body) for o in outputs]
    assert all(body is not None for *_, body in out)
    return out


def assemble(records: list[RawRecord], engine: str, restart: bool = False) -> list[Any]:
    """Everything the stage writes for ``records``: outputs, then the touched sources' state, per record."""

    def fresh() -> Assembler:
        # the worker's encode hook (Avro bodies written inside the Assembler's guard), with a small message
        # limit so that cut dead letters and too-large outputs come out in both engines
        return Assembler(lookup, max_lines=200, max_bytes=64 * 1024, idle_timeout_ms=5000, engine=engine,
                         encode=partial(encode_body, engine=engine), max_output_bytes=MAX_OUTPUT_BYTES)

    asm = fresh()
    saved: dict[str, bytes] = {}
    out: list[Any] = []
    for rec in records:
        out += encoded(asm.feed(rec))
        out += encoded(asm.flush_idle(rec.timestamp_ms))
        for sid in sorted(asm.take_dirty()):
            state = source_state(asm, sid)
            out.append(("state", sid, state))
            if state is None:
                saved.pop(sid, None)
            else:
                saved[sid] = state
        out.append(("commit", asm.committable_offset()))
        if restart:
            asm = fresh()
            for state in saved.values():
                restore_source(asm, state)
            asm.take_dirty()
    out += encoded(asm.flush_all())
    return out


def same(records: list[RawRecord], restart: bool = False) -> int:
    python = assemble(records, "python", restart)
    native = assemble(records, "native", restart)
    assert len(native) == len(python)
    for a, b in zip(python, native, strict=True):
        assert a == b
    return len(python)


@pytest.mark.slow
def test_corpus_one_line_per_record() -> None:
    native_or_skip()
    files = corpus_sample(6, 0)
    assert len(files) > 60
    for path in files:
        same(line_records(path))


@pytest.mark.slow
def test_corpus_raw_batches_of_200_lines() -> None:
    native_or_skip()
    for path in corpus_sample(4, 1):
        same(batch_records(path))


@pytest.mark.slow
def test_corpus_restarted_at_every_record() -> None:
    native_or_skip()
    for path in corpus_sample(32, 2):
        same(line_records(path), restart=True)
    for path in corpus_sample(32, 3):
        same(batch_records(path, per_record=7), restart=True)


@pytest.mark.parametrize("case", agent_cases())
def test_agent_records(case: str) -> None:
    native_or_skip()
    for _partition, records in agent_records(case):
        same(records)
        same(records, restart=True)


@pytest.mark.slow
def test_sluice_parse_gives_the_same_events() -> None:
    native_or_skip()
    files = corpus_sample(4, 3)

    def parse(engine: str) -> list[dict]:
        return list(parse_files(files, default_ts_ms=TS, engine=engine, encode=partial(encode_body, engine=engine)))

    assert nan_named(parse("native")) == nan_named(parse("python"))


def nan_named(value: Any) -> Any:
    """The value with every NaN as a string: two NaNs are never equal, and a corpus line may log ``loss: nan``."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: nan_named(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [nan_named(v) for v in value]
    return value


def test_every_corpus_record_decodes_alike() -> None:
    """Every record of the whole corpus, one line per record and in RawBatch records of 200 and 7 lines:
    the native decoder (with its hand-over) gives the Python decoder's lines. And it reads most of them
    itself: the differential tests prove nothing if every record went to the Python decoder."""
    native = native_or_skip()
    dec = native.LineDecoder(RawLine, list(SOURCE_FIELDS), MAX_MS)
    both = NativeDecode(native)
    read = total = 0
    for path in corpus_files():
        for rec in line_records(path) + batch_records(path) + batch_records(path, per_record=7):
            assert _decoded(both, rec.value) == _decoded(decode_record, rec.value), (path, rec.offset)
            total += 1
            mode = 0
            if rec.value[0] == 0:
                mode = both._mode(struct.unpack(">I", rec.value[1:5])[0], lookup)
            read += dec.decode(rec.value, mode) is not None
    assert total > 140_000
    assert read / total > 0.9, (read, total)


# -- generated input ------------------------------------------------------------------------------------
_DIGITS = st.sampled_from("0123456789") | st.sampled_from("٠١٢٣٤٥٦٧٨٩０９")


@st.composite
def cri_lines(draw: st.DrawFn) -> bytes:
    """CRI lines, well-formed and not: times of every shape, streams, tags, bodies with \\r and \\n."""
    def num(n: int) -> str:
        return "".join(draw(st.lists(_DIGITS, min_size=n, max_size=n)))

    date = draw(st.sampled_from([f"{num(4)}-{num(2)}-{num(2)}", "2024-02-29", "2023-02-29", "0000-01-01",
                                 "9999-12-31", "1969-12-31", "2024-13-01"]))
    clock = draw(st.sampled_from([f"{num(2)}:{num(2)}:{num(2)}", "23:59:59", "24:00:00", "12:00", "1:2:3"]))
    frac = draw(st.sampled_from(["", ".", ".5", ".123456", ".123456789", f".{num(3)}", ".1.2"]))
    tz = draw(st.sampled_from(["Z", "+00:00", "-07:00", "+05:30", "+23:59", "+24:00", "+0530", "z", ""]))
    stream = draw(st.sampled_from(["stdout", "stderr", "stdin", "stdout "]))
    tag = draw(st.sampled_from(["P", "F", "X", ""]))
    sep = draw(st.sampled_from([" ", "", "  "]))
    body = draw(st.text(alphabet=st.sampled_from("ab \r\n\x00é{"), max_size=12))
    end = draw(st.sampled_from(["", "\n", "\r\n", "\n\n"]))
    return f"{date}T{clock}{frac}{tz} {stream} {tag}{sep}{body}{end}".encode("utf-8", "surrogatepass")


@st.composite
def batches(draw: st.DrawFn) -> bytes:
    """RawBatch bodies with any text and times, whole or cut or with a byte changed."""
    lines = draw(st.lists(st.tuples(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\r\n\x00"),
                                            max_size=20),
                                    st.none() | st.integers(-(2**63), 2**63 - 1),
                                    st.none() | st.integers(-(2**62), 2**62) | st.integers(0, 2**45)),
                          max_size=5))
    source = draw(st.fixed_dictionaries({}, optional={"host": st.text(max_size=5),
                                                      "rank": st.integers(-(2**31), 2**31 - 1)}))
    labels = draw(st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3))
    value = raw_batch(draw(st.sampled_from([PLAIN_ID, LOGICAL_ID, 99])), source, labels, lines)
    damage = draw(st.integers(0, 3))
    if damage == 1:
        value = value[:draw(st.integers(0, len(value)))]
    elif damage == 2:
        i = draw(st.integers(5, len(value) - 1))
        value = value[:i] + bytes([draw(st.integers(0, 255))]) + value[i + 1:]
    elif damage == 3:
        value += draw(st.binary(min_size=1, max_size=3))
    return value


records = st.one_of(hostile, cri_lines(), batches(), st.binary(max_size=40),
                    st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")))


def _decoded(fn: Any, value: bytes) -> Any:
    try:
        return fn(value, b"k", lookup)
    except Exception as exc:  # noqa: BLE001 - the error is part of the answer (the dead letter says it)
        return (type(exc), str(exc), getattr(exc, "error_type", None))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_generated_records_decode_alike(value: bytes) -> None:
    native = native_or_skip()
    assert _decoded(NativeDecode(native), value) == _decoded(decode_record, value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, min_size=1, max_size=12), st.booleans())
def test_generated_records_assemble_alike(values: list[bytes], restart: bool) -> None:
    native_or_skip()
    same([RawRecord("logs.raw", 0, i, v, b"source-1", TS + i * 700) for i, v in enumerate(values)], restart)
