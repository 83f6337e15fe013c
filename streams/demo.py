"""The README's first command: a real burst from the corpus through every stage that exists.

Each step prints what it did and where to look, so a newcomer can check it by hand.
"""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import fastavro

from streams.avro_io import avro_deserializer, avro_serializer
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, Settings
from streams.contracts import parsed_schema
from streams.errors import SluiceError
from streams.rawbatch import batches_from_file, default_source, source_key

CORPUS = REPO_ROOT.parent / "shared" / "corpus"
# A CUDA OOM at a barrier and a multi-rank NCCL watchdog timeout: the bursts Sluice exists for.
DEMO_FILES = (
    "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
    "training/sglang_nccl_watchdog_timeout_hardwrapped.log",
    "training/vllm_serve_jamba_cuda_oom_kv_cache.log",
)


def demo_files() -> list[Path]:
    paths = [CORPUS / f for f in DEMO_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise SluiceError(f"demo corpus files missing: {missing}; the corpus must sit at {CORPUS}")
    return paths


def produce_raw(
    settings: Settings, paths: list[Path], project: str, run_id: str, batch_lines: int = 50
) -> int:
    """Avro RawBatch records (schema from the registry) to logs.raw; returns lines sent."""
    from confluent_kafka import Producer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = avro_serializer(settings, "raw_batch")
    producer = Producer({**settings.kafka.client_config(), "linger.ms": 20, "compression.type": "zstd",
                         "enable.idempotence": True})
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    now_ms = int(time.time() * 1000)
    sent = 0
    errors: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    for path in paths:
        labels = {"project": project, "task_id": f"demo-{path.stem[:40]}", "task_type": "pretrain",
                  "demo_run": run_id}
        source = default_source(path)
        for batch in batches_from_file(path, source, labels, batch_lines, now_ms):
            producer.produce(settings.topics.raw, key=source_key(source), value=serializer(batch, ctx),
                             on_delivery=on_delivery)
            sent += len(batch["lines"])
            producer.poll(0)
    if producer.flush(30) or errors:
        raise SluiceError(f"producing to {settings.topics.raw} failed: {errors[:3] or 'flush timed out'}")
    return sent


def read_back_raw(settings: Settings, run_id: str, expect_lines: int, timeout_s: float = 30.0) -> int:
    """Read logs.raw from the start with a throwaway group; count this run's lines."""
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserializer = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"sluice-demo-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([settings.topics.raw])
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    seen = 0
    deadline = time.monotonic() + timeout_s
    try:
        while seen < expect_lines and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            batch = deserializer(msg.value(), ctx)
            if batch["labels"].get("demo_run") == run_id:
                seen += len(batch["lines"])
    finally:
        consumer.close()
    return seen


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
    from streams.contracts import register_all
    from streams.topics import create_topics

    create_topics(settings)
    register_all(settings)
    say(f"topics and schemas ready (registry {settings.registry.url})")

    paths = demo_files()
    run_id = uuid.uuid4().hex[:12]
    sent = produce_raw(settings, paths, settings.routing.default_project, run_id)
    say(f"1. produced {sent} raw lines from {len(paths)} corpus files to {settings.topics.raw} as Avro")
    seen = read_back_raw(settings, run_id, sent)
    say(f"   read back {seen} lines through the registry (schema ids in the Confluent wire format)")
    if seen < sent:
        raise SluiceError(f"read back only {seen} of {sent} lines from {settings.topics.raw}")

    first = paths[0].read_text(errors="replace").splitlines()
    doc = {"event_id": f"demo-{uuid.uuid4().hex[:8]}", "message": first[-1], "project": "default"}
    index = "sluice-demo"
    hits = es_roundtrip(settings, index, doc)
    say(f"2. indexed one event into Elasticsearch and found it: {hits} hit")
    say(f"   look: curl '{settings.elasticsearch.url}/{index}/_search?q=_id:{doc['event_id']}&pretty'")

    key = f"demo/{paths[0].stem}.avro"
    count = object_roundtrip(settings, key, first)
    say(f"3. wrote s3://{settings.object_store.default_bucket}/{key} ({count} Avro records) and read it back")
    say(f"   look: the object store's files under {settings.stack.dir / 'objectstore' / 'data'}")
