"""The Avro contracts parse, and what the stages will write validates against them."""

from __future__ import annotations

import json

import fastavro
import fastavro.validation
import pytest

from streams.config import load_settings
from streams.contracts import SCHEMA_DIR, parsed_schema, schema_text, subjects
from streams.errors import SchemaError


def test_every_contract_parses() -> None:
    names = sorted(p.stem for p in SCHEMA_DIR.glob("*.avsc"))
    assert names == ["alert", "dead_letter", "incident", "log_event", "metric_point", "raw_batch", "raw_line",
                     "source"]
    for name in names:
        parsed_schema(name)


def test_log_event_carries_training_fields() -> None:
    fields = {f["name"] for f in json.loads(schema_text("log_event"))["fields"]}
    assert {"timestamp", "level", "task_id", "model_name", "task_type", "phase", "epoch", "step", "loss",
            "gpu_memory_mb", "gpu_utilization_pct", "source", "labels", "message", "line_count", "truncated",
            "error_class", "event_id", "raw"} <= fields


def test_minimal_event_validates_and_new_fields_have_defaults() -> None:
    event = {"event_id": "file:abc:0", "timestamp": 1, "ingest_ts": 2, "project": "default", "message": "x",
             "source": {}, "raw": {"topic": "logs.raw", "partition": 0, "first_offset": 5, "last_offset": 7}}
    assert fastavro.validation.validate(event, parsed_schema("log_event"))
    # Every optional field has a default, so a reader of a later version can read old data.
    for f in json.loads(schema_text("log_event"))["fields"]:
        if isinstance(f["type"], list) and "null" in f["type"]:
            assert "default" in f, f["name"]


def test_every_avro_topic_has_a_subject() -> None:
    subs = subjects(load_settings())
    assert subs["logs.raw-value"] == "raw_batch"
    assert subs["logs.dlq-value"] == "dead_letter"
    assert subs["logs.events.default-value"] == "log_event"
    assert subs["logs.incidents-value"] == "incident"


def test_unknown_contract_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="no contract"):
        schema_text("nope")


@pytest.mark.parametrize(("contract", "before"), [("metric_point", "metric_point.before-gpu.avsc"),
                                                  ("alert", "alert.before-status.avsc")])
def test_records_written_before_a_contract_grew_read_with_the_new_defaults(contract: str, before: str) -> None:
    import io

    from streams.config import REPO_ROOT

    old = fastavro.parse_schema(json.loads((REPO_ROOT / "tests/fixtures/contracts" / before).read_text()))
    new = parsed_schema(contract)
    raw = {"topic": "logs.raw", "partition": 0, "first_offset": 1, "last_offset": 1}
    record = ({"event_id": "e", "timestamp": 1, "project": "p", "metrics": {"loss": 1.5}, "source": {}, "raw": raw}
              if contract == "metric_point" else
              {"alert_id": "a", "rule": "gpu_idle", "severity": "warning", "timestamp": 1, "project": "p",
               "summary": "s", "first_seen": 1, "last_seen": 1})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, old, record)
    buf.seek(0)
    read = fastavro.schemaless_reader(buf, old, new)
    assert (read["gpu"] is None) if contract == "metric_point" else (read["status"], read["resolved_at"]) == (
        "firing", None)
    added = {f["name"] for f in json.loads(schema_text(contract))["fields"]} - {
        f["name"] for f in json.loads((REPO_ROOT / "tests/fixtures/contracts" / before).read_text())["fields"]}
    assert added and all("default" in f for f in json.loads(schema_text(contract))["fields"] if f["name"] in added)
