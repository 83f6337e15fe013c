"""The one sink shape, and the loop that drives every sink.

A store-specific sink implements :class:`Sink`: ``add`` buffers a record, ``due`` says a flush is
needed (batch full, or too old), ``flush`` writes and classifies every buffered record as
acknowledged, to retry, or rejected (with the store's reason). Everything else is written once,
here, in :class:`SinkRunner`:

- consume from Kafka (confluent-kafka, manual commits), decode Avro through the registry;
- admit records per project through the shared :class:`~streams.sinks.ratecontrol.RateController`;
  over budget the runner waits and Kafka holds the backlog; optionally (the hot sink) keep what is
  written and not yet acknowledged within a few windows' budget, so no project's bulks queue long
  in the store ahead of another's;
- track offsets and commit only below the first record the store has not acknowledged
  ("flush, then commit");
- send rejected records to the dead-letter topic with the store's reason, then count them done;
- pause partitions at a high watermark of records in flight, resume at a low one (bounded memory);
- retry records the store refused for a passing reason (429, 5xx, connection lost) with backoff
  and jitter, forever: a store that is down for an hour loses nothing, Kafka holds the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import random
import socket
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from streams import observability as obs
from streams.errors import CommitFailed, DependencyUnavailable
from streams.sinks.offsets import OffsetTracker
from streams.sinks.ratecontrol import Demand, RateController, water_fill

log = logging.getLogger(__name__)


@dataclass(slots=True)
class SinkRecord:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: dict[str, Any]  # the decoded contract (LogEvent, MetricPoint, ...)
    raw: bytes  # the record value as read, for the dead-letter topic
    project: str
    size: int
    attempts: int = 0
    # Set when the value could not be decoded: the runner dead-letters the record at once.
    decode_error: tuple[str, str] | None = None  # (reason, error_type)
    # A re-driven record's marks (streams/redrive_marks.py), copied into its dead letter if it fails again.
    marks: dict[str, str] | None = None


@dataclass
class FlushResult:
    acked: list[SinkRecord] = field(default_factory=list)
    retry: list[SinkRecord] = field(default_factory=list)
    rejected: list[tuple[SinkRecord, str, str]] = field(default_factory=list)  # record, reason, error_type
    throttled: bool = False  # the store pushed back (429 / 503): slow down
    latency_s: float = 0.0
    unreachable: str | None = None  # why the store could not be reached, when it could not


class Sink(Protocol):
    name: str

    async def start(self) -> None:
        """Prepare the store (templates, buckets); called once before the first add."""

    def add(self, record: SinkRecord) -> None: ...

    def due(self, now: float) -> bool:
        """A flush is needed now (batch full or its oldest record too old)."""

    def buffered(self) -> int: ...

    async def flush(self, now: float) -> FlushResult: ...

    async def close(self) -> None: ...


class DeadLetters(Protocol):
    def send(self, record: SinkRecord, stage: str, reason: str, error_type: str) -> None: ...

    def flush(self) -> None:
        """Block until every dead letter sent so far is acknowledged by Kafka."""


@dataclass
class Watermarks:
    """Records in flight at which partitions pause, and at which they resume."""

    high: int = 50_000
    low: int = 10_000

    @classmethod
    def pausing_at(cls, high: int) -> Watermarks:
        """Pause at ``high``, resume at a fifth of it."""
        return cls(high=high, low=high // 5)


@dataclass
class Backoff:
    base_s: float = 0.2
    cap_s: float = 30.0

    def delay(self, attempts: int) -> float:
        # Full jitter: spreads retries of many workers instead of synchronising them.
        return random.uniform(0, min(self.cap_s, self.base_s * 2 ** min(attempts, 16)))


_UNREACHABLE = frozenset({
    "ConnectionError", "ConnectionTimeout",  # elastic_transport
    "EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",  # botocore
})


def unreachable(exc: BaseException) -> bool:
    """Is this (or what caused it) a store that cannot be reached or is not serving yet?"""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionError | TimeoutError | socket.gaierror) or type(cur).__name__ in _UNREACHABLE:
            return True
        status = getattr(cur, "status_code", None) or getattr(getattr(cur, "meta", None), "status", None)
        if isinstance(status, int) and status in (429, 502, 503, 504):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


TP = tuple[str, int]  # (topic, partition)


class RecordSource(Protocol):
    """The consumer side as the runner needs it (:class:`~streams.sinks.kafka_io.KafkaRecordSource` is the
    real one). A source with no notion of a position, a lag or a record time returns an empty mapping."""

    # True: ``pause`` and ``resume`` hold back the partitions named and no other, and the runner pauses only
    # the partitions that hold more than their share. False: the runner pauses and resumes the source as a
    # whole (``pause_all``, ``resume_all``).
    pauses_partitions: bool

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]: ...

    def commit(self, points: dict[TP, int]) -> None: ...

    def pause(self, partitions: list[TP]) -> None: ...

    def resume(self, partitions: list[TP]) -> None: ...

    def pause_all(self) -> None: ...

    def resume_all(self) -> None: ...

    def take_revoked(self) -> list[TP]:
        """Partitions revoked since the last call."""

    def positions(self) -> Mapping[TP, int]:
        """The next offset to read per partition, past what is never returned as a record (transaction
        markers): the runner commits up to it once nothing below it is in flight."""

    def lag(self) -> Mapping[TP, int]:
        """Records behind the end of each partition."""

    def newest_read_ms(self) -> Mapping[TP, int]:
        """Per partition: the timestamp (ms) of the newest record read; its age is the lag in seconds."""

    def close(self) -> None: ...


class SinkRunner:
    def __init__(
        self,
        source: RecordSource,
        sink: Sink,
        controller: RateController,
        dead_letters: DeadLetters,
        stage: str,
        watermarks: Watermarks | None = None,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_poll: int = 2000,
        ack_cap: bool = False,
        in_flight_windows: float | None = None,
        health: obs.Health | None = None,
        summary_interval_s: float = 60.0,
    ) -> None:
        self.source = source
        # Admitting only what keeps the last second's acknowledgements plus what is admitted and not yet
        # acknowledged under the per-second budget bounds every one-second window of acknowledged writes
        # by the budget, however late a write completes and however many are in flight: every record
        # acknowledged in (t-1, t] was, at the last admission before t, either unacknowledged or
        # acknowledged within the second before it, and both were counted then.
        self.ack_cap = ack_cap
        # Per project, so the cap is shared max-min fair: a project bursting up to the whole budget
        # leaves a quiet project the room for what it sends, instead of making it wait for the second
        # to roll over.
        self._acks: deque[tuple[float, Counter[str]]] = deque()
        self._unacked: Counter[str] = Counter()  # admitted to the sink, not yet written, per project
        # With ``in_flight_windows`` (needs ``ack_cap``), what is admitted and not yet acknowledged, all
        # projects together, stays within that many windows' budget, shared max-min fair. The store
        # works through a bulk queue first in, first out: a quiet project's bulk waits behind every
        # document admitted before it, so this bounds how long another project's burst can hold it
        # back (without it, a bursting project keeps several bulks in flight ahead of the quiet one's).
        if in_flight_windows is not None and not ack_cap:
            raise ValueError("in_flight_windows counts what is unacknowledged: it needs ack_cap")
        self.in_flight_windows = in_flight_windows
        self.sink = sink
        self.controller = controller
        self.dead_letters = dead_letters
        self.stage = stage
        self.watermarks = watermarks or Watermarks()
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.max_poll = max_poll
        self.tracker = OffsetTracker()
        self.queues: dict[str, deque[SinkRecord]] = {}
        self._not_before: dict[str, float] = {}  # per project: retry backoff
        self._paused = False
        self._paused_parts: set[tuple[str, int]] = set()
        self._lag_reported_at = float("-inf")
        self._progress_at = clock()  # when the store last acknowledged or refused anything
        self._stall_reported_at = float("-inf")
        self.stats = {"acked": 0, "retried": 0, "dead_lettered": 0, "throttled": 0, "committed": 0}
        self.health = health or obs.HEALTH
        self.summary = obs.PeriodicSummary(stage, summary_interval_s, clock)
        self._behind: tuple[int, float] = (0, 0.0)  # records and seconds behind, as last reported

    # -- one turn of the loop ------------------------------------------------------------------
    async def step(self, poll_timeout_s: float = 0.1) -> None:
        self.health.turned()
        self._drop_revoked()
        if not self._paused:
            # With a backlog already queued, do not wait on Kafka: a paused consumer's poll would idle
            # the whole timeout every turn and cap the rate at one window's grant per timeout.
            timeout = 0.0 if self._queued() else poll_timeout_s
            records = await asyncio.to_thread(self.source.poll_batch, self.max_poll, timeout)
            bad = []
            for topic, n in Counter(r.topic for r in records).items():
                obs.RECORDS_IN.labels(self.stage, topic).inc(n)
            for rec in records:
                self.tracker.add(rec.topic, rec.partition, rec.offset)
                if rec.decode_error is not None:
                    bad.append((rec, *rec.decode_error))
                else:
                    self.queues.setdefault(rec.project, deque()).append(rec)
            if bad:
                await self._dead_letter(bad)
        self._apply_watermarks()
        self._report_lag()
        self._report_stall()
        now = self.clock()
        held = self._admit(now)
        if self.sink.buffered() and self.sink.due(now):
            await self._flush(now)
        self._commit()
        now = self.clock()
        # Nothing more can go out now (backoff, or this window's budget spent): sleep rather than spin.
        # Without the budget test, a paused runner over budget looped without ever awaiting, which
        # held the event loop and a CPU core until the window rolled over.
        wait = self.controller.wait_s(now)
        if self._queued() and (wait > 0 or held or not self._admissible(now)):
            # Short naps: a buffered batch falls due (max_batch_age) or a backoff ends within the window;
            # held for acknowledgements, room comes back with the next one.
            nap = min(wait or 0.05, 0.05 if self.sink.buffered() else 0.1)
            if held and not wait:
                nap = self.controller.window_s / 10
            obs.THROTTLE_WAIT.labels(self.stage).inc(nap)
            await asyncio.sleep(nap)

    async def run(self, stop: asyncio.Event) -> None:
        if not await self.start_sink(stop):
            return
        # What exists now (modules, clients, schemas) lives as long as the worker. A full garbage
        # collection stops the event loop while it walks every object; frozen, these are left out and
        # the collections walk only what the loop has made since, so the pauses stay short.
        gc.freeze()
        try:
            while not stop.is_set():
                await self.step()
            await self.drain()
        finally:
            await self.sink.close()

    async def drain(self, timeout_s: float = 30.0) -> None:
        """Write what is admitted and buffered, then commit (planned shutdown)."""
        deadline = self.clock() + timeout_s
        while self.sink.buffered() and self.clock() < deadline:
            await self._flush(self.clock())
        self._commit()

    async def start_sink(self, stop: asyncio.Event) -> bool:
        """Prepare the store; while it cannot be reached, wait and try again (Kafka holds the input).

        A worker that starts while its store is down waits instead of crash-looping; anything else
        (a refused credential, an unknown codec) still stops it with the store's reason."""
        attempt = 0
        while not stop.is_set():
            self.health.turned()  # waiting for the store is not being stuck
            try:
                await self.sink.start()
            except Exception as exc:
                if not (unreachable(exc) or isinstance(exc, DependencyUnavailable)):
                    raise
                self.health.store(self.sink.name, f"{type(exc).__name__}: {exc}")
                attempt += 1
                delay = max(1.0, self.backoff.delay(attempt))
                log.warning("%s: cannot reach the store to start (%s: %s); trying again in %.1f s, nothing is "
                            "read from Kafka until then", self.stage, type(exc).__name__, exc, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
            else:
                self.health.store(self.sink.name, None)
                return True
        return False

    # -- parts -------------------------------------------------------------------------------
    def _queued(self) -> int:
        return sum(len(q) for q in self.queues.values())

    def _admissible(self, now: float) -> bool:
        return any(q and self._not_before.get(p, 0) <= now for p, q in self.queues.items())

    def _admit(self, now: float) -> bool:
        """Admit what the budgets allow; True if records wait for acknowledgements to make room (the
        ack cap, or the in-flight bound), so that the loop naps instead of spinning."""
        demands = {
            p: Demand(len(q), sum(r.size for r in q))
            for p, q in self.queues.items()
            if q and self._not_before.get(p, 0) <= now
        }
        if not demands:
            return False
        grants = self.controller.grant(demands, now)
        rooms = self._ack_rooms(now) if self.ack_cap else None
        if rooms is not None and max(rooms.values(), default=0) <= 0:
            return True
        flight = self._in_flight_rooms(self.in_flight_windows) if self.in_flight_windows is not None else None
        sent_events = sent_bytes = 0
        sent: dict[str, int] = {}
        held = False
        for project, grant in grants.items():
            queue = self.queues[project]
            nbytes = 0
            taken = 0
            limit = grant.events if rooms is None else min(grant.events, rooms.get(project, 0))
            room = limit if flight is None else flight.get(project, 0)
            if room < limit:
                limit, held = room, True
            while queue and taken < limit:
                rec = queue[0]
                # Bytes are a soft limit: always let one record through, or a large one never goes.
                if taken and nbytes + rec.size > grant.bytes:
                    break
                queue.popleft()
                self.sink.add(rec)
                taken += 1
                nbytes += rec.size
            sent_events += taken
            sent_bytes += nbytes
            sent[project] = taken
            if self.ack_cap:
                self._unacked[project] += taken
        self.controller.consume(sent_events, sent_bytes, now, sent)
        return held

    def _ack_rooms(self, now: float) -> dict[str, int]:
        """Per project: events it may still admit without any one-second window of acknowledged
        writes exceeding the budget. The budget is split max-min fair over what each project used in
        the last second plus what it has waiting; the split never sums over the budget."""
        while self._acks and self._acks[0][0] <= now - 1.0:
            self._acks.popleft()
        used: Counter[str] = Counter(self._unacked)
        for _t, counts in self._acks:
            used.update(counts)
        return self._fair_rooms(self.controller.capacity.events_per_s * self.controller.fraction, used,
                                self.controller.project_caps)

    def _in_flight_rooms(self, windows: float) -> dict[str, int]:
        """Per project: events it may still admit with everything unacknowledged within ``windows``
        windows' budget, split max-min fair over what each has in flight and waiting. A project with
        nothing in flight may always send one, so none is starved by rounding."""
        caps = {p: cap * self.controller.window_s * windows for p, cap in self.controller.project_caps.items()}
        rooms = self._fair_rooms(self.controller.events_budget * windows, self._unacked, caps)
        return {p: max(room, 1 if self._unacked[p] == 0 else 0) for p, room in rooms.items()}

    def _fair_rooms(self, total: float, used: Counter[str], caps: Mapping[str, float]) -> dict[str, int]:
        """Per project: ``total`` split max-min fair over what each has ``used`` plus what it has
        waiting (at most its cap, in the unit of ``total``), less what it has used (the split never
        sums over ``total``)."""
        wants: dict[str, float] = {p: used[p] + len(q) for p, q in self.queues.items()}
        for p, n in used.items():
            wants.setdefault(p, n)
        for p, cap in caps.items():
            if p in wants:
                wants[p] = min(wants[p], max(cap, used[p]))
        shares = water_fill(total, wants)
        return {p: int(shares[p]) - used[p] for p in wants}

    async def _flush(self, now: float) -> None:
        result = await self.sink.flush(now)
        if result.acked or result.rejected:
            self._progress_at = self.clock()
        self.health.store(self.sink.name, result.unreachable)
        self.summary.add("acknowledged", len(result.acked))
        self.summary.add("to retry", len(result.retry))
        if self.ack_cap:
            done = Counter(r.project for r in (*result.acked, *result.retry))
            done.update(r.project for r, _reason, _type in result.rejected)
            self._unacked -= done
            if result.acked:
                self._acks.append((self.clock(), Counter(r.project for r in result.acked)))
        for rec in result.acked:
            self.tracker.ack(rec.topic, rec.partition, rec.offset)
        self.stats["acked"] += len(result.acked)
        for project, n in Counter(r.project for r in result.acked).items():
            obs.ACKED.labels(self.stage, project).inc(n)
        written = len(result.acked) + len(result.retry) + len(result.rejected)
        if written:
            obs.BATCH_SIZE.labels(self.stage).observe(written)
            obs.SINK_LATENCY.labels(self.stage).observe(result.latency_s)
        if result.rejected:
            await self._dead_letter(result.rejected)
        if result.retry:
            self.stats["retried"] += len(result.retry)
            obs.RETRIES.labels(self.stage).inc(len(result.retry))
            for rec in reversed(result.retry):
                rec.attempts += 1
                self.queues.setdefault(rec.project, deque()).appendleft(rec)
            worst = max(r.attempts for r in result.retry)
            until = self.clock() + self.backoff.delay(worst)
            for project in {r.project for r in result.retry}:
                self._not_before[project] = until
        if result.throttled:
            self.stats["throttled"] += 1
            obs.THROTTLED.labels(self.stage).inc()
            self.controller.on_throttled()
        elif result.acked:
            self.controller.on_success(result.latency_s)
        obs.BUDGET.labels(self.stage).set(self.controller.events_budget)

    async def _dead_letter(self, items: list[tuple[SinkRecord, str, str]]) -> None:
        sent, attempt = 0, 0
        while sent < len(items):
            # In a thread: the first letter looks its schema id up in the registry.
            sent, exc = await asyncio.to_thread(self._send_letters, items, sent)
            if exc is not None:
                attempt += 1
                delay = max(1.0, self.backoff.delay(attempt))
                obs.DEPENDENCY_WAITS.labels(self.stage, exc.dependency).inc()
                log.warning("%s: %s; %d dead letters wait %.1f s (their offsets are held)", self.stage, exc,
                            len(items) - sent, delay)
                await asyncio.sleep(delay)
        # The dead letter must be in Kafka before the original offset may be committed.
        await asyncio.to_thread(self.dead_letters.flush)
        for rec, _reason, error_type in items:
            self.tracker.ack(rec.topic, rec.partition, rec.offset)
            obs.DEAD_LETTERS.labels(self.stage, error_type).inc()
        self.stats["dead_lettered"] += len(items)
        self.summary.add("dead-lettered", len(items))

    def _send_letters(self, items: list[tuple[SinkRecord, str, str]], start: int
                      ) -> tuple[int, DependencyUnavailable | None]:
        """Send ``items[start:]``: how many of ``items`` are sent, and what stopped the rest (a registry
        that does not answer)."""
        for i in range(start, len(items)):
            rec, reason, error_type = items[i]
            try:
                self.dead_letters.send(rec, self.stage, reason, error_type)
            except DependencyUnavailable as exc:
                return i, exc
        return len(items), None

    def _commit(self) -> None:
        self.tracker.advance(self.source.positions())
        points = self.tracker.commit_points()
        if not points:
            return
        try:
            self.source.commit(points)
        except CommitFailed as exc:  # a broker restart ("waiting for coordinator") is transient
            # Nothing is lost: the records stay acknowledged here and the points are offered again at the
            # next turn; a worker that dies first re-reads them (at-least-once, same ids).
            self.tracker.unreport(points)
            log.warning("%s: commit of %s failed (%s); retrying at the next turn", self.stage, points, exc)
            return
        self.stats["committed"] += len(points)

    def _report_stall(self, after_s: float = 60.0) -> None:
        """Records wait and nothing has been written for ``after_s``: say what holds them (the budget, a
        backoff, acknowledgements awaited, paused partitions), once per ``after_s``."""
        now = self.clock()
        if not self._queued() or now - self._progress_at < after_s or now - self._stall_reported_at < after_s:
            return
        self._stall_reported_at = now
        log.warning("%s: nothing written for %.0f s with %d records waiting: %s", self.stage, now - self._progress_at,
                    self._queued(), {
                        "queued": {p: len(q) for p, q in self.queues.items() if q},
                        "in_sink": self.sink.buffered(), "unacknowledged": dict(self._unacked),
                        "budget": self.controller.events_budget, "budget_wait_s": round(self.controller.wait_s(now), 2),
                        "backoff_s": {p: round(t - now, 1) for p, t in self._not_before.items() if t > now},
                        "paused": sorted(self._paused_parts), "in_flight": self.tracker.total_in_flight()})

    def _report_lag(self) -> None:
        now = self.clock()
        if now - self._lag_reported_at < 5.0:
            return
        self._lag_reported_at = now
        read_ms = self.source.newest_read_ms()
        total, behind_s = 0, 0.0
        for tp, behind in self.source.lag().items():
            obs.LAG.labels(self.stage, tp[0], str(tp[1])).set(behind)
            total += behind
            if behind and tp in read_ms:
                behind_s = max(behind_s, time.time() - read_ms[tp] / 1000)
        obs.LAG_SECONDS.labels(self.stage).set(behind_s)
        self._behind = (total, behind_s)
        self.summary.maybe_log(f"lag {self._behind[0]} records ({self._behind[1]:.0f} s)")

    def _apply_watermarks(self) -> None:
        in_flight = self.tracker.total_in_flight()
        obs.IN_FLIGHT.labels(self.stage).set(in_flight)
        if self.source.pauses_partitions:
            self._apply_partition_watermarks(in_flight)
            return
        if not self._paused and in_flight >= self.watermarks.high:
            self.source.pause_all()
            self._paused = True
            obs.PAUSED.labels(self.stage).set(1)
            log.info("%s: %d records in flight, pausing partitions", self.stage, in_flight)
        elif self._paused and in_flight <= self.watermarks.low:
            self.source.resume_all()
            self._paused = False
            obs.PAUSED.labels(self.stage).set(0)
            log.info("%s: %d records in flight, resuming partitions", self.stage, in_flight)

    def _apply_partition_watermarks(self, in_flight: int) -> None:
        """Pause only the partitions that hold more than their share; quiet ones keep flowing.

        Pausing everything at the high watermark would hold a quiet project's records back until a
        bursting project's backlog drained (minutes), breaking the one-window promise of the fair
        share. Memory stays bounded: a partition is paused once it holds high/n records in flight.
        """
        parts = self.tracker.in_flight_by_partition()
        n = max(1, len(parts))
        high_share, low_share = self.watermarks.high / n, self.watermarks.low / n
        pause = [tp for tp, k in parts.items()
                 if tp not in self._paused_parts and in_flight >= self.watermarks.high and k >= high_share]
        resume = [tp for tp in self._paused_parts if parts.get(tp, 0) <= low_share]
        if pause:
            self.source.pause(pause)
            self._paused_parts.update(pause)
            log.info("%s: %d records in flight, pausing %s", self.stage, in_flight, pause)
        if resume:
            self.source.resume(resume)
            self._paused_parts.difference_update(resume)
            log.info("%s: resuming %s", self.stage, resume)
        self._paused = False  # polling goes on for the partitions that are not paused
        obs.PAUSED.labels(self.stage).set(len(self._paused_parts))

    def _drop_revoked(self) -> None:
        revoked = set(self.source.take_revoked())
        if not revoked:
            return
        for project, queue in self.queues.items():
            self.queues[project] = deque(r for r in queue if (r.topic, r.partition) not in revoked)
        for topic, partition in revoked:
            self.tracker.forget(topic, partition)
            self._paused_parts.discard((topic, partition))
