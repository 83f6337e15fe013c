"""The cold tier on the real object store, Kafka and registry (and Elasticsearch for rehydrate).

Each test has its own topic, project, consumer group and bucket. Events are parsed from the real
corpus (devtools.testing.objectstore.corpus_events).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest

from devtools.testing.objectstore import corpus_events
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, Settings
from streams.sinks.base import Backoff
from streams.sinks.objectstore.build import manifest_from_metadata
from streams.sinks.objectstore.rehydrate import parse_bound, rehydrate
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.workers.cold import ColdSinkRunner, build_cold_runner

PROC = Path(__file__).with_name("cold_worker_proc.py")
FAST = {"rotate_records": 100, "rotate_interval_s": 300, "idle_flush_s": 3}


def produce(settings: Settings, topic: str, events: list[dict[str, Any]], partitions: int) -> None:
    """LogEvents as the assemble stage writes them: Avro, Confluent wire format, subject <topic>-value."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_serializer
    from streams.clients import registry_client
    from streams.contracts import schema_text

    registry_client(settings.registry).register_schema(f"{topic}-value", Schema(schema_text("log_event"), "AVRO"))
    serialize = avro_serializer(settings, "log_event")
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 5,
                         "message.max.bytes": 8 * 1024 * 1024})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for i, event in enumerate(events):
        producer.produce(topic, key=event["event_id"].encode(), value=serialize(event, ctx), partition=i % partitions)
        producer.poll(0)
    assert producer.flush(30) == 0


def objects(settings: Settings, bucket: str) -> dict[str, bytes]:
    s3 = s3_client(settings.object_store)
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def data_objects(stored: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in stored.items() if k.endswith(".avro")}


def sha(stored: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in stored.items()}


def event_ids(stored: dict[str, bytes]) -> Counter:
    """Every event id in every data object, read with stock fastavro."""
    return Counter(e["event_id"] for body in data_objects(stored).values()  # type: ignore[index]
                   for e in fastavro.reader(io.BytesIO(body)))


def project_topic(new_topic: Callable[..., str], partitions: int) -> tuple[str, str]:
    topic = new_topic("logs.events.cold", partitions=partitions)
    return topic, topic[len("logs.events."):]


def run_proc(settings: Settings, bucket: str, topic: str, group: str, expect: int, kill_at: int = 0) -> int:
    env = {**os.environ, "SLUICE_OBJECT_STORE__DEFAULT_BUCKET": bucket,
           **{f"SLUICE_COLD__{k.upper()}": str(v) for k, v in FAST.items()}}
    proc = subprocess.run([sys.executable, str(PROC), "--topic", topic, "--group", group, "--expect", str(expect),
                           "--kill-at-commit", str(kill_at)], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=90, check=False)
    print(proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.returncode


async def run_until_committed(runner: ColdSinkRunner, expect: int, timeout_s: float,
                              meanwhile: Callable[[dict], Awaitable[None]] | None = None) -> dict:
    committed: dict[tuple[str, int], int] = {}
    inner = runner.source.commit

    def commit(points: dict[tuple[str, int], int]) -> None:
        inner(points)
        committed.update(points)

    runner.source.commit = commit  # type: ignore[method-assign]
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    side = asyncio.create_task(meanwhile(committed)) if meanwhile else None
    deadline = time.monotonic() + timeout_s
    try:
        while sum(committed.values()) < expect and time.monotonic() < deadline:
            if task.done():
                task.result()
            await asyncio.sleep(0.1)
        if side is not None:
            await side
    finally:
        stop.set()
        await task
        runner.source.close()
    return committed


def test_killed_between_upload_and_commit_restarts_into_identical_objects(
        stack: Settings, new_topic, unique_name, corpus) -> None:
    topic, project = project_topic(new_topic, partitions=3)
    events = corpus_events(corpus, project, "run-1", ingest_step_ms=1000)
    produce(stack, topic, events, partitions=3)
    bucket, reference = unique_name("cold-kill"), unique_name("cold-ref")
    group = unique_name("cold-kill")

    assert run_proc(stack, bucket, topic, group, len(events), kill_at=3) == -9, "kill -9 before the 3rd commit"
    before = sha(data_objects(objects(stack, bucket)))
    assert before, "the killed worker had stored objects it never committed"
    assert run_proc(stack, bucket, topic, group, len(events)) == 0, "the restart commits everything"
    assert run_proc(stack, reference, topic, unique_name("cold-ref"), len(events)) == 0

    after, clean = objects(stack, bucket), objects(stack, reference)
    assert sha(data_objects(after)) == sha(data_objects(clean)), "same keys, same bytes as a run without a crash"
    assert {k: v for k, v in sha(after).items() if k in before} == before, "stored objects rewritten identically"
    counts = event_ids(after)
    assert set(counts) == {e["event_id"] for e in events}, "none missing"
    assert max(counts.values()) == 1, "no event in two objects"
    s3 = s3_client(stack.object_store)
    for key, body in data_objects(after).items():
        assert key.startswith(f"{project}/run-1/") and f"/{topic}+" in key
        manifest = manifest_from_metadata(s3.head_object(Bucket=bucket, Key=key)["Metadata"])
        assert manifest is not None, f"{key} carries its manifest"
        assert manifest["sha256"] == hashlib.sha256(body).hexdigest()
        assert manifest["count"] == sum(1 for _ in fastavro.reader(io.BytesIO(body)))


def private_store(private_server: Callable[..., Any], bucket: str) -> tuple[Settings, Any]:
    """An object store of the test's own (to stop and start), writing to ``bucket``."""
    settings, service = private_server("objectstore")
    return settings.model_copy(update={"object_store": settings.object_store.model_copy(
        update={"default_bucket": bucket})}), service


def assert_each_event_once(settings: Settings, events: list[dict[str, Any]]) -> None:
    counts = event_ids(objects(settings, settings.object_store.default_bucket))
    assert set(counts) == {e["event_id"] for e in events}, "none missing"
    assert max(counts.values()) == 1, "no event in two objects"


def test_store_stopped_mid_write_loses_nothing(stack: Settings, private_server, new_topic, unique_name,
                                               corpus) -> None:
    settings, service = private_store(private_server, unique_name("cold-outage"))
    topic, project = project_topic(new_topic, partitions=2)
    events = corpus_events(corpus, project, "run-2", ingest_step_ms=1000)
    half = len(events) // 2
    produce(stack, topic, events[:half], partitions=2)
    conf = ColdSinkSettings(**FAST, request_timeout_s=3)  # type: ignore[arg-type]
    runner = build_cold_runner(settings, unique_name("cold-outage"), conf, topics=[topic])
    runner.sink.backoff = Backoff(0.2, 2.0)
    outage: dict[str, float] = {}

    async def cut_the_store(committed: dict) -> None:
        while sum(committed.values()) == 0:
            await asyncio.sleep(0.05)
        service.down()  # type: ignore[attr-defined]
        outage["down"] = time.monotonic()
        await asyncio.to_thread(produce, stack, topic, events[half:], 2)
        await asyncio.sleep(12)
        outage["stuck_at"] = sum(committed.values())
        await asyncio.to_thread(service.up)  # type: ignore[attr-defined]
        outage["up"] = time.monotonic()

    committed = asyncio.run(run_until_committed(runner, len(events), 50, cut_the_store))
    assert outage["up"] - outage["down"] >= 12
    assert outage["stuck_at"] < len(events), "nothing past the outage was committed"
    assert runner.sink.stats["store_errors"] > 0, "the sink did meet the outage"
    assert sum(committed.values()) == len(events)
    assert_each_event_once(settings, events)


def test_store_down_at_start_is_waited_for(stack: Settings, private_server, new_topic, unique_name,
                                          corpus) -> None:
    settings, service = private_store(private_server, unique_name("cold-late-store"))
    topic, project = project_topic(new_topic, partitions=2)
    events = corpus_events(corpus, project, "run-3", ingest_step_ms=1000)[:300]
    produce(stack, topic, events, partitions=2)
    service.down()  # type: ignore[attr-defined]
    conf = ColdSinkSettings(**FAST, request_timeout_s=2)  # type: ignore[arg-type]
    runner = build_cold_runner(settings, unique_name("cold-late-store"), conf, topics=[topic])
    runner.backoff = Backoff(0.5, 2.0)
    seen: dict[str, int] = {}

    async def store_comes_back(committed: dict) -> None:
        await asyncio.sleep(8)
        seen["while_down"] = sum(committed.values())
        await asyncio.to_thread(service.up)  # type: ignore[attr-defined]

    committed = asyncio.run(run_until_committed(runner, len(events), 90, store_comes_back))
    assert seen["while_down"] == 0, "nothing is committed while the store cannot take it"
    assert sum(committed.values()) == len(events), "the worker waited for the store instead of exiting"
    assert_each_event_once(settings, events)


def test_objects_open_with_stock_fastavro_and_rehydrate_into_elasticsearch(
        stack: Settings, new_topic, unique_name, corpus) -> None:
    settings = stack.model_copy(update={"object_store": stack.object_store.model_copy(
        update={"default_bucket": unique_name("cold-rehydrate")})})
    topic, project = project_topic(new_topic, partitions=2)
    events = corpus_events(corpus, project, "run-3", ingest_step_ms=1000)
    produce(stack, topic, events, partitions=2)
    runner = build_cold_runner(settings, unique_name("cold-rh"), ColdSinkSettings(**FAST), topics=[topic])  # type: ignore[arg-type]
    asyncio.run(run_until_committed(runner, len(events), 45))
    assert runner.sink.lifecycle and not runner.sink.lifecycle[0].applied, "S3Proxy: reported, not faked"
    assert "NotImplemented" in runner.sink.lifecycle[0].detail

    stored = objects(settings, settings.object_store.default_bucket)
    some_key = next(iter(data_objects(stored)))
    reader = fastavro.reader(io.BytesIO(stored[some_key]))
    assert reader.writer_schema["name"] == "sluice.v1.LogEvent" and reader.metadata["avro.codec"] == "deflate"
    assert event_ids(stored) == Counter(e["event_id"] for e in events)

    # One day's window: only the objects whose manifest overlaps it are read.
    day = "2025-11-29"
    wanted = {e["event_id"] for e in events if parse_bound(day, end=False).timestamp() * 1000 <= e["timestamp"]
              <= parse_bound(day, end=True).timestamp() * 1000}
    index = unique_name(f"sluice-logs-{project}-rehydrated")
    es = es_client(settings.elasticsearch)
    try:
        seen: list[int] = []
        first = rehydrate(settings, project, "run-3", parse_bound(day, end=False), parse_bound(day, end=True),
                          index=index, on_progress=seen.append)
        assert first.events_indexed == len(wanted) and sum(seen) == len(wanted)
        assert first.objects_skipped == 0  # the prefix already limits the listing to that day
        again = rehydrate(settings, project, "run-3", parse_bound(day, end=False), parse_bound(day, end=True),
                          index=index)
        assert again.events_indexed == len(wanted)
        assert es.count(index=index)["count"] == len(wanted), "twice = same count (_id is the event id)"
        hits = es.search(index=index, size=10_000, source=["event_id"])["hits"]["hits"]
        assert {h["_id"] for h in hits} == wanted == {h["_source"]["event_id"] for h in hits}

        # Whole history of the task: every event back, manifests skip nothing they should not.
        everything = rehydrate(settings, project, "run-3", parse_bound("2000-01-01", end=False),
                               parse_bound("2030-01-01", end=True), index=index)
        assert everything.events_indexed == len(events)
    finally:
        es.indices.delete(index=index, ignore_unavailable=True)


@pytest.mark.parametrize("fmt", ["ndjson.gz"])
def test_ndjson_objects_rehydrate_too(stack: Settings, new_topic, unique_name, corpus, fmt: str) -> None:
    settings = stack.model_copy(update={"object_store": stack.object_store.model_copy(
        update={"default_bucket": unique_name("cold-ndjson")})})
    topic, project = project_topic(new_topic, partitions=1)
    events = corpus_events(corpus, project, "run-4", limit=300, ingest_step_ms=1000)
    produce(stack, topic, events, partitions=1)
    conf = ColdSinkSettings(**FAST, format=fmt)  # type: ignore[arg-type]
    asyncio.run(run_until_committed(build_cold_runner(settings, unique_name("cold-nd"), conf, topics=[topic]),
                                    len(events), 30))
    index = unique_name(f"sluice-logs-{project}-rehydrated")
    try:
        report = rehydrate(settings, project, "run-4", parse_bound("2000-01-01", end=False),
                           parse_bound("2030-01-01", end=True), index=index)
        assert report.events_indexed == len(events)
    finally:
        es_client(settings.elasticsearch).indices.delete(index=index, ignore_unavailable=True)
