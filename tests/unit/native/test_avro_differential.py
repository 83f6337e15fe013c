"""The native Avro writer writes the bytes of the Python one (and so fastavro's), value for value.

Every output of the corpus (events, metric points, dead letters), and generated values that leave the
writer's path in every way it has (wrong types, missing fields, out-of-range numbers, surrogates).
"""

from __future__ import annotations

import io
import json
import math
from functools import cache
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools import CORPUS_DIR
from streams.assemble.outputs import _plain
from streams.assemble.pipeline import Assembler, RawRecord
from streams.avro_writer import body_writer
from streams.contracts import parsed_schema, schema_text
from tests.unit.native.engines import native_or_skip

CONTRACTS = {"event": "log_event", "metric": "metric_point", "dead_letter": "dead_letter"}


@cache
def corpus_outputs() -> list[tuple[str, dict[str, Any]]]:
    files = sorted((CORPUS_DIR / "training").glob("*.log")) + sorted(CORPUS_DIR.glob("loghub/*/*.log"))
    asm = Assembler()
    outs = []
    offset = 0
    for f in files:
        for line in f.read_bytes().split(b"\n"):
            outs += asm.feed(RawRecord("logs.raw", 0, offset, line, f.name.encode(), 1_700_000_000_000))
            offset += 1
    outs += asm.flush_all()
    return [(CONTRACTS[o.kind], o.value) for o in outs]


def fastavro_body(contract: str, value: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed_schema(contract), value)
    return buf.getvalue()


def test_every_corpus_output_byte_for_byte() -> None:
    native = native_or_skip()
    writers = {c: native.AvroWriter(schema_text(c)) for c in CONTRACTS.values()}
    kinds = dict.fromkeys(CONTRACTS.values(), 0)
    for contract, value in corpus_outputs():
        body = writers[contract].write(value)
        assert body is not None, value  # the corpus stays on the native path
        assert body == body_writer(contract, "python")(value), value
        kinds[contract] += 1
    assert kinds["log_event"] > 20_000 and kinds["metric_point"] > 100 and kinds["dead_letter"] > 0, kinds


def test_the_process_engine_is_the_native_one_where_built() -> None:
    native_or_skip()
    value = corpus_outputs()[0][1]
    assert body_writer("log_event", "native") is not body_writer("log_event", "python")
    assert body_writer("log_event", "native")(value) == fastavro_body("log_event", value)


def gpu_point(**arrays: list[Any]) -> dict[str, Any]:
    """A corpus metric point carrying a GPU sample (the contract's defaults filled in by fastavro),
    with ``arrays`` set: the assemble stage's outputs never carry one, the node shipper's do."""
    value = next(v for c, v in corpus_outputs() if c == "metric_point") | {"gpu": {"index": 3}}
    plain = fastavro.parse_schema(_plain(json.loads(schema_text("metric_point"))))  # times as the longs they are
    full = fastavro.schemaless_reader(io.BytesIO(fastavro_body("metric_point", value)), plain)
    assert isinstance(full, dict)
    full["gpu"] |= arrays
    return full


@pytest.mark.parametrize("arrays", [
    {}, {"pids": [4242, 2**40], "throttle_reasons": ["gpu_idle", "hw_slowdown"], "xids": [79]},
    {"pids": list(range(300)), "xids": [2**31 - 1, -(2**31)]}, {"pids": (1, 2)}, {"xids": [2**31]},
    {"throttle_reasons": ["x", None]}, {"pids": [True]},
])
def test_arrays_of_a_gpu_sample(arrays: dict[str, Any]) -> None:
    """Arrays are written natively (one block of items, then the empty block); a tuple, an item out of
    range or of another type is handed to fastavro, as the Python writer hands it."""
    native = native_or_skip()
    value = gpu_point(**arrays)
    results = []
    for engine in ("python", "native"):
        try:
            results.append(body_writer("metric_point", engine)(value))
        except Exception as exc:  # noqa: BLE001 - the error is part of the answer: compared by type
            results.append(type(exc))
    assert results[0] == results[1]
    if arrays in ({}, {"pids": [4242, 2**40], "throttle_reasons": ["gpu_idle", "hw_slowdown"], "xids": [79]}):
        assert native.AvroWriter(schema_text("metric_point")).write(value) == results[0]  # not handed over


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                     st.floats(allow_nan=True), st.text(max_size=8), st.binary(max_size=8),
                     st.just("\ud800"), st.integers(min_value=-(2**31) - 2, max_value=2**31 + 2))


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A corpus output with a few fields replaced by anything, or removed, or nested maps broken."""
    contract, value = draw(st.sampled_from(corpus_outputs()[:2000] + corpus_outputs()[-50:]))
    value = dict(value)
    for name in draw(st.lists(st.sampled_from(sorted(value)), max_size=3, unique=True)):
        action = draw(st.integers(0, 3))
        if action == 0:
            del value[name]
        elif action == 1:
            value[name] = draw(_scalars())
        elif action == 2:
            value[name] = draw(st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), _scalars(), max_size=3))
        else:
            value[name] = True if isinstance(value[name], int) else value[name]
    return contract, value


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_values_off_the_path_are_handed_over_exactly(case: tuple[str, dict[str, Any]]) -> None:
    """Native and Python agree on every value: the same bytes, or the same exception type."""
    native_or_skip()
    contract, value = case
    results = []
    for engine in ("python", "native"):
        try:
            results.append(body_writer(contract, engine)(value))
        except Exception as exc:  # noqa: BLE001 - the error is part of the answer: compared by type
            results.append(type(exc))
    assert results[0] == results[1], value


@pytest.mark.parametrize("change", [
    {"step": 2**63 - 1}, {"step": -(2**63)}, {"step": 2**63}, {"line_count": 2**31}, {"line_count": -(2**31)},
    {"loss": math.nan}, {"loss": -0.0}, {"truncated": 1}, {"message": "x\ud800"}, {"labels": {1: "x"}},
    {"attributes": {"k": None}}, {"source": {}}, {"level": 0},
])
def test_edges(change: dict[str, Any]) -> None:
    native_or_skip()
    value = next(v for c, v in corpus_outputs() if c == "log_event") | change
    results = []
    for engine in ("python", "native"):
        try:
            results.append(body_writer("log_event", engine)(value))
        except Exception as exc:  # noqa: BLE001
            results.append(type(exc))
    assert results[0] == results[1]
