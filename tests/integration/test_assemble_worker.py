"""The assemble worker (`sluice worker assemble`, a real process) on the real Kafka and registry.

Each test gets its own raw, events, metrics and dead-letter topics and its own consumer group,
passed to the worker through the SLUICE_* environment like an operator would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
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
def isolated(stack: Settings, unique_name: Callable[[str], str], free_tcp_port: int) -> Settings:
    """Settings whose topics and group are this test's own; topics created, schemas registered."""
    tag = unique_name("asm")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts", "raw_partitions": 2, "events_partitions": 1,
    })
    assemble = stack.assemble.model_copy(update={"app_id": f"{tag}-group", "idle_timeout_ms": 2000,
                                                 "take_within_s": 0.05, "web_port": free_tcp_port})
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
        "SLUICE_OBSERVABILITY__PORT": str(a.web_port),
    }


@pytest.fixture
def start_worker(isolated: Settings, worker_processes: Callable[..., Any]) -> Callable[[], subprocess.Popen[bytes]]:
    def start() -> subprocess.Popen[bytes]:
        proc, _log = worker_processes(["worker", "assemble", "--loglevel", "warn"], worker_env(isolated))
        return proc  # type: ignore[no-any-return]

    return start


def produce_lines(settings: Settings, path: Path, lines: list[tuple[int, str]], source: dict[str, Any],
                  transactional_id: str | None = None) -> None:
    """One RawBatch record per line: the hardest case for the merger (a block spans many records).
    With ``transactional_id``, all in one transaction (its commit marker ends each partition)."""
    serialize = avro_serializer(settings, "raw_batch")
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    conf = {**settings.kafka.client_config(), "enable.idempotence": True}
    producer = Producer({**conf, "transactional.id": transactional_id} if transactional_id else conf)
    if transactional_id:
        producer.init_transactions(30)
        producer.begin_transaction()
    for offset, text in lines:
        batch = {"source": source, "labels": {"project": "default", "task_id": "t-oom"},
                 "lines": [{"line": text, "file_offset": offset, "ts": None}], "sent_ts": None}
        producer.produce(settings.topics.raw, key=source_key(source), value=serialize(batch, ctx))
    if transactional_id:
        producer.commit_transaction(30)
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


def test_a_transactional_producers_last_traceback_still_comes_out(isolated: Settings, start_worker,
                                                                  corpus) -> None:
    """The commit marker takes the partition's last offset but is never read as a record: the worker
    must still see that it has read everything, or the idle flush never emits the open last block."""
    path = corpus / OOM_FILE
    produce_lines(isolated, path, list(read_lines(path)), default_source(path), transactional_id=isolated.topics.raw)
    start_worker()
    expected = [e["message"] for e in parse_files([path]) if "message" in e]
    events = read_events(isolated, lambda ev: len({e["event_id"] for e in ev}) >= len(expected), timeout_s=40)
    assert sorted({e["event_id"]: e["message"] for e in events}.values()) == sorted(expected)
    assert events[-1]["error_class"] == "cuda_oom", "the last block, emitted by the idle flush"


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


def test_metrics_and_health_endpoints_show_real_figures(isolated: Settings, start_worker, corpus) -> None:
    import httpx

    path = corpus / OOM_FILE
    produce_lines(isolated, path, list(read_lines(path)), default_source(path))
    start_worker()
    base = f"http://127.0.0.1:{isolated.assemble.web_port}"
    deadline = time.monotonic() + 60
    text = ""
    while time.monotonic() < deadline:
        try:
            text = httpx.get(f"{base}/metrics", timeout=2).text
        except httpx.HTTPError:
            time.sleep(0.5)
            continue
        if 'sluice_outputs_total{kind="event",stage="assemble"}' in text and "sluice_records_in_total" in text:
            got = [line for line in text.splitlines() if line.startswith("sluice_records_in_total{")]
            if got and float(got[0].split()[-1]) >= 22:
                break
        time.sleep(0.5)
    records_in = [line for line in text.splitlines() if line.startswith("sluice_records_in_total{")]
    assert records_in and float(records_in[0].split()[-1]) == 22.0, text[-2000:]  # 22 one-line records
    assert httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    assert httpx.get(f"{base}/readyz", timeout=2).status_code == 200


def test_top_shows_lag_and_rates_of_a_running_worker(isolated: Settings, start_worker, corpus) -> None:
    from streams.top import Reader, compare

    path = corpus / OOM_FILE
    lines = list(read_lines(path))
    group = isolated.assemble.app_id
    start_worker()
    produce_lines(isolated, path, lines, default_source(path))
    raw_end = sum(1 for _ in lines)
    deadline = time.monotonic() + 60
    reader = Reader(isolated, None, [])
    snap = reader.snapshot()
    while time.monotonic() < deadline:
        committed = sum(o or 0 for (t, _p), o in snap.committed.get(group, {}).items() if t == isolated.topics.raw)
        if committed >= raw_end:
            break
        time.sleep(1)
        snap = reader.snapshot()
    first = snap
    produce_lines(isolated, path, lines, {**default_source(path), "host": "second-run"})
    time.sleep(4)
    url = f"http://127.0.0.1:{isolated.assemble.web_port}/metrics"
    reader.metrics_urls = [url]
    second = reader.snapshot()
    reader.close()
    view = compare(first, second)
    raw_rows = [r for r in view.groups if r.group == group and r.topic == isolated.topics.raw]
    assert raw_rows and sum(r.lag for r in raw_rows) == 0, raw_rows
    assert sum(r.out_per_s for r in raw_rows) > 0, "the group committed the second burst"
    events_topic = next(t for t in view.topics if t.topic == isolated.topics.events_topic("default"))
    assert events_topic.end_offset >= 2 * 11 and events_topic.offsets_in_per_s > 0
    assert view.dead_letters == 0 and view.dead_letters_per_s == 0
    assert url in second.scraped and any(k.startswith("sluice_records_in_total") for k in second.scraped[url])
    assert second.scraped[url].get('sluice_worker_ready{stage="assemble"}') == 1.0


POISON_VALUES = [  # poison inputs seen in the wild or built to break a step: each used to end the turn
    b'{"a":' * 5000,
    b'{"step": 9223372036854775808}',
    b"iteration 99999999999999999999999/ 5 | consumed samples: 8 | lm loss: 1.0E+00 |\n",
    b'{"log": "hello\\n", "stream": "stdout", "host": 5}',
    b'{"message": "hello", "host": ["a", "b"]}',
    b'{"log": "hello\\n", "kubernetes": {"namespace_name": {"x": 1}}}',
]


def test_poison_records_are_one_dead_letter_each_and_the_worker_goes_on(
    isolated: Settings, worker_processes: Callable[..., Any], corpus: Path,
) -> None:
    from confluent_kafka import TopicPartition

    path = corpus / OOM_FILE
    lines = list(read_lines(path))
    source = default_source(path)
    half = len(lines) // 2
    produce_lines(isolated, path, lines[:half], source)
    producer = Producer(isolated.kafka.client_config())
    poison_at: dict[tuple[int, int], bytes] = {}

    def delivered(err: Any, msg: Any) -> None:
        assert err is None, err
        poison_at[(msg.partition(), msg.offset())] = msg.value()

    for i, value in enumerate(POISON_VALUES):  # each in both partitions: its own source, two keys
        for k in range(2):
            producer.produce(isolated.topics.raw, key=f"poison-{i}-{k}".encode(), value=value, on_delivery=delivered)
    assert producer.flush(20) == 0
    produce_lines(isolated, path, lines[half:], source)
    proc, log = worker_processes(["worker", "assemble", "--loglevel", "warn"], worker_env(isolated))

    expected = [e["message"] for e in parse_files([path]) if "message" in e]

    def good(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in ev if (e["raw"]["partition"], e["raw"]["first_offset"]) not in poison_at]

    read_events(isolated, lambda ev: len(good(ev)) >= len(expected), timeout_s=90)
    letters = read_events(isolated, lambda ev: len(ev) >= len(poison_at), topic=isolated.topics.dlq, timeout_s=60)
    events = read_events(isolated, lambda ev: False, timeout_s=5)  # all of them, poison-made ones too
    ids = [e["event_id"] for e in good(events)]
    assert len(ids) == len(set(ids)), "every good event once: no turn was re-read after a crash"
    assert sorted(e["message"] for e in good(events)) == sorted(expected)
    points = read_events(isolated, lambda ev: False, timeout_s=3, topic=isolated.topics.metrics)
    fixed = [e for e in events + points if (e["raw"]["partition"], e["raw"]["first_offset"]) in poison_at]
    held = Counter((x["partition"], x["offset"]) for x in letters) + Counter(
        (e["raw"]["partition"], e["raw"]["first_offset"]) for e in fixed)
    assert held == dict.fromkeys(poison_at, 1), "each poison record is one output: a dead letter until it is parsed"
    assert {x["error_type"] for x in letters} <= {"json_limits", "internal"}
    assert all(x["topic"] == isolated.topics.raw and x["stage"] == "assemble" for x in letters)

    # The group's committed offsets pass the poison records: nothing is read again, nothing skipped.
    consumer = Consumer({**isolated.kafka.client_config(), "group.id": isolated.assemble.app_id})
    try:
        parts = [TopicPartition(isolated.topics.raw, p) for p in range(isolated.topics.raw_partitions)]
        ends = {tp.partition: consumer.get_watermark_offsets(tp, 10)[1] for tp in parts}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            committed = {tp.partition: tp.offset for tp in consumer.committed(parts, 10)}
            if committed == ends:
                break
            time.sleep(1)
        assert committed == ends
    finally:
        consumer.close()
    assert proc.poll() is None, "the worker is still running"
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "rashed" not in text, text[-3000:]
