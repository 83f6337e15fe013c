"""The pure bulk request builder: index names, documents, action lines."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

from streams.config import ProjectRoute, RoutingSettings
from streams.sinks.elasticsearch.request import IndexNamer, bulk_body, document, encode, segment

TS = 1_767_225_599_999  # 2025-12-31T23:59:59.999Z


def event(**over: object) -> dict:
    base = {"event_id": "raw/0/17", "timestamp": TS, "ingest_ts": TS, "project": "vision", "level": "ERROR",
            "message": "torch.OutOfMemoryError: CUDA out of memory", "task_type": "lora_finetune", "loss": None,
            "source": {"host": "n1", "pod": None}, "labels": {"app": "x", "app.kubernetes.io/name": "y"},
            "attributes": {}, "raw": {"topic": "logs.raw", "partition": 0, "first_offset": 17, "last_offset": 17}}
    base.update(over)
    return base


def metric(**over: object) -> dict:
    base = {"event_id": "m1", "timestamp": TS, "project": "vision", "metrics": {"loss": 1.5}, "step": 10,
            "source": {}, "labels": {}, "raw": {}}
    base.update(over)
    return base


NAMER = IndexNamer(RoutingSettings(projects={"vision": ProjectRoute(), "nlp": ProjectRoute(index_prefix="team-nlp")}))


def test_event_index_is_project_task_type_and_utc_day() -> None:
    assert NAMER.index_for(event(), TS) == "sluice-logs-vision-lora_finetune-2025.12.31"
    assert NAMER.index_for(event(task_type=None), TS + 1) == "sluice-logs-vision-general-2026.01.01"


def test_custom_prefix_and_metrics_index() -> None:
    assert NAMER.index_for(event(project="nlp"), TS) == "team-nlp-lora_finetune-2025.12.31"
    assert NAMER.index_for(metric(), TS) == "sluice-metrics-vision-2025.12.31"


def test_task_type_never_contains_a_dash() -> None:
    assert segment("Reward-Model Training") == "reward_model_training"
    assert segment("") == "general"
    assert segment("---") == "general"


def test_action_uses_event_id_and_index_op_so_replays_overwrite() -> None:
    action = encode(event(), NAMER)
    head, src, tail = action.lines.split(b"\n")
    assert json.loads(head) == {"index": {"_index": "sluice-logs-vision-lora_finetune-2025.12.31", "_id": "raw/0/17"}}
    assert tail == b""
    doc = json.loads(src)
    assert doc["timestamp"] == TS
    assert "loss" not in doc, "nulls are left out"
    assert doc["source"] == {"host": "n1"}
    assert encode(event(), NAMER).lines == action.lines, "deterministic"


def test_datetimes_from_the_avro_decoder_become_epoch_millis() -> None:
    dt = datetime.fromtimestamp(TS / 1000, tz=UTC)
    doc, ts = document(event(timestamp=dt, ingest_ts=dt))
    assert ts == TS
    assert doc["timestamp"] == TS
    assert doc["ingest_ts"] == TS


def test_non_finite_numbers_do_not_cost_the_event() -> None:
    doc, _ = document(metric(metrics={"loss": math.nan, "grad_norm": math.inf, "lr": 1e-4}))
    assert doc["metrics"] == {"lr": 1e-4}
    assert doc["non_finite"] == ["metrics.loss=nan", "metrics.grad_norm=inf"]
    encode(metric(metrics={"loss": math.nan}), NAMER)  # valid JSON: no NaN literal


def test_bulk_body_is_ndjson_lines_in_order() -> None:
    body = bulk_body([encode(event(event_id=str(i)), NAMER) for i in range(3)])
    lines = body.decode().splitlines()
    assert len(lines) == 6
    assert [json.loads(lines[i])["index"]["_id"] for i in (0, 2, 4)] == ["0", "1", "2"]
