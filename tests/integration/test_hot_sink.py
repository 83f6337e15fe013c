"""The hot tier against the real Kafka, registry and Elasticsearch, once per supported Elasticsearch major.

Input is real: corpus files through the assemble core (``parse_files``), Avro-serialised onto
fresh topics. Each test has its own project (so its own indices), topics and consumer groups.
``es_stack`` runs every test against a 9.x and an 8.x server (tests/conftest.py); the tests that start
servers of their own start them at the same version.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devtools.testing.elasticsearch import (
    EventProducer,
    committed_to_end,
    corpus_events,
    prepare_topics,
    settings_for,
)
from streams.clients import es_client
from streams.config import Settings
from streams.sinks.base import Backoff
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.sink import HotSink
from streams.sinks.ratecontrol import Capacity
from streams.workers.hot import build_runner, hot_topics, run_hot_worker

FAST = Capacity(50_000, 100_000_000)


def corpus_files(corpus: Path, count: int, start: int = 0) -> list[Path]:
    return sorted((corpus / "training").glob("*.log"))[start:start + count]


@pytest.fixture
def hot_env(es_stack: Settings, new_topic: Callable[..., str], unique_name: Callable[[str], str]) -> Any:
    """(settings, project): a project of its own with its own events, metrics and dead-letter topics."""
    project = unique_name("hot")
    settings = settings_for(es_stack, project, dlq=new_topic("hot-dlq"), metrics=new_topic("hot-metrics", 3))
    prepare_topics(settings)
    yield settings, project
    es = es_client(es_stack.elasticsearch)
    es.indices.delete(index=f"sluice-logs-{project}-*,sluice-metrics-{project}-*", ignore_unavailable=True,
                      allow_no_indices=True)


def doc_ids(settings: Settings, project: str) -> list[str]:
    es = es_client(settings.elasticsearch)
    pattern = f"sluice-logs-{project}-*,sluice-metrics-{project}-*"
    es.indices.refresh(index=pattern)
    hits = es.search(index=pattern, size=10_000, source=False, query={"match_all": {}})["hits"]["hits"]
    return [h["_id"] for h in hits]


def count(settings: Settings, project: str) -> int:
    es = es_client(settings.elasticsearch)
    pattern = f"sluice-logs-{project}-*,sluice-metrics-{project}-*"
    es.indices.refresh(index=pattern)
    return int(es.count(index=pattern)["count"])


async def run_until(runner_or_worker: Any, done: Callable[[], bool], timeout_s: float) -> None:
    """Run a worker coroutine factory until ``done()`` (checked off the loop) holds, then stop it."""
    stop = asyncio.Event()
    task = asyncio.create_task(runner_or_worker(stop))
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if task.done():
                task.result()
            if await asyncio.to_thread(done):
                break
            await asyncio.sleep(0.5)
        else:
            raise AssertionError(f"not done within {timeout_s} s")
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)


def test_replaying_a_range_leaves_the_document_count_unchanged(hot_env: Any, corpus: Path,
                                                                 unique_name: Callable[[str], str]) -> None:
    settings, project = hot_env
    sent = EventProducer(settings).send_all(corpus_events(corpus_files(corpus, 12), project,
                                                          task_types=("sft", None, "dpo")))
    assert len(sent) > 500
    topics = hot_topics(settings)
    first, replay = unique_name("hot-g"), unique_name("hot-replay")

    asyncio.run(run_until(lambda stop: run_hot_worker(settings, stop, FAST, first),
                          lambda: committed_to_end(settings, first, topics), 60))
    ids = doc_ids(settings, project)
    assert len(ids) == len(sent)
    assert set(ids) == set(sent)

    # The same range again, through a new consumer group: every document is overwritten in place.
    asyncio.run(run_until(lambda stop: run_hot_worker(settings, stop, FAST, replay),
                          lambda: committed_to_end(settings, replay, topics), 60))
    assert count(settings, project) == len(sent)

    es = es_client(settings.elasticsearch)
    mapping = es.indices.get_mapping(index=f"sluice-metrics-{project}-*")
    props = next(iter(mapping.body.values()))["mappings"]["properties"]
    assert props["step"]["type"] == "long"
    assert {m["type"] for m in props["metrics"]["properties"].values()} == {"double"}


def test_real_429s_are_retried_to_completion(hot_env: Any, corpus: Path, private_server: Any,
                                             unique_name: Callable[[str], str]) -> None:
    settings, project = hot_env
    private, _service = private_server("elasticsearch", elasticsearch_version=settings.stack.elasticsearch_version,
                                       elasticsearch_extra={"thread_pool.write.size": "1",
                                                            "thread_pool.write.queue_size": "1"})
    settings = settings.model_copy(update={"elasticsearch": private.elasticsearch})
    # Many task types: one bulk fans out to many shards, which the one-thread, one-slot write pool
    # cannot all take at once. A second writer adds concurrent bulks, as other clients would.
    sent = EventProducer(settings).send_all(corpus_events(
        corpus_files(corpus, 12), project, task_types=("sft", "dpo", "pretrain", "eval", "rm", "ppo", None)))
    group = unique_name("hot-429")
    hot = HotSinkSettings(max_batch_events=500)
    runner = build_runner(settings, FAST, group, hot)
    runner.backoff = Backoff(base_s=0.05, cap_s=1.0)
    noise_stop = threading.Event()
    noise = threading.Thread(target=_noise_writer, args=(settings, f"noise-{project}", noise_stop), daemon=True)
    noise.start()
    try:
        # A liveness bound, not a speed claim: under real 429s the budget sits at its AIMD floor.
        asyncio.run(run_until(runner.run, lambda: committed_to_end(settings, group, hot_topics(settings)), 300))
    finally:
        noise_stop.set()
        noise.join(10)
    sink = runner.sink
    assert isinstance(sink, HotSink)
    print(f"429 test: {sink.stats}, runner {runner.stats}, budget fraction {runner.controller.fraction:.2f}")
    assert sink.stats.statuses.get(429, 0) > 0, "the private node must really have answered 429"
    assert runner.stats["throttled"] > 0
    assert runner.controller.throttle_events > 0
    assert runner.stats["dead_lettered"] == 0
    ids = doc_ids(settings, project)
    assert len(ids) == len(sent)
    assert set(ids) == set(sent)


def _noise_writer(settings: Settings, index: str, stop: threading.Event) -> None:
    from elasticsearch import ApiError

    es = es_client(settings.elasticsearch)
    body = [line for i in range(200) for line in ({"index": {"_index": f"{index}-{i % 4}"}}, {"n": i})]
    while not stop.is_set():
        try:
            es.bulk(operations=body)
        except ApiError:
            time.sleep(0.01)


def test_a_mapping_conflict_lands_in_the_dlq_with_elasticsearchs_reason(hot_env: Any, corpus: Path,
                                                                       unique_name: Callable[[str], str]) -> None:
    settings, project = hot_env
    es = es_client(settings.elasticsearch)
    # An index template the test controls, above ours: `logger` as a number (say, an older mapping).
    # Every event that names its logger then fails to parse; the others index normally.
    template = f"test-{project}"
    es.indices.put_index_template(name=template, index_patterns=[f"sluice-logs-{project}-*"], priority=500,
                                  template={"mappings": {"properties": {"logger": {"type": "long"}}}})
    try:
        values = list(corpus_events(corpus_files(corpus, 40), project, include_metrics=False))
        with_logger = [v for v in values if v.get("logger")][:40]
        without = [v for v in values if not v.get("logger")][:200]
        assert with_logger, "the corpus has events with a logger name"
        sent = EventProducer(settings).send_all(with_logger + without)
        group = unique_name("hot-conflict")
        runner = build_runner(settings, FAST, group)
        asyncio.run(run_until(runner.run, lambda: committed_to_end(settings, group, hot_topics(settings)), 60))
    finally:
        es.indices.delete_index_template(name=template)

    letters = read_dead_letters(settings, len(with_logger))
    assert {k.decode() for k in letters} == {v["event_id"] for v in with_logger}
    for key, letter in letters.items():
        assert letter["original"] == sent[key.decode()], "the dead letter carries the record value as read"
        assert letter["stage"] == "hot_sink"
        assert letter["topic"] == settings.topics.events_topic(project)
        assert "failed to parse field [logger] of type [long]" in letter["error"], letter["error"]
        assert letter["error_type"] in ("document_parsing_exception", "mapper_parsing_exception")
    assert set(doc_ids(settings, project)) == {v["event_id"] for v in without}


def read_dead_letters(settings: Settings, expected: int, timeout_s: float = 20) -> dict[bytes, dict]:
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_deserializer

    decode = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"read-{time.time_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([settings.topics.dlq])
    out: dict[bytes, dict] = {}
    deadline = time.monotonic() + timeout_s
    try:
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(100, 1.0):
                if msg.error() is None:
                    out[msg.key()] = decode(msg.value(), SerializationContext(msg.topic(), MessageField.VALUE))
        for msg in consumer.consume(100, 2.0):  # nothing more should come
            if msg.error() is None:
                out[msg.key()] = decode(msg.value(), SerializationContext(msg.topic(), MessageField.VALUE))
    finally:
        consumer.close()
    return out


def test_elasticsearch_stopped_mid_write_loses_nothing(hot_env: Any, corpus: Path, private_server: Any,
                                                       unique_name: Callable[[str], str]) -> None:
    settings, project = hot_env
    private, service = private_server("elasticsearch", elasticsearch_version=settings.stack.elasticsearch_version)
    settings = settings.model_copy(update={"elasticsearch": private.elasticsearch})
    sent = EventProducer(settings).send_all(corpus_events(corpus_files(corpus, 20), project,
                                                          task_types=("sft", None)))
    group = unique_name("hot-outage")
    # Slow enough that the outage falls in the middle: 800 events/s budget, batches of 100.
    hot = HotSinkSettings(max_batch_events=100, request_timeout_s=5)
    runner = build_runner(settings, Capacity(1000, 10_000_000), group, hot)
    runner.backoff = Backoff(base_s=0.2, cap_s=2.0)  # the default 30 s cap would stretch the test
    sink = runner.sink
    assert isinstance(sink, HotSink)
    timeline: list[str] = []

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(runner.run(stop))
        while sink.stats.docs_acked < len(sent) // 4:
            await asyncio.sleep(0.05)
        timeline.append(f"stopping Elasticsearch at {sink.stats.docs_acked}/{len(sent)} acked")
        await asyncio.to_thread(service.down)
        failed_before = sink.stats.request_errors
        await asyncio.sleep(10)
        assert sink.stats.request_errors > failed_before, "the sink kept trying while the server was down"
        timeline.append(f"restarting; {sink.stats.request_errors} failed requests so far")
        await asyncio.to_thread(service.up)
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            if await asyncio.to_thread(committed_to_end, settings, group, hot_topics(settings)):
                break
            await asyncio.sleep(0.5)
        stop.set()
        await asyncio.wait_for(task, 60)

    asyncio.run(scenario())
    print(timeline, sink.stats, runner.stats)
    assert committed_to_end(settings, group, hot_topics(settings))
    ids = doc_ids(settings, project)
    assert len(ids) == len(sent), "no duplicates, nothing missing"
    assert set(ids) == set(sent)
    assert runner.stats["dead_lettered"] == 0


def test_new_label_and_attribute_keys_cost_no_mapping_update(hot_env: Any, corpus: Path) -> None:
    """Every new key of a field-by-field mapping is a cluster-state update on the master, which a quiet
    project's writes then queue behind. ``labels`` and ``attributes`` are flattened: keys stay searchable
    as keywords and the index mapping does not grow."""
    from streams.sinks.base import SinkRecord

    settings, project = hot_env
    values = list(corpus_events(corpus_files(corpus, 1), project, include_metrics=False))[:3]
    for n, v in enumerate(values):
        v["labels"] = {**(v.get("labels") or {}), "app": "trainer", "app.kubernetes.io/name": f"job-{n}",
                       f"only-in-doc-{n}": "x"}
        v["attributes"] = {**(v.get("attributes") or {}), f"attr-{n}": str(n)}

    async def write() -> int:
        sink = HotSink(settings.elasticsearch, settings.routing, HotSinkSettings())
        await sink.start()
        try:
            for i, v in enumerate(values):
                sink.add(SinkRecord("t", 0, i, None, v, b"", project, 1000))
            acked = 0
            while sink.buffered():
                acked += len((await sink.flush(0.0)).acked)
            return acked
        finally:
            await sink.close()

    assert asyncio.run(write()) == len(values)
    es = es_client(settings.elasticsearch)
    es.indices.refresh(index=f"sluice-logs-{project}-*")
    for index, body in es.indices.get_mapping(index=f"sluice-logs-{project}-*").body.items():
        props = body["mappings"]["properties"]
        assert props["labels"] == {"type": "flattened", "ignore_above": 1024}, (index, props["labels"])
        assert props["attributes"] == {"type": "flattened", "ignore_above": 1024}, (index, props["attributes"])
    hits = es.search(index=f"sluice-logs-{project}-*", query={"term": {"labels.app.kubernetes.io/name": "job-1"}},
                     aggs={"apps": {"terms": {"field": "labels.app"}}})
    assert [h["_id"] for h in hits["hits"]["hits"]] == [values[1]["event_id"]]
    assert hits["aggregations"]["apps"]["buckets"] == [{"key": "trainer", "doc_count": 1}]
    assert es.count(index=f"sluice-logs-{project}-*", query={"term": {"attributes.attr-2": "2"}})["count"] == 1


def _count_when_searchable(es: Any, index: str, within_s: float = 30.0) -> int:
    """The index's document count; a busy node may answer 503 for a shard that has only just started."""
    from elasticsearch import ApiError

    deadline = time.monotonic() + within_s
    while True:
        try:
            return int(es.count(index=index)["count"])
        except ApiError as e:
            if e.status_code != 503 or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_tomorrows_indices_are_created_before_midnight(hot_env: Any, corpus: Path) -> None:
    """Ten minutes before midnight UTC (the sink's wall clock says so), the families written today get
    tomorrow's index, empty and with the template's mappings, before any document of tomorrow."""
    from streams.sinks.base import SinkRecord
    from streams.sinks.elasticsearch.precreate import DAY_MS
    from streams.sinks.elasticsearch.request import IndexNamer, day_of, encode

    settings, project = hot_env
    midnight_ms = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS
    events = list(corpus_events(corpus_files(corpus, 2), project, include_metrics=False, task_types=("sft", None)))
    values = []
    for task_type in ("sft", None):  # a few events of two task types: two index families
        values += [v for v in events if v.get("task_type") == task_type][:10]
    for v in values:
        v["timestamp"] = midnight_ms - 700_000  # today, shortly before the wall clock below
    namer = IndexNamer.of(settings.routing, settings.hot)
    today = {encode(v, namer).index for v in values}
    assert len(today) >= 2, f"the corpus events fall into several task types: {today}"
    tomorrow = sorted(i.replace(day_of(midnight_ms - 1), day_of(midnight_ms)) for i in today)
    mono = [0.0]

    async def write() -> None:
        sink = HotSink(settings.elasticsearch, settings.routing, HotSinkSettings(), clock=lambda: mono[0],
                       wall=lambda: (midnight_ms - 600_000) / 1000)
        await sink.start()
        try:
            for i, v in enumerate(values):
                sink.add(SinkRecord("t", 0, i, None, v, b"", project, 1000))
            while sink.buffered():
                await sink.flush(mono[0])
            mono[0] += 61.0  # the next flush looks at the day again
            await sink.flush(mono[0])
            deadline = time.monotonic() + 30
            while not es.indices.exists(index=",".join(tomorrow)) and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
        finally:
            await sink.close()

    es = es_client(settings.elasticsearch)
    asyncio.run(write())
    for index in tomorrow:
        assert es.indices.exists(index=index), f"{index} was not created ahead"
        es.cluster.health(index=index, wait_for_status="yellow", timeout="30s")  # its shard started: searchable
        assert _count_when_searchable(es, index) == 0
        props = es.indices.get_mapping(index=index)[index]["mappings"]["properties"]
        assert props["labels"]["type"] == "flattened" and props["message"]["type"] == "text", props
