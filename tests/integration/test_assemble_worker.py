"""The assemble worker (`sluice worker assemble`, a real process) on the real Kafka and registry.

Each test gets its own raw, events, metrics and dead-letter topics and its own consumer group,
passed to the worker through the SLUICE_* environment like an operator would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.serialization import MessageField, SerializationContext

from streams.assemble.pipeline import parse_files
from streams.avro_io import avro_deserializer, avro_serializer
from streams.config import Settings
from streams.contracts import register_all
from streams.rawbatch import default_source, read_lines, source_key
from streams.topics import create_topics, topic_specs

OOM_FILE = "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"


@pytest.fixture
def isolated(stack: Settings, unique_name: Callable[[str], str]) -> Settings:
    """Settings whose topics and group are this test's own; topics created, schemas registered."""
    tag = unique_name("asm")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts", "raw_partitions": 2, "events_partitions": 1,
    })
    assemble = stack.assemble.model_copy(update={"app_id": f"{tag}-group", "idle_timeout_ms": 2000,
                                                 "take_within_s": 0.05})
    settings = stack.model_copy(update={"topics": topics, "assemble": assemble})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    return settings


def worker_env(settings: Settings) -> dict[str, str]:
    t, a = settings.topics, settings.assemble
    return {
        **os.environ,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_ASSEMBLE__APP_ID": a.app_id, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": str(a.idle_timeout_ms),
        "SLUICE_ASSEMBLE__TAKE_WITHIN_S": str(a.take_within_s),
    }


@pytest.fixture
def start_worker(isolated: Settings, tmp_path: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(procs)}.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "warn"],
                                env=worker_env(isolated), stdout=log, stderr=subprocess.STDOUT)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def produce_lines(settings: Settings, path: Path, lines: list[tuple[int, str]], source: dict[str, Any]) -> None:
    """One RawBatch record per line: the hardest case for the merger (a block spans many records)."""
    serialize = avro_serializer(settings, "raw_batch")
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    for offset, text in lines:
        batch = {"source": source, "labels": {"project": "default", "task_id": "t-oom"},
                 "lines": [{"line": text, "file_offset": offset, "ts": None}], "sent_ts": None}
        producer.produce(settings.topics.raw, key=source_key(source), value=serialize(batch, ctx))
    assert producer.flush(20) == 0


def read_events(settings: Settings, until: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 60,
                topic: str | None = None) -> list[dict[str, Any]]:
    deserialize = avro_deserializer(settings)
    topic = topic or settings.topics.events_topic(settings.routing.default_project)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and not until(events):
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            events.append(deserialize(msg.value(), SerializationContext(msg.topic(), MessageField.VALUE)))
    finally:
        consumer.close()
    return events


def test_worker_matches_offline_parse_and_dead_letters_garbage(isolated: Settings, start_worker, corpus) -> None:
    path = corpus / OOM_FILE
    source = default_source(path)
    produce_lines(isolated, path, list(read_lines(path)), source)
    # Magic byte 0 with a schema id the registry never issued: a dead letter, not a crash.
    garbage = b"\x00\x7f\xff\xff\xf0" + b"\x02junk"
    producer = Producer(isolated.kafka.client_config())
    producer.produce(isolated.topics.raw, key=b"garbage-source", value=garbage)
    producer.flush(10)
    start_worker()
    expected = [e["message"] for e in parse_files([path]) if "message" in e]
    events = read_events(isolated, lambda ev: len({e["event_id"] for e in ev}) >= len(expected))
    assert sorted({e["event_id"]: e["message"] for e in events}.values()) == sorted(expected)
    oom = [e for e in events if e["error_class"] == "cuda_oom"]
    assert oom and oom[0]["line_count"] == 12 and oom[0]["level"] == "ERROR"
    assert all(e["raw"]["topic"] == isolated.topics.raw for e in events)

    letters = read_events(isolated, lambda ev: len(ev) >= 1, topic=isolated.topics.dlq)
    assert len(letters) == 1
    assert letters[0]["original"] == garbage
    assert letters[0]["error_type"] == "schema_not_found"
    assert letters[0]["topic"] == isolated.topics.raw and letters[0]["stage"]


def test_kill_9_in_the_middle_of_a_traceback_loses_and_splits_nothing(
    isolated: Settings, start_worker, corpus
) -> None:
    # Quiet for longer than the idle timeout, a source's open block is emitted as it stands (that is
    # how a dead job's last traceback comes out); the kill must land before that.
    isolated.assemble.idle_timeout_ms = 8000
    path = corpus / OOM_FILE
    lines = list(read_lines(path))
    tb_first = next(i for i, (_o, t) in enumerate(lines) if t.startswith("Traceback"))
    cut = tb_first + 4  # the worker has read the start of the traceback, not its end
    source = default_source(path)
    produce_lines(isolated, path, lines[:cut], source)

    worker = start_worker()
    before = read_events(isolated, lambda ev: len({e["event_id"] for e in ev}) >= tb_first)
    assert len({e["event_id"] for e in before}) == tb_first, "the lines before the traceback are out"
    time.sleep(2.5)  # let the worker commit what it may (Faust commits every second)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)

    produce_lines(isolated, path, lines[cut:], source)
    start_worker()
    expected = [e["message"] for e in parse_files([path]) if "message" in e]
    events = read_events(isolated, lambda ev: any(e["error_class"] == "cuda_oom" for e in ev)
                         and len({e["event_id"] for e in ev}) >= len(expected), timeout_s=90)
    by_id = {e["event_id"]: e for e in events}
    assert sorted(e["message"] for e in by_id.values()) == sorted(expected), "nothing lost, nothing split"
    tracebacks = [e for e in by_id.values() if "Traceback (most recent call last)" in e["message"]]
    assert len(tracebacks) == 1, "one traceback, under one id"
    message = tracebacks[0]["message"]
    assert message.startswith(lines[tb_first][1]) and message.endswith(lines[-1][1])
    # Re-emitted events (read again after the kill) carry the ids they had before.
    assert {e["event_id"] for e in before} <= set(by_id)
