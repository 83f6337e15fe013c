"""Metric points in the cold tier: their own contract in the object, their own prefix and rotation."""

from __future__ import annotations

import io

import fastavro

from devtools.testing.gpu import RecordedNvml
from streams.gpu.attribution import Attribution
from streams.gpu.nvml import NvmlReader
from streams.gpu.points import metric_point
from streams.sinks.objectstore.build import build_object
from streams.sinks.objectstore.partition import day_prefixes, group_of, object_key
from streams.sinks.objectstore.settings import ColdSinkSettings

T0 = 1_767_225_600_000


def gpu_points(n: int) -> list[dict]:
    reader = NvmlReader(RecordedNvml(count=2))
    who = Attribution("only_task", {"project": "llm", "task_id": "run-7"}, {"node_role": "trainer"})
    return [metric_point(r, who, "n1", {"project": "llm"}, T0 + i * 10_000, "nvml")
            for i in range(n) for r in reader.read()]


def test_metric_points_are_written_with_their_own_contract() -> None:
    points = gpu_points(5)
    key = object_key(group_of(points[0], "llm"), "logs.metrics", 0, 40, key_prefix="metrics/")
    assert key == "metrics/llm/run-7/2026-01-01/trainer/logs.metrics+0+00000000000000000040.avro"
    obj = build_object(key, "logs.metrics", 0, list(range(40, 50)), points, contract="metric_point")
    assert obj.manifest["schema"] == "sluice.v1.MetricPoint" and obj.manifest["count"] == 10
    reader = fastavro.reader(io.BytesIO(obj.body))
    assert reader.writer_schema["name"] == "sluice.v1.MetricPoint"
    back = list(reader)
    assert [p["gpu"]["index"] for p in back] == [0, 1] * 5
    assert back[0]["metrics"]["gpu_utilization_pct"] == 100.0 and back[0]["gpu"]["pids"] == [11327, 11328, 11345]
    assert build_object(key, "logs.metrics", 0, list(range(40, 50)), points, contract="metric_point").body == obj.body


def test_the_metrics_archive_has_its_own_prefix_and_rotation() -> None:
    conf = ColdSinkSettings()
    metrics = conf.for_metrics()
    assert (metrics.rotate_records, metrics.rotate_interval_s) == (conf.metrics_rotate_records,
                                                                   conf.metrics_rotate_interval_s)
    assert metrics.rotate_interval_s != conf.rotate_interval_s
    from datetime import date

    assert day_prefixes("llm", "run-7", date(2026, 1, 1), date(2026, 1, 2), conf.metrics_prefix) == [
        "metrics/llm/run-7/2026-01-01/", "metrics/llm/run-7/2026-01-02/"]
