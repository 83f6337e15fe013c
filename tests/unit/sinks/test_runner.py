"""SinkRunner against fakes of Kafka and of a store (the real ones are in tests/integration)."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter

from devtools.testing.sources import UntrackedSource
from streams.errors import CommitFailed
from streams.sinks.base import Backoff, FlushResult, SinkRecord, SinkRunner, Watermarks
from streams.sinks.ratecontrol import Capacity, RateController


class FakeSource(UntrackedSource):
    """A source that pauses only as a whole."""

    pauses_partitions = False

    def __init__(self, records: list[SinkRecord]) -> None:
        self.records = records
        self.commits: list[dict[tuple[str, int], int]] = []
        self.paused = False
        self.pauses = 0

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        out, self.records = self.records[:max_records], self.records[max_records:]
        return out

    def commit(self, points: dict[tuple[str, int], int]) -> None:
        self.commits.append(dict(points))

    def pause_all(self) -> None:
        self.paused = True
        self.pauses += 1

    def resume_all(self) -> None:
        self.paused = False

    def pause(self, partitions: list[tuple[str, int]]) -> None:
        raise AssertionError(f"pause({partitions}) called on a source that pauses only as a whole")

    def resume(self, partitions: list[tuple[str, int]]) -> None:
        raise AssertionError(f"resume({partitions}) called on a source that pauses only as a whole")


class FakeStore:
    """Acks everything, except: offsets in ``fail_once`` are retried once, ``reject`` are refused."""

    name = "fake"

    def __init__(self, fail_once: set[int] = frozenset(), reject: set[int] = frozenset()) -> None:
        self.buf: list[SinkRecord] = []
        self.written: list[int] = []
        self.fail_once = set(fail_once)
        self.reject = set(reject)
        self.batch_sizes: list[int] = []

    async def start(self) -> None: ...

    def add(self, record: SinkRecord) -> None:
        self.buf.append(record)

    def due(self, now: float) -> bool:
        return True

    def buffered(self) -> int:
        return len(self.buf)

    async def flush(self, now: float) -> FlushResult:
        res = FlushResult()
        self.batch_sizes.append(len(self.buf))
        for rec in self.buf:
            if rec.offset in self.fail_once:
                self.fail_once.discard(rec.offset)
                res.retry.append(rec)
                res.throttled = True
            elif rec.offset in self.reject:
                res.rejected.append((rec, "mapper_parsing_exception: failed to parse field [loss]", "mapping"))
            else:
                self.written.append(rec.offset)
                res.acked.append(rec)
        self.buf = []
        return res

    async def close(self) -> None: ...


class FakeDLQ:
    def __init__(self) -> None:
        self.sent: list[tuple[int, str]] = []
        self.flushed = 0

    def send(self, record: SinkRecord, stage: str, reason: str, error_type: str) -> None:
        self.sent.append((record.offset, reason))

    def flush(self) -> None:
        self.flushed = len(self.sent)


def recs(n: int, project: str = "p", start: int = 0) -> list[SinkRecord]:
    return [SinkRecord("logs.events.p", 0, start + i, b"k", {"i": i}, b"raw", project, 100) for i in range(n)]


def run_steps(runner: SinkRunner, steps: int) -> None:
    async def go() -> None:
        for _ in range(steps):
            await runner.step(poll_timeout_s=0)
    asyncio.run(go())


def test_commits_only_what_the_store_acknowledged_and_retries_to_completion() -> None:
    source = FakeSource(recs(10))
    store = FakeStore(fail_once={3})
    runner = SinkRunner(source, store, RateController(Capacity(10**6, 10**9)), FakeDLQ(), "hot_sink",
                        backoff=Backoff(base_s=0, cap_s=0))
    run_steps(runner, 1)
    assert source.commits[-1] == {("logs.events.p", 0): 3}, "offset 3 failed: commit stops below it"
    run_steps(runner, 3)
    assert source.commits[-1] == {("logs.events.p", 0): 10}
    assert sorted(store.written) == list(range(10))
    assert runner.controller.throttle_events == 1


def test_rejected_records_reach_the_dlq_before_their_offset_is_committed() -> None:
    source = FakeSource(recs(5))
    dlq = FakeDLQ()
    runner = SinkRunner(source, FakeStore(reject={2}), RateController(Capacity(10**6, 10**9)), dlq, "hot_sink")
    run_steps(runner, 1)
    assert dlq.sent == [(2, "mapper_parsing_exception: failed to parse field [loss]")]
    assert dlq.flushed == 1
    assert source.commits[-1] == {("logs.events.p", 0): 5}


def test_undecodable_records_are_dead_lettered_and_committed() -> None:
    bad = SinkRecord("logs.events.p", 0, 0, None, {}, b"\x00junk", "p", 5, decode_error=("bad avro", "undecodable"))
    source = FakeSource([bad, *recs(2, start=1)])
    dlq = FakeDLQ()
    runner = SinkRunner(source, FakeStore(), RateController(Capacity(10**6, 10**9)), dlq, "hot_sink")
    run_steps(runner, 1)
    assert dlq.sent == [(0, "bad avro")]
    assert source.commits[-1] == {("logs.events.p", 0): 3}


def test_budget_limits_what_each_window_writes() -> None:
    clock = [0.0]
    source = FakeSource(recs(100))
    store = FakeStore()
    runner = SinkRunner(source, store, RateController(Capacity(25, 10**9), window_s=1.0), FakeDLQ(), "hot_sink",
                        clock=lambda: clock[0])
    run_steps(runner, 3)  # same window: 80% of 25 = 20 events
    assert len(store.written) == 20
    clock[0] = 1.0
    run_steps(runner, 1)
    assert len(store.written) == 40


def test_partitions_pause_at_high_watermark_and_resume_at_low() -> None:
    clock = [0.0]
    source = FakeSource(recs(50))
    store = FakeStore()
    runner = SinkRunner(source, store, RateController(Capacity(12.5, 10**9), window_s=1.0), FakeDLQ(), "s",
                        watermarks=Watermarks(high=30, low=10), clock=lambda: clock[0], max_poll=50)
    run_steps(runner, 1)
    assert source.paused and source.pauses == 1
    for second in range(1, 6):
        clock[0] = float(second)
        run_steps(runner, 1)
    assert not source.paused
    assert len(store.written) == 60 or len(store.written) <= 50


def test_over_budget_the_runner_sleeps_instead_of_spinning() -> None:
    import time

    clock = [0.0]
    source = FakeSource(recs(100))
    runner = SinkRunner(source, FakeStore(), RateController(Capacity(10, 10**9), window_s=1.0), FakeDLQ(), "s",
                        clock=lambda: clock[0])

    async def go() -> float:
        await runner.step(poll_timeout_s=0)  # takes all 100, admits this window's 8
        started = time.monotonic()
        await runner.step(poll_timeout_s=0)  # budget spent, 92 queued: must yield to the loop and wait
        return time.monotonic() - started

    assert asyncio.run(go()) >= 0.04


class PartitionPausingSource(FakeSource):
    """A source that can pause single partitions, like KafkaRecordSource."""

    pauses_partitions = True

    def __init__(self, records: list[SinkRecord]) -> None:
        super().__init__(records)
        self.paused_parts: set[tuple[str, int]] = set()

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        ready = [r for r in self.records if (r.topic, r.partition) not in self.paused_parts][:max_records]
        self.records = [r for r in self.records if r not in ready]
        return ready

    def pause(self, partitions: list[tuple[str, int]]) -> None:
        self.paused_parts.update(partitions)

    def resume(self, partitions: list[tuple[str, int]]) -> None:
        self.paused_parts.difference_update(partitions)


def test_a_burst_pauses_only_its_own_partition_and_the_quiet_project_keeps_flowing() -> None:
    clock = [0.0]
    burst = [SinkRecord("logs.events.noisy", 0, i, b"k", {}, b"r", "noisy", 100) for i in range(500)]
    quiet = [SinkRecord("logs.events.calm", 0, 1000 + i, b"k", {}, b"r", "calm", 100) for i in range(5)]
    source = PartitionPausingSource(burst + quiet)
    store = FakeStore()
    runner = SinkRunner(source, store, RateController(Capacity(50, 10**9), window_s=1.0), FakeDLQ(), "hot_sink",
                        watermarks=Watermarks(high=100, low=20), clock=lambda: clock[0], max_poll=300)
    run_steps(runner, 1)  # reads 300 noisy records: over the high watermark
    assert ("logs.events.noisy", 0) in source.paused_parts
    assert ("logs.events.calm", 0) not in source.paused_parts
    clock[0] = 1.0
    run_steps(runner, 1)  # the calm partition is still polled and gets its share in the next window
    assert source.records == [r for r in burst if r.offset >= 300], "the quiet records were all read"
    calm_acked = [o for o in store.written if o >= 1000]
    assert len(calm_acked) == 5, "the calm project's 5 records went out within one window of arriving"


class SlowStore(FakeStore):
    """Acknowledges each write some seconds after it starts (on the test's clock), latencies in turn."""

    def __init__(self, clock: list[float], latencies: list[float]) -> None:
        super().__init__()
        self.clock, self.latencies = clock, latencies
        self.ack_times: list[tuple[float, int]] = []

    async def flush(self, now: float) -> FlushResult:
        self.clock[0] += self.latencies[len(self.ack_times) % len(self.latencies)]
        result = await super().flush(now)
        self.ack_times.append((self.clock[0], len(result.acked)))
        return result


def _busiest_second(acks: list[tuple[float, int]]) -> int:
    return max(sum(n for t, n in acks if start <= t < start + 1.0) for start, _ in acks)


def test_ack_cap_keeps_every_second_of_acknowledgements_within_the_budget() -> None:
    def run(ack_cap: bool) -> int:
        clock = [0.0]
        # A slow bulk that finishes just before the next window opens, then a fast one.
        store = SlowStore(clock, latencies=[0.95, 0.05])
        runner = SinkRunner(FakeSource(recs(400)), store, RateController(Capacity(100, 10**9), window_s=1.0),
                            FakeDLQ(), "hot_sink", clock=lambda: clock[0], ack_cap=ack_cap)
        for _ in range(12):
            run_steps(runner, 1)
            clock[0] += 0.05
        return _busiest_second(store.ack_times)

    assert run(ack_cap=False) > 80, "without the cap a late write and the next one land in the same second"
    assert run(ack_cap=True) <= 80, "80 = 80% of the declared 100/s"


def test_a_failed_commit_is_offered_again_not_lost() -> None:
    class FlakyCommits(FakeSource):
        def __init__(self, records: list[SinkRecord]) -> None:
            super().__init__(records)
            self.fail_next = True

        def commit(self, points: dict[tuple[str, int], int]) -> None:
            if self.fail_next:
                self.fail_next = False
                raise CommitFailed("Commit failed: Local: Waiting for coordinator")
            super().commit(points)

    source = FlakyCommits(recs(5))
    runner = SinkRunner(source, FakeStore(), RateController(Capacity(10**6, 10**9)), FakeDLQ(), "hot_sink")
    run_steps(runner, 1)
    assert source.commits == [], "the first commit failed, and the worker did not crash"
    run_steps(runner, 1)
    assert source.commits == [{("logs.events.p", 0): 5}], "the same point, committed at the next turn"


def test_unreachable_tells_a_store_that_is_away_from_a_real_error() -> None:
    import elastic_transport
    from botocore.exceptions import EndpointConnectionError

    from streams.sinks.base import unreachable

    wrapped = RuntimeError("bucket check failed")
    wrapped.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert unreachable(wrapped), "a refused connection under a wrapper"
    assert unreachable(EndpointConnectionError(endpoint_url="http://127.0.0.1:1/b"))
    assert unreachable(elastic_transport.ConnectionError("no route"))
    assert not unreachable(ValueError("unknown codec 'lz5'"))
    assert not unreachable(PermissionError(13, "spill directory not writable"))


def test_ack_cap_is_shared_fairly_so_a_quiet_project_is_not_held_back() -> None:
    from collections import Counter, deque

    clock = [0.3]
    store = FakeStore()
    runner = SinkRunner(FakeSource([]), store, RateController(Capacity(100, 10**9), window_s=0.1),
                        FakeDLQ(), "hot_sink", clock=lambda: clock[0], ack_cap=True)
    # The bursting project's writes of the last second already reach the budget (80 = 80% of 100/s).
    runner._acks.append((0.0, Counter({"noisy": 80})))
    runner.queues["noisy"] = deque(recs(300, "noisy"))
    runner.queues["quiet"] = deque(SinkRecord("logs.events.q", 0, 1000 + i, b"k", {}, b"r", "quiet", 100)
                                   for i in range(3))
    run_steps(runner, 1)
    assert sorted(store.written) == [1000, 1001, 1002], "the quiet project's records go out now, the burst's wait"
    clock[0] = 1.05  # the burst's second has rolled over: it gets the rest of the budget again
    run_steps(runner, 1)
    assert any(o < 1000 for o in store.written)


def test_the_running_worker_keeps_what_it_started_with_out_of_garbage_collections() -> None:
    """A full collection stops the event loop while it walks every object; what the worker made at
    start (modules, clients, schemas) is frozen so that the collections skip it."""
    gc.unfreeze()
    runner = SinkRunner(FakeSource(recs(3)), FakeStore(), RateController(Capacity(10**6, 10**9)), FakeDLQ(),
                        "hot_sink")

    async def go() -> int:
        stop = asyncio.Event()
        task = asyncio.create_task(runner.run(stop))
        await asyncio.sleep(0.05)
        frozen = gc.get_freeze_count()
        stop.set()
        await task
        return frozen

    try:
        assert asyncio.run(go()) > 10_000
    finally:
        gc.unfreeze()


class HoldingStore(FakeStore):
    """Takes records and acknowledges none yet (a store whose write queue is full of earlier bulks)."""

    async def flush(self, now: float) -> FlushResult:
        return FlushResult()


def test_what_is_in_flight_stays_within_the_windows_and_a_quiet_project_still_gets_in() -> None:
    def admitted(in_flight_windows: float | None) -> Counter[str]:
        clock = [0.0]
        store = HoldingStore()
        source = FakeSource(recs(1000, "noisy") + recs(2, "quiet", start=1000))
        runner = SinkRunner(source, store, RateController(Capacity(1000, 10**9), window_s=0.1), FakeDLQ(),
                            "hot_sink", clock=lambda: clock[0], ack_cap=True, in_flight_windows=in_flight_windows)
        for _ in range(10):  # ten windows of 80 events, nothing acknowledged
            run_steps(runner, 1)
            clock[0] += 0.1
        return Counter(r.project for r in store.buf)

    bounded = admitted(1.0)
    assert sum(bounded.values()) <= 80
    assert bounded["quiet"] == 2
    assert sum(admitted(None).values()) > 400, "without the bound, each window admits its budget again"


def test_a_runner_waiting_for_acknowledgements_naps_instead_of_spinning() -> None:
    """Held by the in-flight bound with budget left, the loop has nothing to do until an acknowledgement
    comes; it used to go straight round again (a poll of Kafka and an admission, thousands of times a
    second), taking the CPU the store needed to answer."""
    store = HoldingStore()
    runner = SinkRunner(FakeSource(recs(1000, "noisy")), store, RateController(Capacity(10**6, 10**9), window_s=0.1),
                        FakeDLQ(), "hot_sink", ack_cap=True, in_flight_windows=0.001)  # room for 80, never acked

    async def go() -> float:
        await runner.step(poll_timeout_s=0)  # admits the 80
        started = time.perf_counter()
        for _ in range(10):
            await runner.step(poll_timeout_s=0)
        return time.perf_counter() - started

    elapsed = asyncio.run(go())
    assert len(store.buf) == 80
    assert elapsed >= 10 * 0.1 / 10 * 0.9, f"10 turns of a held loop in {elapsed:.4f} s: it did not nap"


def test_a_store_away_at_start_is_waited_for_and_a_refused_one_stops_the_sink() -> None:
    import pytest

    from streams.errors import DependencyRefused

    class AwayTwice(FakeStore):
        def __init__(self, error: Exception, times: int) -> None:
            super().__init__()
            self.error, self.times, self.starts = error, times, 0

        async def start(self) -> None:
            self.starts += 1
            if self.starts <= self.times:
                raise self.error

    away = AwayTwice(ConnectionRefusedError(111, "Connection refused"), 2)
    runner = SinkRunner(FakeSource([]), away, RateController(Capacity(1000, 10**9)), FakeDLQ(), "hot_sink")
    assert asyncio.run(runner.start_sink(asyncio.Event())) and away.starts == 3
    refused = AwayTwice(DependencyRefused("Elasticsearch refused: HTTP 401", "elasticsearch"), 9)
    runner = SinkRunner(FakeSource([]), refused, RateController(Capacity(1000, 10**9)), FakeDLQ(), "hot_sink")
    with pytest.raises(DependencyRefused):
        asyncio.run(runner.start_sink(asyncio.Event()))
    assert refused.starts == 1


def test_dead_letters_wait_for_the_registry_and_go_out_once_each() -> None:
    from streams.errors import DependencyUnavailable

    class RegistryAwayOnce(FakeDLQ):
        def __init__(self) -> None:
            super().__init__()
            self.refusals = 0

        def send(self, record: SinkRecord, stage: str, reason: str, error_type: str) -> None:
            if record.offset == 1 and self.refusals == 0:  # the second letter finds the registry away
                self.refusals += 1
                raise DependencyUnavailable("schema registry did not answer (test)", "registry")
            super().send(record, stage, reason, error_type)

    source = FakeSource(recs(4))
    dlq = RegistryAwayOnce()
    runner = SinkRunner(source, FakeStore(reject={0, 1, 2}), RateController(Capacity(1000, 10**9)), dlq, "hot_sink")
    run_steps(runner, 5)
    assert dlq.refusals == 1 and [o for o, _r in dlq.sent] == [0, 1, 2]  # each once, in order
    assert source.commits[-1][("logs.events.p", 0)] == 4


def test_a_runner_that_writes_nothing_for_a_minute_says_what_holds_its_records(caplog) -> None:
    import logging

    clock = [0.0]
    # A budget of one event per window: the rest waits, and the store (never due here) writes nothing.
    runner = SinkRunner(FakeSource(recs(50)), FakeStore(), RateController(Capacity(1, 10**9)), FakeDLQ(), "hot_sink",
                        clock=lambda: clock[0])
    runner.sink.due = lambda now: False  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="streams.sinks.base"):
        for _ in range(3):
            run_steps(runner, 1)
            clock[0] += 31.0
    stalls = [r.getMessage() for r in caplog.records if "nothing written" in r.getMessage()]
    assert len(stalls) == 1 and "'queued': {'p': 48}" in stalls[0] and "'in_sink': 2" in stalls[0], stalls


class PositionedSource(FakeSource):
    """A source that also says where it stands, how far behind it is, and when its newest record was written."""

    def __init__(self, records: list[SinkRecord], position: int, behind: int, newest_ms: int) -> None:
        super().__init__(records)
        self.position, self.behind, self.newest_ms = position, behind, newest_ms

    def positions(self) -> dict[tuple[str, int], int]:
        return {("logs.events.p", 0): self.position}

    def lag(self) -> dict[tuple[str, int], int]:
        return {("logs.events.p", 0): self.behind}

    def newest_read_ms(self) -> dict[tuple[str, int], int]:
        return {("logs.events.p", 0): self.newest_ms}


def test_the_commit_steps_over_a_transaction_marker_the_source_stands_past() -> None:
    # Records 0-2, then the transaction's commit marker at offset 3: the consumer stands at 4.
    source = PositionedSource(recs(3), position=4, behind=0, newest_ms=0)
    runner = SinkRunner(source, FakeStore(), RateController(Capacity(10**6, 10**9)), FakeDLQ(), "hot_sink")
    run_steps(runner, 2)
    assert source.commits[-1] == {("logs.events.p", 0): 4}, "committed up to the source's position, not to 3"


def test_lag_in_records_and_seconds_comes_from_the_source() -> None:
    from streams import observability as obs

    written_ms = int((time.time() - 120) * 1000)
    source = PositionedSource(recs(3), position=3, behind=500, newest_ms=written_ms)
    runner = SinkRunner(source, FakeStore(), RateController(Capacity(10**6, 10**9)), FakeDLQ(), "lag_stage")
    run_steps(runner, 1)
    labels = {"stage": "lag_stage", "topic": "logs.events.p", "partition": "0"}
    assert obs.REGISTRY.get_sample_value("sluice_consumer_lag", labels) == 500
    behind_s = obs.REGISTRY.get_sample_value("sluice_consumer_lag_seconds", {"stage": "lag_stage"})
    assert behind_s is not None and 119 <= behind_s <= 125, "the age of the newest record read"
