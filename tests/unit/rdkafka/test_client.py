"""The consumer client's thread against a fake librdkafka consumer: its buffer, pauses, seeks,
rebalances, marker-only advances and failures. Every wait has a timeout; every client is stopped."""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from confluent_kafka import KafkaError
from fake_librdkafka import FakeLibrdkafka, wait_for

from streams.rdkafka.batch import RecordBatch
from streams.rdkafka.client import OFFSET_BEGINNING, ConsumerClient, ConsumerClosed, TopicPart

T = "logs"
P0, P1 = (T, 0), (T, 1)
WAIT_S = 5.0


class Rebalances:
    """``on_rebalance``: queues each event with a future the test completes (at once if ``auto``)."""

    def __init__(self, auto: bool = True) -> None:
        self.auto = auto
        self.events: queue.Queue[tuple[str, list[TopicPart], concurrent.futures.Future[Any]]] = queue.Queue()

    def __call__(self, kind: str, tps: list[TopicPart]) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if self.auto:
            future.set_result(None)
        self.events.put((kind, sorted(tps), future))
        return future

    def next(self) -> tuple[str, list[TopicPart], concurrent.futures.Future[Any]]:
        return self.events.get(timeout=WAIT_S)


class Running:
    def __init__(self, client: ConsumerClient, rebalances: Rebalances, woken: threading.Event) -> None:
        self.client, self.rebalances, self.woken = client, rebalances, woken
        fake = client.consumer
        assert isinstance(fake, FakeLibrdkafka)
        self.fake = fake

    def run(self, fn: Any, *args: Any) -> Any:
        return self.client.call(fn, *args).result(WAIT_S)

    def assign(self, *tps: TopicPart) -> None:
        """Subscribe (once) and have the fake assign ``tps``; the rebalance is handled at once."""
        if not self.fake.subscribed:
            self.run(self.client.subscribe, [T])
        self.fake.rebalance("assign", list(tps))
        kind, got, _done = self.rebalances.next()
        assert (kind, got) == ("assign", sorted(tps))

    def collect(self, tps: list[TopicPart], until: Any, what: str) -> list[RecordBatch]:
        """Take from the buffer until ``until(batches so far)`` holds."""
        batches: list[RecordBatch] = []

        def more() -> bool:
            batches.extend(self.client.take(tps))
            return bool(until(batches))

        wait_for(more, what)
        return batches


@contextmanager
def running(auto_rebalance: bool = True, **options: Any) -> Iterator[Running]:
    rebalances = Rebalances(auto_rebalance)
    woken = threading.Event()
    client = ConsumerClient({"group.id": "unit"}, on_rebalance=rebalances, wakeup=woken.set,
                            consumer_factory=FakeLibrdkafka, idle_s=0.002, **options)
    client.start()
    try:
        yield Running(client, rebalances, woken)
    finally:
        client.stop(WAIT_S)


def offsets(batches: list[RecordBatch]) -> list[int]:
    return [record.offset() for batch in batches for record in batch.records]


def count(n: int) -> Any:
    return lambda batches: len(offsets(batches)) >= n


# -- the buffer --------------------------------------------------------------------------------------
def test_records_are_buffered_per_partition_and_taken_once() -> None:
    with running() as r:
        r.fake.produce(T, 0, b"a0", b"a1", b"a2")
        r.fake.produce(T, 1, b"b0", b"b1")
        r.client.set_active({P0, P1})
        r.woken.clear()
        r.assign(P0, P1)
        wait_for(r.woken.is_set, "records of both partitions buffered")  # one consume() brings all five
        (only_p1,) = r.client.take([P1])
        assert (only_p1.topic, only_p1.partition, only_p1.end) == (T, 1, 2)
        assert [rec.value() for rec in only_p1.records] == [b"b0", b"b1"]
        assert r.client.take([P1]) == [], "a partition's records are taken once"
        (p0,) = r.client.take([P0, P1])
        assert (p0.partition, [rec.offset() for rec in p0.records], p0.end) == (0, [0, 1, 2], 3)
        assert r.client.take([P0, P1]) == []
        assert r.client.highwaters == {P0: 3, P1: 2}
        r.fake.produce(T, 0, b"a3")
        later = r.collect([P0], count(1), "a record produced later")
        assert offsets(later) == [3], "records already taken are not handed out again"


def test_a_non_fatal_error_is_skipped_and_reading_goes_on() -> None:
    with running() as r:
        r.client.set_active({P0})
        r.assign(P0)
        r.fake.fail(KafkaError(KafkaError._TRANSPORT, "broker went away"))
        r.fake.produce(T, 0, b"x", b"y")
        assert offsets(r.collect([P0], count(2), "records after a transient error")) == [0, 1]
        assert r.client.error is None


# -- pauses ------------------------------------------------------------------------------------------
def test_partitions_not_active_or_held_are_paused_and_resumed_when_wanted() -> None:
    with running() as r:
        r.client.set_active({P0})
        r.assign(P0, P1)
        wait_for(lambda: r.fake.paused == {P1}, "only the inactive partition paused")
        r.fake.produce(T, 1, b"b0")
        r.fake.consumes_after(3)
        assert r.client.take([P0, P1]) == [], "nothing is fetched for an inactive partition"

        r.client.set_active({P0, P1})
        wait_for(lambda: not r.fake.paused, "both partitions resumed")
        assert offsets(r.collect([P1], count(1), "the record of the resumed partition")) == [0]

        r.run(r.client.seek, T, 0, 0, True)  # sought to its commit and held: not fetched until released
        wait_for(lambda: r.fake.paused == {P0}, "the held partition paused")
        r.fake.produce(T, 0, b"a0")
        r.fake.consumes_after(3)
        assert r.client.take([P0]) == []
        r.client.release()
        wait_for(lambda: not r.fake.paused, "the released partition resumed")
        assert offsets(r.collect([P0], count(1), "the released partition's record")) == [0]


def test_a_partition_with_a_full_buffer_is_paused_until_taken_from() -> None:
    with running(max_records=3, buffer_records=3) as r:
        r.fake.produce(T, 0, *(b"r%d" % i for i in range(7)))
        r.client.set_active({P0})
        r.assign(P0)
        wait_for(r.woken.is_set, "the first records buffered")
        r.fake.consumes_after(2)
        assert P0 in r.fake.paused, "the full partition is paused"
        resumes = len(r.fake.resume_calls)
        (first,) = r.client.take([P0])
        assert [rec.offset() for rec in first.records] == [0, 1, 2], "nothing more buffered while full"
        wait_for(lambda: len(r.fake.resume_calls) > resumes, "the partition resumed once taken from")
        assert offsets(r.collect([P0], count(4), "the rest")) == [3, 4, 5, 6]


# -- seeks -------------------------------------------------------------------------------------------
def test_a_seek_drops_the_buffer_and_moves_the_epoch() -> None:
    with running() as r:
        r.client.set_active({P0})
        r.assign(P0)
        r.fake.produce(T, 0, b"a0", b"a1", b"a2")
        (old,) = r.collect([P0], count(3), "the first records")
        assert r.client.stale_offset(T, 0, old.epoch) is None, "records of the current epoch are not stale"
        r.woken.clear()
        r.fake.produce(T, 0, b"a3", b"a4")
        wait_for(r.woken.is_set, "two more records buffered")

        r.run(r.client.seek, T, 0, 1)
        assert r.client.stale_offset(T, 0, old.epoch) == 0, "an old epoch's records sit just below the seek"
        again = r.collect([P0], count(4), "the records from the seek on")
        assert offsets(again) == [1, 2, 3, 4], "what was buffered before the seek is not handed out"
        assert {batch.epoch for batch in again} == {old.epoch + 1}
        assert r.client.stale_offset(T, 0, old.epoch + 1) is None

        r.run(r.client.seek, T, 0, OFFSET_BEGINNING)
        assert r.client.stale_offset(T, 0, old.epoch + 1) == -1, "below a logical offset: -1"
        assert offsets(r.collect([P0], count(5), "the whole log again")) == [0, 1, 2, 3, 4]


# -- rebalances --------------------------------------------------------------------------------------
def test_an_assignment_pauses_everything_and_calls_are_served_while_it_is_handled() -> None:
    with running(auto_rebalance=False) as r:
        r.fake.produce(T, 0, b"a0", b"a1", b"a2")
        r.run(r.client.subscribe, [T])
        r.fake.rebalance("assign", [P0, P1])
        kind, tps, done = r.rebalances.next()
        assert (kind, tps) == ("assign", [P0, P1])
        assert r.fake.paused == {P0, P1}, "nothing is fetched until the application asks"
        assert r.client.assigned == {P0, P1}
        assert r.client.generation == 1
        assert r.client.group_metadata == "group-metadata-of-generation-1"
        assert r.client.member_id == "member-1"

        # The thread waits for the event to be handled, serving the application's calls meanwhile.
        r.run(r.client.seek, T, 0, 1)
        assert r.fake.seeks == [P0]
        consumes = r.fake.consumes
        r.client.set_active({P0, P1})
        assert r.run(lambda: set(r.fake.paused)) == {P0, P1}, "no fetch while the assignment is being handled"
        assert r.fake.consumes == consumes
        done.set_result(None)

        wait_for(lambda: not r.fake.paused, "the active partitions resumed")
        assert offsets(r.collect([P0], count(2), "records from the seek")) == [1, 2]


def test_an_assignment_stays_paused_until_asked_for() -> None:
    with running() as r:
        r.fake.produce(T, 0, b"a0")
        r.assign(P0, P1)
        r.fake.consumes_after(5)
        assert r.fake.paused == {P0, P1}
        assert r.client.take([P0, P1]) == []
        r.client.set_active({P0})
        assert offsets(r.collect([P0], count(1), "the record once asked for")) == [0]
        assert r.fake.paused == {P1}


@pytest.mark.parametrize("kind", ["revoke", "lost"])
def test_a_revocation_drops_buffers_highwaters_and_group_metadata(kind: str) -> None:
    with running(auto_rebalance=False) as r:
        r.fake.produce(T, 0, b"a0", b"a1")
        r.fake.produce(T, 1, b"b0")
        r.client.set_active({P0, P1})
        r.run(r.client.subscribe, [T])
        r.woken.clear()
        r.fake.rebalance("assign", [P0, P1])
        r.rebalances.next()[2].set_result(None)
        wait_for(r.woken.is_set, "records buffered")
        wait_for(lambda: r.client.highwaters == {P0: 2, P1: 1}, "the highwaters")

        r.fake.rebalance(kind, [P0, P1])
        got, tps, done = r.rebalances.next()
        assert (got, tps) == (kind, [P0, P1])
        if kind == "lost":
            assert r.client.group_metadata is None, "a lost assignment's turns cannot be committed"
        else:
            assert r.client.group_metadata == "group-metadata-of-generation-1", (
                "the turns in flight commit during a revocation")
        done.set_result(None)
        wait_for(lambda: not r.client.assigned, "the partitions gone")
        wait_for(lambda: not r.fake.assignment, "librdkafka's assignment dropped")
        assert r.client.take([P0, P1]) == [], "the next owner reads them"
        assert r.client.highwaters == {}
        assert (r.client.group_metadata, r.client.member_id) == (None, None)

        r.fake.rebalance("assign", [P1])
        r.rebalances.next()[2].set_result(None)
        assert r.client.generation == 2
        assert r.client.group_metadata == "group-metadata-of-generation-2"
        assert offsets(r.collect([P1], count(1), "the partition assigned again")) == [0]


def test_stopping_closes_the_consumer_without_handing_its_revocation_over() -> None:
    with running() as r:
        r.assign(P0)
        r.client.stop(WAIT_S)
        assert r.fake.closed
        assert r.rebalances.events.empty(), "closing leaves the group: Faust is not asked to revoke"
        with pytest.raises(ConsumerClosed):
            r.client.call(lambda: None).result(WAIT_S)


# -- marker-only advances ----------------------------------------------------------------------------
def test_a_batched_partition_moving_past_markers_gets_an_empty_batch() -> None:
    with running() as r:
        r.client.batched_topics = frozenset({T})
        r.client.set_active({P0})
        r.assign(P0)
        r.run(r.client.seek, T, 0, 0)
        r.fake.produce(T, 0, b"a0", b"a1")
        r.fake.mark(T, 0)  # the transaction's commit marker at offset 2
        batches = r.collect([P0], lambda b: b and b[-1].end == 3, "the end past the marker")
        assert offsets(batches) == [0, 1]
        assert batches[-1].records == [], "the advance comes as a batch of its own"
        r.fake.consumes_after(3)
        assert r.client.take([P0]) == [], "an advance is handed over once"

        r.fake.mark(T, 0, 2)  # an aborted transaction's marker and more: nothing but markers
        (advance,) = r.collect([P0], lambda b: b, "a marker-only advance")
        assert (advance.records, advance.end) == ([], 5)


def test_a_quiet_partition_of_a_busy_worker_gets_its_marker_advance() -> None:
    with running(buffer_records=10**9) as r:  # P0 never fills up, so it never pauses
        r.client.batched_topics = frozenset({T})
        r.client.set_active({P0, P1})
        r.assign(P0, P1)
        r.run(r.client.seek, T, 1, 0)
        r.fake.busy = P0  # every consume() brings a record of P0
        r.fake.mark(T, 1)
        (advance,) = r.collect([P1], lambda b: b, "P1's marker-only advance")
        assert (advance.records, advance.end) == ([], 1)
        assert r.client.take([P0]), "P0 kept bringing records meanwhile"


def test_a_partition_of_a_topic_not_batched_gets_no_marker_advance() -> None:
    with running() as r:
        r.client.set_active({P0})
        r.assign(P0)
        r.run(r.client.seek, T, 0, 0)
        r.fake.mark(T, 0)
        wait_for(lambda: r.fake.positions.get(P0) == 1, "the fake past the marker")
        r.fake.consumes_after(3)
        assert r.client.take([P0]) == []


# -- failures ----------------------------------------------------------------------------------------
def test_a_fatal_error_stops_the_thread_and_fails_the_calls() -> None:
    with running() as r:
        r.client.set_active({P0})
        r.assign(P0)
        gate = threading.Event()
        r.fake.fail(KafkaError(KafkaError._FATAL, "fenced by a newer instance", fatal=True), gate)
        wait_for(r.fake.gated.is_set, "consume() waiting at the gate")
        r.woken.clear()
        ran = threading.Event()
        pending = r.client.call(ran.set)  # queued while consume() runs
        gate.set()
        with pytest.raises(ConsumerClosed):
            pending.result(WAIT_S)
        assert not ran.is_set()
        wait_for(lambda: r.fake.closed, "the consumer closed")
        assert "fenced by a newer instance" in str(r.client.error)
        assert r.woken.is_set(), "the event loop is woken to see the failure"
        with pytest.raises(ConsumerClosed):
            r.client.call(ran.set).result(WAIT_S)


def test_a_call_made_while_the_thread_ends_is_failed_not_left_pending() -> None:
    ending, release = threading.Event(), threading.Event()
    holder: list[ConsumerClient] = []

    def wakeup() -> None:
        if holder and holder[0].error is not None:  # the thread's last act: hold it there
            ending.set()
            release.wait(WAIT_S)

    client = ConsumerClient({"group.id": "unit"}, on_rebalance=Rebalances(), wakeup=wakeup,
                            consumer_factory=FakeLibrdkafka, idle_s=0.002)
    holder.append(client)
    fake = client.consumer
    assert isinstance(fake, FakeLibrdkafka)
    client.start()
    try:
        fake.fail(KafkaError(KafkaError._FATAL, "fenced", fatal=True))
        wait_for(ending.is_set, "the thread past its last drain of calls")
        late = client.call(lambda: None)
        with pytest.raises(ConsumerClosed):
            late.result(1.0)
    finally:
        release.set()
        client.stop(WAIT_S)
