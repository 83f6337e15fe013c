"""ColdSink driven by the real SinkRunner over an in-memory store and a fake Kafka (clock injected)."""

from __future__ import annotations

import asyncio
import io
import time
from collections import Counter

import fastavro
import pytest

from devtools.testing.objectstore import MemoryObjectStore, corpus_events
from devtools.testing.sources import UntrackedSource
from streams.config import Settings
from streams.sinks.base import Backoff, SinkRecord, SinkRunner
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.offsets import OffsetTracker
from streams.sinks.ratecontrol import Capacity, RateController

TOPIC = "logs.events.p"


class Crash(Exception):
    pass


class FakeKafka:
    """Partitions as lists; a consumer reads from the committed offsets; commit may crash."""

    def __init__(self, partitions: int = 2) -> None:
        self.logs: list[list[SinkRecord]] = [[] for _ in range(partitions)]
        self.committed = [0] * partitions

    def produce(self, events: list[dict]) -> None:
        for i, event in enumerate(events):
            partition = i % len(self.logs)
            log = self.logs[partition]
            log.append(SinkRecord(TOPIC, partition, len(log), None, event, b"", "p", 200 + len(event["message"])))

    def consumer(self, crash_on_commit: bool = False) -> FakeConsumer:
        return FakeConsumer(self, crash_on_commit)


class FakeConsumer(UntrackedSource):
    pauses_partitions = False

    def __init__(self, kafka: FakeKafka, crash_on_commit: bool) -> None:
        self.kafka = kafka
        self.position = list(kafka.committed)
        self.crash_on_commit = crash_on_commit

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        out = []
        for p, log in enumerate(self.kafka.logs):
            batch = log[self.position[p]:self.position[p] + max_records // len(self.kafka.logs)]
            self.position[p] += len(batch)
            out += [SinkRecord(r.topic, r.partition, r.offset, r.key, dict(r.value), r.raw, r.project, r.size)
                    for r in batch]
        return out

    def commit(self, points: dict[tuple[str, int], int]) -> None:
        if self.crash_on_commit:
            raise Crash("killed after the upload, before the commit")
        for (_t, p), offset in points.items():
            self.kafka.committed[p] = offset

    def pause(self, partitions: list[tuple[str, int]]) -> None: ...

    def resume(self, partitions: list[tuple[str, int]]) -> None: ...

    def pause_all(self) -> None: ...

    def resume_all(self) -> None: ...


def conf(**kw) -> ColdSinkSettings:
    base = {"rotate_records": 60, "rotate_interval_s": 120, "idle_flush_s": 5, "lifecycle_enabled": False}
    return ColdSinkSettings(**{**base, **kw})


def run(kafka: FakeKafka, store: MemoryObjectStore, cold: ColdSinkSettings, clock: list[float], steps: int = 50,
        crash: bool = False) -> SinkRunner:
    sink = ColdSink(Settings(), cold, store=store, clock=lambda: clock[0], backoff=Backoff(0.5, 1))  # type: ignore[arg-type]
    runner = SinkRunner(kafka.consumer(crash), sink, RateController(Capacity(10**6, 10**9)), None, "cold_sink",  # type: ignore[arg-type]
                        clock=lambda: clock[0], max_poll=100)

    async def go() -> None:
        await sink.start()
        for _ in range(steps):
            await runner.step(poll_timeout_s=0)
            await sink.uploads_ended()
            clock[0] += 1.0

    asyncio.run(go())
    return runner


def events_in(store: MemoryObjectStore) -> Counter:
    return Counter(e["event_id"] for body in store.data_objects().values() for e in fastavro.reader(io.BytesIO(body)))


def test_crash_between_upload_and_commit_replays_into_identical_objects(corpus) -> None:
    events = corpus_events(corpus, "p", "t", limit=400, ingest_step_ms=900)
    kafka = FakeKafka()
    kafka.produce(events)
    store = MemoryObjectStore()
    clock = [0.0]
    with pytest.raises(Crash):
        run(kafka, store, conf(), clock, crash=True)
    before = store.data_objects()
    assert before and kafka.committed == [0, 0]
    run(kafka, store, conf(), clock)
    assert kafka.committed == [len(log) for log in kafka.logs]

    reference = MemoryObjectStore()
    clean = FakeKafka()
    clean.produce(events)
    run(clean, reference, conf(), [0.0])
    assert store.data_objects() == reference.data_objects(), "same keys, same bytes"
    assert all(store.data_objects()[k] == v for k, v in before.items())
    counts = events_in(store)
    assert set(counts) == {e["event_id"] for e in events} and max(counts.values()) == 1


def test_an_idle_cut_is_recorded_and_a_replay_cuts_there_again(corpus) -> None:
    events = corpus_events(corpus, "p", "t", limit=300, ingest_step_ms=100)
    kafka = FakeKafka(partitions=1)
    kafka.produce(events[:50])  # then the partition goes quiet: the idle timer cuts 0..49
    store = MemoryObjectStore()
    clock = [0.0]
    with pytest.raises(Crash):
        run(kafka, store, conf(rotate_records=1000), clock, crash=True)
    first = store.data_objects()
    cuts = [k for (_b, k) in store.objects if k.startswith("_sluice/cuts/")]
    assert cuts == [f"_sluice/cuts/{TOPIC}+0+{0:020d}+{49:020d}"]
    kafka.produce(events[50:])  # more records arrive while the worker is down
    run(kafka, store, conf(rotate_records=1000), clock)
    after = store.data_objects()
    assert all(after[k] == v for k, v in first.items()), "the replay rebuilt the cut segment byte for byte"
    counts = events_in(store)
    assert len(counts) == 300 and max(counts.values()) == 1, "no event in two objects"


def test_store_outage_loses_nothing_and_retries_inside_the_sink(corpus) -> None:
    events = corpus_events(corpus, "p", "t", limit=200, ingest_step_ms=2000)
    kafka = FakeKafka()
    kafka.produce(events)
    store = MemoryObjectStore()
    store.fail = False
    clock = [0.0]
    sink_conf = conf()
    runner = run(kafka, store, sink_conf, clock, steps=1)
    store.fail = True
    runner_steps(runner, clock, 20)
    assert runner.sink.stats["upload_failures"] > 0  # type: ignore[attr-defined]
    store.fail = False
    runner_steps(runner, clock, 40)
    assert kafka.committed == [len(log) for log in kafka.logs]
    assert len(events_in(store)) == 200


def runner_steps(runner: SinkRunner, clock: list[float], steps: int) -> None:
    async def go() -> None:
        for _ in range(steps):
            await runner.step(poll_timeout_s=0)
            await runner.sink.uploads_ended()  # type: ignore[attr-defined]
            clock[0] += 1.0

    asyncio.run(go())


def test_drain_cuts_open_segments_and_commits_everything(corpus) -> None:
    events = corpus_events(corpus, "p", "t", limit=100, ingest_step_ms=10)
    kafka = FakeKafka()
    kafka.produce(events)
    store = MemoryObjectStore()
    clock = [0.0]
    cold = conf(rotate_records=1000, idle_flush_s=10**6)
    runner = run(kafka, store, cold, clock, steps=3)
    assert kafka.committed == [0, 0]
    runner.sink.begin_drain()  # type: ignore[attr-defined]
    asyncio.run(runner.drain())
    assert kafka.committed == [50, 50]


def test_acks_for_a_revoked_partition_are_ignored() -> None:
    tracker = OffsetTracker()
    tracker.add(TOPIC, 0, 5)
    tracker.forget(TOPIC, 0)
    tracker.ack(TOPIC, 0, 5)  # a store write that finished after the revocation
    assert tracker.commit_points() == {}


class BehindConsumer(FakeConsumer):
    """Reads nothing new and says it stands 700 records behind, its newest record two minutes old."""

    def lag(self) -> dict[tuple[str, int], int]:
        return {(TOPIC, 0): 700}

    def newest_read_ms(self) -> dict[tuple[str, int], int]:
        return {(TOPIC, 0): int((time.time() - 120) * 1000)}


def test_the_cold_stage_reports_how_far_behind_its_consumer_reads() -> None:
    from streams import observability as obs
    from streams.workers.cold import ColdSinkRunner, TopicProjectSource

    store = MemoryObjectStore()
    sink = ColdSink(Settings(), conf(), store=store, backoff=Backoff(0.5, 1))  # type: ignore[arg-type]
    source = TopicProjectSource(BehindConsumer(FakeKafka(), crash_on_commit=False), sink, "logs.events.")
    runner = ColdSinkRunner(source, sink, RateController(Capacity(10**6, 10**9)), None, "cold_lag_test",  # type: ignore[arg-type]
                            max_buffered_bytes=10**6)
    asyncio.run(runner.step(poll_timeout_s=0))
    behind_s = obs.REGISTRY.get_sample_value("sluice_consumer_lag_seconds", {"stage": "cold_lag_test"})
    assert behind_s is not None and 119 <= behind_s <= 125, "the age of the newest record the consumer read"
