"""The README's first command: a real burst from the corpus through every stage that exists.

Each step prints what it did and where to look, so a newcomer can check it by hand.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro

from streams.avro_io import avro_deserializer
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, Settings
from streams.contracts import parsed_schema
from streams.errors import SluiceError
from streams.produce import produce_files

CORPUS = REPO_ROOT.parent / "shared" / "corpus"
# A CUDA OOM at a barrier, an NCCL watchdog timeout, a vLLM OOM and an SFT run's step metrics.
DEMO_FILES = (
    "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
    "training/sglang_nccl_watchdog_timeout_hardwrapped.log",
    "training/vllm_serve_jamba_cuda_oom_kv_cache.log",
    "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log",  # step metrics of an SFT run
)


def demo_files() -> list[Path]:
    paths = [CORPUS / f for f in DEMO_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise SluiceError(f"demo corpus files missing: {missing}; the corpus must sit at {CORPUS}")
    return paths


def produce_raw(settings: Settings, paths: list[Path], project: str, run_id: str) -> int:
    """The demo burst: each file one source on a host named after the run, so runs never mix."""

    def labels(path: Path) -> dict[str, str]:
        return {"project": project, "task_id": f"demo-{path.stem[:40]}", "task_type": "pretrain",
                "demo_run": run_id}

    return produce_files(settings, paths, labels, host=f"demo-{run_id}")


def read_topic(settings: Settings, topic: str, keep: Callable[[dict[str, Any]], bool],
               done: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Avro values of ``topic`` from the start (a throwaway group) that ``keep`` accepts, until ``done``."""
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserializer = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"sluice-demo-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    ctx = SerializationContext(topic, MessageField.VALUE)
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while not done(found) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            value = deserializer(msg.value(), ctx)
            if keep(value):
                found.append(value)
    finally:
        consumer.close()
    return found


def start_worker(stage: str, log_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    log_dir.mkdir(parents=True, exist_ok=True)
    out = (log_dir / f"demo-worker-{stage}.log").open("ab")
    return subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", stage, "--loglevel", "warn"],
                            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def es_roundtrip(settings: Settings, index: str, doc: dict[str, str]) -> int:
    es = es_client(settings.elasticsearch)
    es.index(index=index, id=str(doc["event_id"]), document=doc, refresh="wait_for")
    hits = es.search(index=index, query={"term": {"_id": doc["event_id"]}})["hits"]["total"]["value"]
    return int(hits)


def object_roundtrip(settings: Settings, key: str, lines: list[str]) -> int:
    s3 = s3_client(settings.object_store)
    bucket = settings.object_store.default_bucket
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        s3.create_bucket(Bucket=bucket)
    buf = io.BytesIO()
    records = [{"line": line, "file_offset": i, "ts": None} for i, line in enumerate(lines)]
    fastavro.writer(buf, parsed_schema("raw_line"), records, codec="deflate")
    s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    return sum(1 for _ in fastavro.reader(io.BytesIO(body)))


def run_demo(settings: Settings, say: Callable[[str], None] = print) -> None:
    from streams.assemble.pipeline import parse_files
    from streams.contracts import register_all
    from streams.topics import create_topics

    create_topics(settings)
    register_all(settings)
    say(f"topics and schemas ready (registry {settings.registry.url})")

    paths = demo_files()
    run_id = uuid.uuid4().hex[:12]
    host = f"demo-{run_id}"
    sent = produce_raw(settings, paths, settings.routing.default_project, run_id)
    say(f"1. produced {sent} raw lines from {len(paths)} corpus files to {settings.topics.raw} "
        f"as Avro RawBatch records (source host {host})")

    offline = list(parse_files(paths))
    want_events = sum(1 for e in offline if "message" in e)
    want_metrics = len(offline) - want_events
    logs = settings.stack.dir / "logs"
    workers = [start_worker("assemble", logs, {"SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "2000",
                                               "SLUICE_OBSERVABILITY__PORT": "9108"})]
    try:
        events = read_topic(
            settings, settings.topics.events_topic(settings.routing.default_project),
            keep=lambda v: v["source"].get("host") == host,
            done=lambda found: len({e["event_id"] for e in found}) >= want_events, timeout_s=120,
        )
        metrics = read_topic(
            settings, settings.topics.metrics, keep=lambda v: v["source"].get("host") == host,
            done=lambda found: len({m["event_id"] for m in found}) >= want_metrics, timeout_s=30,
        )
    finally:
        for proc in workers:
            stop_worker(proc)
    unique = {e["event_id"]: e for e in events}
    if len(unique) < want_events:
        raise SluiceError(f"assemble produced {len(unique)} of {want_events} events in 120 s; "
                          f"read {logs / 'demo-worker-assemble.log'}")
    classes = Counter(e["error_class"] for e in unique.values() if e["error_class"])
    merged = sum(1 for e in unique.values() if e["line_count"] > 1)
    say(f"2. assemble: {sent} lines became {len(unique)} events on "
        f"{settings.topics.events_topic(settings.routing.default_project)} ({merged} multiline, "
        f"errors: {dict(classes)})")
    steps = sorted(m["step"] for m in {m["event_id"]: m for m in metrics}.values() if m["step"] is not None)
    losses = [m["metrics"].get("loss") for m in metrics if "loss" in m["metrics"]]
    say(f"   {len({m['event_id'] for m in metrics})} step-metric lines are metric points on {settings.topics.metrics}"
        + (f" (steps {steps[0]}..{steps[-1]}, loss {losses[0]} -> {losses[-1]})" if steps and losses else ""))
    oom = next((e for e in unique.values() if e["error_class"] == "cuda_oom"), None)
    if oom is not None:
        first, last = oom["message"].splitlines()[0], oom["message"].splitlines()[-1]
        say(f"   e.g. {oom['line_count']}-line {oom['error_type']} event: {first[:60]!r} ... {last[:80]!r}")
    say("   look: sluice parse <file>  (the same stage offline, one JSON event per line)")

    doc = {"event_id": f"demo-{run_id}", "message": paths[0].read_text(errors="replace").splitlines()[-1],
           "project": "default"}
    index = "sluice-demo"
    hits = es_roundtrip(settings, index, doc)
    say(f"3. indexed one event into Elasticsearch and found it: {hits} hit")
    say(f"   look: curl '{settings.elasticsearch.url}/{index}/_search?q=_id:{doc['event_id']}&pretty'")

    key = f"demo/{run_id}/{paths[0].stem}.avro"
    lines = paths[0].read_text(errors="replace").splitlines()
    count = object_roundtrip(settings, key, lines)
    say(f"4. wrote s3://{settings.object_store.default_bucket}/{key} ({count} Avro records) and read it back")
    say(f"   look: the object store's files under {settings.stack.dir / 'objectstore' / 'data'}")
