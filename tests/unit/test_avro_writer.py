"""The generated Avro writer writes exactly what fastavro writes, and hands fastavro what it cannot."""

from __future__ import annotations

import io
import math
from functools import cache
from pathlib import Path
from typing import Any

import fastavro
import pytest

from devtools import CORPUS_DIR
from streams.assemble.pipeline import parse_files
from streams.avro_writer import _OffPath, body_writer, compile_fast_path
from streams.contracts import parsed_schema, schema_text

CORPUS = CORPUS_DIR


def fastavro_body(contract: str, value: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed_schema(contract), value)
    return buf.getvalue()


@cache
def corpus_values() -> list[dict[str, Any]]:
    files = sorted((CORPUS / "training").glob("*.log")) + sorted(Path(CORPUS).glob("loghub/*/*_2k.log"))
    return list(parse_files(files))


def test_every_corpus_event_and_metric_point_byte_for_byte_and_on_the_fast_path() -> None:
    import json

    fast = {c: compile_fast_path(json.loads(schema_text(c))) for c in ("log_event", "metric_point")}
    counts = dict.fromkeys(fast, 0)
    for value in corpus_values():
        contract = "log_event" if "message" in value else "metric_point"
        assert fast[contract](value) == fastavro_body(contract, value), value["event_id"]
        counts[contract] += 1
    assert counts["log_event"] > 20_000 and counts["metric_point"] > 100, counts


def a_log_event() -> dict[str, Any]:
    found = next(v for v in corpus_values() if "message" in v and v.get("source"))
    return found | {"labels": {"project": "p", "task_id": "t"}, "step": 10, "loss": 0.25, "epoch": 1.5}


@pytest.mark.parametrize("change", [
    {"step": 0}, {"step": -1}, {"step": 2**63 - 1}, {"step": -(2**63)}, {"line_count": 2**31 - 1},
    {"line_count": -(2**31)}, {"message": "ünïcødé ✓ 日本語 " * 40}, {"message": ""}, {"labels": {}},
    {"labels": {"app.kubernetes.io/name": "x", "": ""}}, {"loss": math.inf}, {"loss": -math.inf}, {"loss": -0.0},
    {"truncated": True}, {"level": None, "logger": None},
])
def test_edge_values_on_the_fast_path(change: dict[str, Any]) -> None:
    value = a_log_event() | change
    assert body_writer("log_event")(value) == fastavro_body("log_event", value)


@pytest.mark.parametrize("change", [
    {"step": True},  # a bool where a long goes
    {"loss": 3},  # an int where a double goes: fastavro widens it
    {"step": 2**63},  # past a long: fastavro's error
    {"line_count": 2**31},  # past an int
    {"labels": {"k": 1}},  # a map value of the wrong type: fastavro's error
])
def test_values_off_the_fast_path_get_fastavros_bytes_or_fastavros_error(change: dict[str, Any]) -> None:
    import json

    value = a_log_event() | change
    with pytest.raises(_OffPath):
        compile_fast_path(json.loads(schema_text("log_event")))(value)
    try:
        expected: bytes | type[BaseException] = fastavro_body("log_event", value)
    except Exception as exc:  # noqa: BLE001 - whatever fastavro raises, ours must too
        expected = type(exc)
    if isinstance(expected, bytes):
        assert body_writer("log_event")(value) == expected
    else:
        with pytest.raises(expected):
            body_writer("log_event")(value)


def test_a_missing_field_gets_fastavros_default() -> None:
    value = a_log_event()
    del value["task_id"]  # "default": null
    assert body_writer("log_event")(value) == fastavro_body("log_event", value)
    letter = {"original": Path(CORPUS / "training").glob("*.log").__next__().read_bytes()[:300], "key": None,
              "topic": "logs.raw", "partition": 0, "offset": 7, "stage": "assemble", "error": "e",
              "error_type": "undecodable", "timestamp": 1_700_000_000_000}  # attempts and headers: defaults
    assert body_writer("dead_letter")(letter) == fastavro_body("dead_letter", letter)
    letter |= {"key": b"k", "attempts": 3, "headers": {"h": "v"}}
    assert body_writer("dead_letter")(letter) == fastavro_body("dead_letter", letter)
    round_trip = fastavro.schemaless_reader(io.BytesIO(body_writer("dead_letter")(letter)),
                                            parsed_schema("dead_letter"), parsed_schema("dead_letter"))
    assert round_trip["key"] == b"k" and round_trip["headers"] == {"h": "v"}
