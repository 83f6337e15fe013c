"""GPU samples from a recorded node through `sluice ship`, Kafka, the assemble, watch, hot and cold workers.

A node runs a training task that logs a line every 30 s and holds two GPUs (the recorded H100, twice).
The shipper tails the task's log and the GPU sampler samples both GPUs every 10 s; GPU 1 goes idle for
6 minutes (the recorded idle device, still held by the job), then busy again. Time is simulated: one
clock drives the shipper and the sampler, the lines carry its time and the samples are stamped with
it, so 26 minutes of a node take seconds; the workers are the real ones, as processes, on the real
Kafka, registry, Elasticsearch and object store. Event time sits half an hour behind the wall clock
(Faust expires windows against the wall clock).

Expected: exactly one gpu_idle alert for the task and one resolution of it (same alert id), and every
sample in Elasticsearch (sluice-metrics-<project>-*) and in the cold tier (metrics/<project>/...).
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fastavro
import pytest

from devtools.testing.elasticsearch import read_alerts
from devtools.testing.gpu import RecordedNvml
from streams.clients import es_client
from streams.config import ProjectRoute, Settings
from streams.contracts import register_all
from streams.gpu.nvml import NvmlReader
from streams.gpu.run import MetricPointSender, known_sources
from streams.gpu.sampler import GpuSampler
from streams.gpu.settings import GpuSettings
from streams.ship.checkpoint import CheckpointStore
from streams.ship.labels import Origin, SourceBuilder
from streams.ship.sender import KafkaSender
from streams.ship.settings import ShipSettings
from streams.ship.shipper import Shipper
from streams.sinks.objectstore.build import manifest_from_metadata
from streams.sinks.objectstore.rehydrate import rehydrate
from streams.sinks.objectstore.store import ObjectStore
from streams.topics import create_topics, topic_specs

MIN = 60_000
IDLE_FROM, IDLE_TO, END = 8 * MIN, 14 * MIN, 26 * MIN  # after t0
HOST = "gpu-node-1"
PATTERN = r"/train/(?P<project>[^/]+)/(?P<task_id>[^/]+)/rank(?P<rank>\d+)\.log$"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def isolated(stack: Settings, unique_name: Callable[[str], str]) -> Settings:
    tag = unique_name("gpu")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts",
    })
    routing = stack.routing.model_copy(update={"default_project": tag, "projects": {tag: ProjectRoute()}})
    settings = stack.model_copy(update={"topics": topics, "routing": routing})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    return settings


def workers_env(settings: Settings, tag: str) -> dict[str, str]:
    t = settings.topics
    return {
        **os.environ,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_ROUTING__DEFAULT_PROJECT": tag, "SLUICE_ROUTING__PROJECTS": json.dumps({tag: {}}),
        "SLUICE_ASSEMBLE__APP_ID": f"{tag}-assemble", "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "2000",
        "SLUICE_WATCH__APP_ID": f"{tag}-watch", "SLUICE_HOT__GROUP_ID": f"{tag}-hot",
        "SLUICE_COLD__GROUP_ID": f"{tag}-cold", "SLUICE_COLD__IDLE_FLUSH_S": "3",
        "SLUICE_OBSERVABILITY__PORT": "0",
    }


def run_node(settings: Settings, tmp_path: Path, project: str, t0_s: float) -> dict[str, Any]:
    """The simulated node: the job's log, the shipper and the sampler on one clock; returns what was sent."""
    log = tmp_path / "train" / project / "run-7" / "rank0.log"
    log.parent.mkdir(parents=True)
    log.touch()
    clock = Clock(t0_s)
    ship = ShipSettings(paths=[str(tmp_path / "train" / "**" / "*.log")], checkpoint_path=tmp_path / "ck.json",
                        interval_s=30, stagger_window_s=0, path_pattern=PATTERN, labels={"node_role": "trainer"},
                        partial_max_wait_s=0)
    node = Origin(host=HOST, namespace=None, pod=None, container=None, labels={"node_role": "trainer"})
    shipper = Shipper(ship, KafkaSender(settings, ship, settings.topics.raw), CheckpointStore(ship.checkpoint_path),
                      SourceBuilder(node, ship.path_pattern), clock=clock)
    nvml = RecordedNvml(count=2)
    sampler = GpuSampler(NvmlReader(nvml), MetricPointSender(settings, ship, settings.topics.metrics),
                         GpuSettings(), host=HOST, node_labels=node.labels, known_sources=known_sources(shipper),
                         cgroups=None, send_interval_s=ship.interval_s, phase_ms=shipper.phase_ms, clock=clock)
    shipper.start()
    sampler.start()
    lines = 0
    for second in range(END // 1000 + 1):
        clock.now = t0_s + second
        at_ms = int(clock.now * 1000) - int(t0_s * 1000)
        if at_ms == IDLE_FROM:  # arranged: the recorded idle state, the job still holding the GPU
            nvml.set_state(1, "idle")
            nvml.set_processes(1, ((11345, 16_452_157_440),))
        elif at_ms == IDLE_TO:
            nvml.set_state(1, "load")
            nvml.set_processes(1, None)
        if second % 30 == 5:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock.now))
            with log.open("a") as out:
                out.write(json.dumps({"timestamp": f"{stamp}Z", "level": "INFO",
                                      "message": f"waiting for data batch {lines}"}) + "\n")
            lines += 1
        shipper.tick()
        sampler.tick()
    shipper.shutdown()
    sampler.shutdown()
    assert sampler.stats.acked == sampler.stats.points and sampler.stats.read_failures == 0
    return {"lines": lines, "points": sampler.stats.points}


def wait_for(check: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(1.0)


@pytest.mark.slow
def test_a_six_minute_idle_gpu_is_one_alert_and_one_clear_and_its_samples_are_kept(
        isolated: Settings, worker_processes: Callable[..., Any], tmp_path: Path) -> None:
    settings = isolated
    project = settings.routing.default_project
    t0_s = float((int(time.time()) // 60 - 30) * 60)
    sent = run_node(settings, tmp_path, project, t0_s)
    assert sent["points"] == 2 * (END // 10_000), "two GPUs every 10 s from t0+10 s to t0+26 min"

    env = workers_env(settings, project)
    for stage in ("assemble", "watch", "hot", "cold"):
        worker_processes(["worker", stage, "--loglevel", "warn"], env)

    def settled(alerts: list[dict[str, Any]]) -> bool:
        return any(a["rule"] == "gpu_idle" and a["status"] == "resolved" for a in alerts)

    alerts = read_alerts(settings, settled, timeout_s=240)
    time.sleep(5)
    alerts += read_alerts(settings, lambda got: False, timeout_s=5)[len(alerts):]
    idle = [a for a in alerts if a["rule"] == "gpu_idle"]
    assert len({a["alert_id"] for a in idle}) == 1, "one incident"
    fired = [a for a in idle if a["status"] == "firing"]
    cleared = [a for a in idle if a["status"] == "resolved"]
    assert fired and len(cleared) == 1, [(a["status"], a["count"]) for a in idle]
    first, clear = fired[0], cleared[0]
    assert (first["task_id"], first["project"]) == ("run-7", project)
    assert first["details"]["ranks"] == f"{HOST}" and "GPU 1" in first["summary"]
    assert int(first["details"]["window_start"]) == int(t0_s * 1000) + IDLE_FROM
    assert clear["resolved_at"] is not None and clear["summary"].startswith("[resolved] gpu_idle in run-7")
    assert [a for a in alerts if a["rule"] != "gpu_idle"] == []

    es = es_client(settings.elasticsearch)
    index = f"sluice-metrics-{project}-*"

    def indexed() -> bool:
        es.indices.refresh(index=index, allow_no_indices=True)
        return es.count(index=index, query={"exists": {"field": "gpu.index"}}, allow_no_indices=True,
                        ignore_unavailable=True)["count"] == sent["points"]

    wait_for(indexed, 120, "every GPU sample in Elasticsearch")
    idle_samples = es.count(index=index, query={"bool": {"filter": [
        {"term": {"gpu.index": 1}}, {"range": {"metrics.gpu_utilization_pct": {"lt": 10}}},
        {"term": {"task_id": "run-7"}}]}})["count"]
    assert idle_samples == (IDLE_TO - IDLE_FROM) // 10_000
    logs = es.count(index=f"sluice-logs-{project}-*", query={"term": {"task_id": "run-7"}})["count"]
    assert logs == sent["lines"]

    store = ObjectStore(settings.object_store, settings.cold)
    bucket = settings.object_store.default_bucket
    prefix = f"{settings.cold.metrics_prefix}{project}/run-7/"

    def archived() -> int:
        keys = [k for k in store.list_keys(bucket, prefix) if k.endswith(".avro")]
        total = sum(manifest_from_metadata(store.metadata(bucket, k))["count"] for k in keys)
        return total if total == sent["points"] else 0

    wait_for(archived, 120, "every GPU sample in the cold tier")
    keys = [k for k in store.list_keys(bucket, prefix) if k.endswith(".avro")]
    assert all(f"/trainer/{settings.topics.metrics}+" in k for k in keys)
    points = [p for k in keys for p in fastavro.reader(io.BytesIO(store.get(bucket, k)))]
    assert {p["gpu"]["index"] for p in points} == {0, 1} and all(p["gpu"]["reader"] == "nvml" for p in points)

    # Past the hot tier's retention: the samples come back from the cold tier, into the same daily indices.
    es.indices.delete(index=index)
    start = datetime.fromtimestamp(t0_s, tz=UTC)
    report = rehydrate(settings, project, "run-7", start, start + timedelta(minutes=30), metrics=True)
    assert report.events_indexed == sent["points"]
    assert indexed(), "every sample back, once"
    es.indices.delete(index=index)
    es.indices.delete(index=f"sluice-alerts-{project}", ignore_unavailable=True)
