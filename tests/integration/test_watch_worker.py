"""The watch worker (a real process) on the real Kafka, registry and Elasticsearch.

Each test gets its own project, topics, consumer group and internal topics (by-task topic and
table changelogs), passed to the worker through SLUICE_* like an operator would. Incidents are
replayed from real corpus logs; the metric streams (GPU utilisation, a stall) are synthetic
MetricPoints, since the corpus has none, with a real loss curve from an ms-swift run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.testing.elasticsearch import read_alerts
from devtools.testing.watch import corpus_events
from streams.assemble.pipeline import parse_files
from streams.avro_io import avro_serializer
from streams.clients import es_client
from streams.config import ProjectRoute, Settings
from streams.contracts import register_all
from streams.topics import create_topics, topic_specs
from streams.watch.observation import to_ms
from streams.watch.settings import WatchSettings

MIN = 60_000
OOM = "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
NCCL = "training/sglang_nccl_watchdog_timeout_hardwrapped.log"
CHILD_FAILED = "training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"
LOSS_CURVE = "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log"


@pytest.fixture
def isolated(stack: Settings, unique_name: Callable[[str], str]) -> tuple[Settings, WatchSettings]:
    tag = unique_name("wat")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts", "incidents": f"{tag}.incidents",
    })
    routing = stack.routing.model_copy(update={"default_project": tag, "projects": {tag: ProjectRoute()}})
    settings = stack.model_copy(update={"topics": topics, "routing": routing})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    return settings, WatchSettings(app_id=f"{tag}-watch")


def worker_env(settings: Settings, conf: WatchSettings, extra: dict[str, str]) -> dict[str, str]:
    t = settings.topics
    return {
        **os.environ,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_TOPICS__INCIDENTS": t.incidents, "SLUICE_ROUTING__DEFAULT_PROJECT": settings.routing.default_project,
        "SLUICE_ROUTING__PROJECTS": json.dumps({p: {} for p in settings.routing.projects}),
        "SLUICE_WATCH__APP_ID": conf.app_id,
        # The broker's minimum: after the kill -9 the restarted worker waits this long for the partitions.
        "SLUICE_WATCH__SESSION_TIMEOUT_S": "6", "SLUICE_OBSERVABILITY__PORT": "0", **extra,
    }


@pytest.fixture
def start_worker(isolated: tuple[Settings, WatchSettings], worker_processes: Callable[..., Any]
                 ) -> Callable[..., subprocess.Popen[bytes]]:
    def start(**extra: str) -> subprocess.Popen[bytes]:
        proc, _log = worker_processes(["worker", "watch", "--loglevel", "warn"], worker_env(*isolated, extra))
        return proc  # type: ignore[no-any-return]

    return start




def point(project: str, task: str, ts_ms: int, step: int | None = None, **metrics: float) -> dict[str, Any]:
    return {
        "event_id": f"{task}/{ts_ms}/{step}", "timestamp": ts_ms, "project": project, "task_id": task,
        "task_type": "sft", "model_name": None, "phase": "train", "step": step, "max_steps": None, "epoch": None,
        "metrics": dict(metrics),
        "source": {"host": "node-0", "namespace": None, "pod": None, "container": None, "file": None,
                   "stream": None, "node_role": "trainer", "rank": 0},
        "labels": {"task_id": task}, "raw": {"topic": "synthetic", "partition": 0, "first_offset": 0,
                                             "last_offset": 0, "first_file_offset": None, "last_file_offset": None},
    }


def produce(settings: Settings, topic: str, contract: str, records: list[dict[str, Any]]) -> None:
    serialize = avro_serializer(settings, contract)
    ctx = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    for record in records:
        producer.produce(topic, key=record["event_id"].encode(), value=serialize(record, ctx))
    assert producer.flush(20) == 0


def latest(alerts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the compacted topic keeps: the last record per alert id."""
    return {a["alert_id"]: a for a in alerts}


class Webhook:
    """A chat server that answers the very first request with 500, then records every request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.failed = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if hook.failed == 0:
                    hook.failed += 1
                    self.send_response(500)
                else:
                    hook.requests.append(body)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_corpus_incidents_raise_one_alert_each(isolated, start_worker, corpus: Path) -> None:
    """Per-class alerts (job incidents off; tests/integration/test_incidents_end_to_end.py has them on)."""
    settings, _conf = isolated
    project = settings.routing.default_project
    # The OOM log as every one of 4 ranks wrote it; the NCCL and ChildFailedError logs as they are.
    events = [e for r in range(4)
              for e in corpus_events(corpus / OOM, "t-oom", rank=r, host=f"node-{r // 2}", project=project)]
    events += corpus_events(corpus / NCCL, "t-nccl", project=project)
    events += corpus_events(corpus / CHILD_FAILED, "t-kill", project=project)
    produce(settings, settings.topics.events_topic(project), "log_event", events)
    hook = Webhook()
    try:
        start_worker(SLUICE_WATCH__WEBHOOK_URL=hook.url, SLUICE_WATCH__WEBHOOK_BACKOFF_S="0.2",
                     SLUICE_WATCH__INCIDENTS="false")
        want = {"t-oom": ("cuda_oom", 4), "t-nccl": ("nccl_timeout", 5), "t-kill": ("signal", 4)}

        def complete(alerts: list[dict[str, Any]]) -> bool:
            final = {(a["task_id"], a["rule"]): a["count"] for a in latest(alerts).values()}
            return all(final.get((task, rule)) == n for task, (rule, n) in want.items())

        alerts = read_alerts(settings, complete)
        final = latest(alerts)
        assert sorted((a["task_id"], a["rule"], a["count"]) for a in final.values()) == sorted(
            (task, rule, n) for task, (rule, n) in want.items()), "one alert id per incident, nothing else"
        oom = next(a for a in final.values() if a["rule"] == "cuda_oom")
        assert oom["details"]["ranks"] == "node-0:0,node-0:1,node-1:2,node-1:3"
        assert oom["severity"] == "critical" and oom["project"] == project
        assert next(a for a in final.values() if a["rule"] == "signal")["details"]["signal"] == "SIGKILL"

        es = es_client(settings.elasticsearch)
        index = f"sluice-alerts-{project}"
        deadline = time.monotonic() + 20
        while True:
            es.indices.refresh(index=index)
            docs = {h["_id"]: h["_source"] for h in es.search(index=index, size=50)["hits"]["hits"]}
            if {d["count"] for d in docs.values()} == {4, 5} or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert set(docs) == set(final), "indexed under _id = alert_id, once each"
        assert {i: d["count"] for i, d in docs.items()} == {i: a["count"] for i, a in final.items()}
        es.indices.delete(index=index)

        deadline = time.monotonic() + 20
        while len(hook.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.5)  # nothing more may come
        assert hook.failed == 1, "the first POST was answered 500"
        texts = [r["text"] for r in hook.requests]
        assert len(texts) == 3, texts
        assert sorted(next(i for i in final if i in t) for t in texts) == sorted(final), "each incident once"
    finally:
        hook.close()


def committed_everything(settings: Settings, group: str, topics: list[str]) -> bool:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": group, "enable.auto.commit": False})
    try:
        meta = consumer.list_topics(timeout=10).topics
        if not all(t in meta for t in topics):
            return False  # the worker creates its internal topics when it starts
        tps = [TopicPartition(t, p) for t in topics for p in meta[t].partitions]
        committed = consumer.committed(tps, timeout=10)
        for tp in committed:
            high = consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=10)[1]
            if high > 0 and tp.offset != high:
                return False
        return True
    finally:
        consumer.close()


def test_metric_rules_across_windows_and_a_kill_9_in_the_middle(isolated, start_worker, corpus: Path) -> None:
    settings, conf = isolated
    project = settings.routing.default_project
    # Event time near the wall clock: Faust expires windows against the wall clock (window_expires_s).
    t0 = (int(time.time() * 1000) // MIN - 30) * MIN
    idle = [point(project, "t-idle", t0 + s * 1000, step=s, gpu_utilization_pct=3.0) for s in range(0, 350, 10)]
    curve = [p for p in parse_files([corpus / LOSS_CURVE], labels={"task_id": "t-loss"})
             if "message" not in p and p["step"] is not None]
    losses = [point(project, "t-loss", t0 + i * 20_000, step=p["step"], **p["metrics"]) for i, p in enumerate(curve)]
    spike = point(project, "t-loss", losses[-1]["timestamp"] + 20_000, step=curve[-1]["step"] + 5,
                  loss=10 * curve[-1]["metrics"]["loss"])
    progress = [point(project, "t-stall", t0 + m * MIN, step=m, loss=1.0) for m in range(5)]
    quiet = [point(project, "t-stall", t0 + m * MIN, step=4, loss=1.0) for m in range(5, 21)]

    # Before the kill: half of the first idle window, the loss history, the stall's last progress.
    before = idle[:16] + losses + progress
    produce(settings, settings.topics.metrics, "metric_point", before)
    worker = start_worker()
    group_topics = [settings.topics.metrics, conf.by_task_topic()]
    deadline = time.monotonic() + 40
    while not committed_everything(settings, conf.app_id, group_topics):
        assert time.monotonic() < deadline, "the worker never committed the first half"
        time.sleep(0.5)
    time.sleep(2.0)  # changelog writes of the last records
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)
    assert read_alerts(settings, lambda a: False, timeout_s=3) == [], "nothing is due before the kill"

    # After: every offset was committed, so what came before can only come back from the changelogs.
    produce(settings, settings.topics.metrics, "metric_point", [*idle[16:30], spike, *quiet])
    start_worker()
    # The samples that close the window come later, as they would in real time: records of one task
    # cross several partitions, and only time (the grace period) puts them back in order.
    deadline = time.monotonic() + 40
    while not committed_everything(settings, conf.app_id, group_topics):
        assert time.monotonic() < deadline, "the restarted worker never caught up"
        time.sleep(0.5)
    produce(settings, settings.topics.metrics, "metric_point", idle[30:])
    want = {("t-idle", "gpu_idle"), ("t-loss", "loss_spike"), ("t-stall", "training_stalled")}
    alerts = read_alerts(settings, lambda a: want <= {(x["task_id"], x["rule"]) for x in a}, timeout_s=60)
    time.sleep(1.5)
    alerts += read_alerts(settings, lambda a: False, timeout_s=2)[len(alerts):]
    final = latest(alerts)
    assert sorted((a["task_id"], a["rule"]) for a in final.values()) == sorted(want), "one alert each"

    gpu = next(a for a in final.values() if a["rule"] == "gpu_idle")
    assert to_ms(gpu["first_seen"]) == t0 and gpu["details"]["window_start"] == str(t0)
    assert gpu["details"]["first_sample"] == str(t0), "the window's first samples came before the kill"
    assert gpu["details"]["samples"] == "30", "all 30 samples of [t0, t0+5min): 16 before the kill, 14 after"

    loss = next(a for a in final.values() if a["rule"] == "loss_spike")
    assert float(loss["details"]["baseline"]) < 2 * curve[-1]["metrics"]["loss"], "history from before the kill"

    stall = next(a for a in final.values() if a["rule"] == "training_stalled")
    assert to_ms(stall["first_seen"]) == t0 + 4 * MIN, "last progress, recorded before the kill"
    assert stall["details"]["step"] == "4"
    es_client(settings.elasticsearch).indices.delete(index=f"sluice-alerts-{project}", ignore_unavailable=True)
