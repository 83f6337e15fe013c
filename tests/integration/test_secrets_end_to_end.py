"""No secret leaves the assemble stage: the real worker, the real hot and cold sinks, `sluice dlq show`.

Lines holding every kind of secret in ``devtools.testing.secret_samples`` go onto a raw topic of this
test's own: as message text, as values of JSON keys, in nested JSON, in labels, in a source field and
inside records that cannot be decoded (dead letters). The assemble worker (`sluice worker assemble`,
a real process, with a dead-letter key) turns them into events, metric points and dead letters; the
hot sink indexes the events into Elasticsearch and the cold sink writes them to the object store. No
run of eight characters of any secret may be found in any of those places, nor in what
`sluice dlq ls` and `sluice dlq show` print; `--raw` with the key still gives the original bytes.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import time
from collections.abc import Callable
from typing import Any

import fastavro
from click.testing import CliRunner
from confluent_kafka import Consumer, Producer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.testing.elasticsearch import committed_to_end
from devtools.testing.secret_samples import SAMPLES, SECRET_FRAGMENT_CHARS
from streams.assemble.outputs import registry_schema_lookup
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.route import ProjectRouter
from streams.avro_io import avro_deserializer, avro_serializer
from streams.cli.main import cli
from streams.clients import es_client, registry_client, s3_client
from streams.config import DeadLetterSettings, ProjectRoute, RoutingSettings, Settings
from streams.contracts import register_all
from streams.deadletter import new_key
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.ratecontrol import Capacity
from streams.topics import create_topics, topic_specs
from streams.workers.cold import build_cold_runner
from streams.workers.hot import run_hot_worker

GARBAGE = b"\x00\x7f\xff\xff\xf0"  # Avro magic byte, a schema id the registry never issued


def leaks(text: str) -> dict[str, list[str]]:
    """kind -> runs of its secret found in ``text``."""
    n = SECRET_FRAGMENT_CHARS
    found = {}
    for kind, (secret, _lines) in SAMPLES.items():
        runs = [secret[i:i + n] for i in range(max(1, len(secret) - n + 1)) if secret[i:i + n] in text]
        if runs:
            found[kind] = runs[:3]
    return found


def raw_records(settings: Settings) -> list[tuple[bytes, bytes]]:
    """(key, value) of every raw record the test sends."""
    serialize = avro_serializer(settings, "raw_batch")
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    source = {"host": "gpu-7", "namespace": "ml", "pod": "trainer-0", "container": "main", "file": None,
              "stream": "stdout", "node_role": "trainer", "rank": 0}
    out = []
    for n, (kind, (secret, lines)) in enumerate(SAMPLES.items()):
        texts = [*lines,
                 json.dumps({"level": "info", "msg": "config loaded", "password": secret, "detail": lines[0]}),
                 json.dumps({"level": "info", "msg": "nested", "cfg": {"auth": {"api_key": secret}}}),
                 "{'loss': 1.25, 'learning_rate': 2e-05, 'epoch': 0.5}"]
        batch = {"source": source, "labels": {"task_id": f"t-{n}", "launch_cmd": lines[0], "db_password": secret},
                 "lines": [{"line": t, "file_offset": None, "ts": None} for t in texts], "sent_ts": None}
        out.append((f"gpu-7/ml/trainer-0/{kind}".encode(), serialize(batch, ctx)))
    # A secret in a source field (its own source: a dead letter's key is the record's key, kept for re-drive).
    hf = SAMPLES["huggingface_token"][0]
    batch = {"source": {**source, "pod": f"job-{hf}"}, "labels": {}, "sent_ts": None,
             "lines": [{"line": "started", "file_offset": None, "ts": None}]}
    out.append((b"gpu-7/ml/job-pod", serialize(batch, ctx)))
    kinds = sorted(SAMPLES)
    for part in range(3):  # undecodable records holding every secret: dead letters
        text = "\n".join(line for k in kinds[part::3] for line in SAMPLES[k][1])
        out.append((b"garbage-source", GARBAGE + text.encode()))
    return out


def read_topic(settings: Settings, topic: str, until: Callable[[list[Any]], bool], timeout_s: float = 90,
               decode: bool = True) -> list[Any]:
    deserialize = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    got: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and not until(got):
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            value = msg.value()
            got.append(deserialize(value, SerializationContext(topic, MessageField.VALUE)) if decode else
                       (msg.partition(), msg.offset(), msg.key(), value))
    finally:
        consumer.close()
    return got


def isolated_settings(stack: Settings, tag: str, bucket: str, key: str, web_port: int) -> Settings:
    """This test's own topics, project, bucket and dead-letter key; topics created, contracts registered."""
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "raw_partitions": 1, "events_partitions": 1, "metrics_partitions": 1})
    settings = stack.model_copy(update={
        "topics": topics, "routing": RoutingSettings(default_project=tag, projects={tag: ProjectRoute()}),
        "assemble": stack.assemble.model_copy(update={"app_id": f"{tag}-group", "idle_timeout_ms": 1500,
                                                      "take_within_s": 0.05, "web_port": web_port}),
        "object_store": stack.object_store.model_copy(update={"default_bucket": bucket}),
        "dead_letters": DeadLetterSettings(key=key)})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    return settings


def stored_in_elasticsearch(settings: Settings, project: str, group: str, topics: list[str]) -> list[dict]:
    """What the hot sink indexes from ``topics`` (indices deleted after)."""
    asyncio.run(_run_until(lambda stop: run_hot_worker(settings, stop, Capacity(50_000, 100_000_000), group),
                           lambda: committed_to_end(settings, group, topics), 90))
    es = es_client(settings.elasticsearch)
    pattern = f"sluice-logs-{project}-*,sluice-metrics-{project}-*"
    try:
        es.indices.refresh(index=pattern)
        return [h["_source"] for h in es.search(index=pattern, size=10_000, query={"match_all": {}})["hits"]["hits"]]
    finally:
        es.indices.delete(index=pattern, ignore_unavailable=True, allow_no_indices=True)


def stored_in_object_store(settings: Settings, bucket: str, group: str, topic: str) -> tuple[list[str], list[Any]]:
    """(object keys, events in the data objects) the cold sink writes from ``topic``."""
    cold = ColdSinkSettings(rotate_records=100, rotate_interval_s=300, idle_flush_s=2)
    runner = build_cold_runner(settings, group, conf=cold, topics=[topic])
    asyncio.run(_run_until(runner.run, lambda: committed_to_end(settings, group, [topic]), 90))
    runner.source.close()
    s3 = s3_client(settings.object_store)
    keys = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])]
    events = [e for k in keys if k.endswith(".avro")
              for e in fastavro.reader(io.BytesIO(s3.get_object(Bucket=bucket, Key=k)["Body"].read()))]
    return keys, events


def test_no_secret_reaches_elasticsearch_the_object_store_the_topics_or_dlq_show(
        stack: Settings, unique_name: Callable[[str], str], worker_processes: Any, free_tcp_port: int) -> None:
    tag = unique_name("sec")
    project, bucket, key = tag, f"{tag}-cold", new_key()
    settings = isolated_settings(stack, tag, bucket, key, free_tcp_port)
    topics = settings.topics
    records = raw_records(settings)
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    for k, v in records:
        producer.produce(settings.topics.raw, key=k, value=v)
    assert producer.flush(20) == 0

    # What the worker must emit: the same core over the same records, in this process.
    asm = Assembler(registry_schema_lookup(registry_client(settings.registry), logical_types=False),
                    ProjectRouter(project, topic_prefix=settings.topics.events_prefix, known=[project]))
    expected = [o for i, (k, v) in enumerate(records) for o in asm.feed(RawRecord(settings.topics.raw, 0, i, v, k))]
    expected += asm.flush_all()
    n_events = len({o.value["event_id"] for o in expected if o.kind == "event"})
    n_metrics = len({o.value["event_id"] for o in expected if o.kind == "metric"})
    n_letters = sum(o.kind == "dead_letter" for o in expected)
    assert n_events > len(SAMPLES) and n_metrics == len(SAMPLES) and n_letters == 3

    env = {**os.environ, "SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
           "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
           "SLUICE_TOPICS__ALERTS": topics.alerts, "SLUICE_ROUTING__DEFAULT_PROJECT": project,
           "SLUICE_ROUTING__PROJECTS": json.dumps({project: {}}),
           "SLUICE_ASSEMBLE__APP_ID": settings.assemble.app_id, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1500",
           "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05", "SLUICE_OBSERVABILITY__PORT": str(free_tcp_port),
           "SLUICE_DEAD_LETTERS__KEY": key}
    worker_processes(["worker", "assemble", "--loglevel", "warn"], env)

    events_topic = topics.events_topic(project)
    events = read_topic(settings, events_topic, lambda got: len({e["event_id"] for e in got}) >= n_events)
    metrics = read_topic(settings, topics.metrics, lambda got: len({e["event_id"] for e in got}) >= n_metrics)
    letters = read_topic(settings, topics.dlq, lambda got: len(got) >= n_letters, decode=False)
    assert len({e["event_id"] for e in events}) == n_events and len(letters) == n_letters
    assert leaks(json.dumps(events, default=str)) == {}, "events topic"
    assert leaks(json.dumps(metrics, default=str)) == {}, "metrics topic"
    # The dead-letter records as bytes on the topic: the originals are sealed, the texts redacted.
    assert leaks(repr([value for _p, _o, _k, value in letters])) == {}, "dead-letter topic"
    assert any(SAMPLES["json_password"][0] not in e["message"] and '"password": "[REDACTED' in e["message"]
               for e in events)
    assert any(e["labels"].get("db_password") == "[REDACTED:secret]" for e in events)
    assert any(e["attributes"].get("password") == "[REDACTED:secret]" for e in events)

    # The hot sink indexes the events topic; the cold sink writes it to the object store.
    docs = stored_in_elasticsearch(settings, project, f"{tag}-hot", [events_topic, topics.metrics])
    assert len(docs) == n_events + n_metrics
    assert leaks(json.dumps(docs)) == {}, "Elasticsearch"
    keys, cold_events = stored_in_object_store(settings, bucket, f"{tag}-cold", events_topic)
    assert len({e["event_id"] for e in cold_events}) == n_events
    assert leaks(json.dumps(cold_events, default=str)) == {}, "object store"
    assert leaks(repr(keys)) == {}, "object keys"

    # What an operator reads.
    cli_env = {"SLUICE_TOPICS__DLQ": topics.dlq}
    listing = CliRunner().invoke(cli, ["dlq", "ls"], env=cli_env)
    assert listing.exit_code == 0, listing.output
    assert f"{n_letters} dead letter(s)" in listing.output and leaks(listing.output) == {}
    for partition, offset, _k, _v in letters:
        shown = CliRunner().invoke(cli, ["dlq", "show", f"{partition}@{offset}"], env=cli_env)
        assert shown.exit_code == 0, shown.output
        assert "sealed (aes-256-gcm:" in shown.output and "[REDACTED:" in shown.output
        assert leaks(shown.output) == {}, shown.output
    partition, offset, _k, _v = letters[0]
    refused = CliRunner().invoke(cli, ["dlq", "show", "--raw", f"{partition}@{offset}"], env=cli_env)
    assert refused.exit_code != 0 and "dead_letters.key" in refused.output
    raw = CliRunner().invoke(cli, ["dlq", "show", "--raw", f"{partition}@{offset}"],
                             env={**cli_env, "SLUICE_DEAD_LETTERS__KEY": key})
    assert raw.exit_code == 0 and raw.stdout_bytes == records[-3][1], "the key opens the original bytes"


async def _run_until(run: Callable[[asyncio.Event], Any], done: Callable[[], bool], timeout_s: float) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(run(stop))
    deadline = time.monotonic() + timeout_s
    try:
        while not await asyncio.to_thread(done):
            if task.done():
                task.result()
            assert time.monotonic() < deadline, f"not done within {timeout_s} s"
            await asyncio.sleep(0.5)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
