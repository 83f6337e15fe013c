"""One librdkafka consumer, driven by one thread of its own, with a buffer the event loop takes from.

librdkafka hands its application two things only inside ``consume()``: records, and the group's
rebalance events (the assignment, its revocation). Faust starts its fetcher only once the first
assignment has been recovered, so a driver that calls ``consume()`` only when Faust asks for records
never sees an assignment at all (faust-streaming's own ``confluent://`` driver waits for ever so).
Here the thread consumes all the time:

- records go to a buffer per partition, from which the event loop takes them (:meth:`take`); a
  partition Faust does not want now (paused, being recovered, its buffer full) is paused in
  librdkafka, which keeps nothing fetched for it and fetches again from the buffer's end on resume;
- a rebalance event is handed to the event loop (``on_rebalance``), and the thread waits for Faust
  to have handled it, running meanwhile the calls the event loop makes on the consumer (seeks,
  offsets), so a revocation completes only once the turns in flight are done;
- calls that change where reading goes (seek, pause) run on the thread between two ``consume()``
  calls (:meth:`call`): records fetched before a seek are never stored after it. Each seek moves
  the partition to a new *epoch*; records taken before it are recognised by theirs (:meth:`current`).

Every other call on the consumer runs there too. librdkafka's handle is thread-safe, but
confluent-kafka lets one thread at a time into a consumer: a call from another thread waits, polling,
for ``consume()`` to return, and a thread that consumes in a loop takes it back first (a
``committed()`` from another thread did not return in 60 s). What the event loop reads often is kept
by the thread as it goes: each partition's high watermark as the last fetch response gave it, and
the group metadata of the current assignment.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from streams.rdkafka.batch import RecordBatch

log = logging.getLogger(__name__)

TopicPart = tuple[str, int]
OFFSET_BEGINNING = -2  # librdkafka's logical offsets
OFFSET_END = -1

# Rebalance event kinds handed to ``on_rebalance``.
ASSIGN, REVOKE, LOST = "assign", "revoke", "lost"


class ConsumerClosed(Exception):
    """The consumer thread has stopped: no more records, no more calls."""


@dataclass
class _Partition:
    records: list[Any] = field(default_factory=list)
    end: int = -1  # offset after the last record stored, or where the last seek sent the partition
    epoch: int = 0
    sought: int = -1  # where the last seek sent the partition (a logical offset is negative)
    marked: bool = False  # ``end`` moved past markers only: hand an empty batch over once


class ConsumerClient:
    """A librdkafka ``Consumer`` run by a thread of its own (see the module's text).

    ``on_rebalance(kind, partitions)`` is called on the thread and returns a future that is done once
    the application has handled the event; ``wakeup()`` is called on the thread when records (or a
    marker-only advance) arrive. ``max_records`` is librdkafka's ``consume(num_messages)``; a
    partition holding ``buffer_records`` records is paused until it is taken from.
    """

    def __init__(self, config: dict[str, Any], *, on_rebalance: Callable[[str, list[TopicPart]], Any],
                 wakeup: Callable[[], None], max_records: int = 10_000, buffer_records: int = 50_000,
                 idle_s: float = 0.05, consumer_factory: Callable[[dict[str, Any]], Any] | None = None) -> None:
        if consumer_factory is None:
            from confluent_kafka import Consumer

            consumer_factory = Consumer
        self.config = config
        self.consumer = consumer_factory(config)
        self.on_rebalance = on_rebalance
        self.wakeup = wakeup
        self.max_records = max_records
        self.buffer_records = buffer_records
        self.idle_s = idle_s
        self.generation = 0  # assignments seen; Faust compares it for equality only
        self.assigned: frozenset[TopicPart] = frozenset()
        self.active: frozenset[TopicPart] = frozenset()  # what the event loop wants fetched now
        self.held: set[TopicPart] = set()  # sought to their commits: not fetched until released
        self.batched_topics: frozenset[str] = frozenset()  # topics whose marker-only advances are handed over
        self._parts: dict[TopicPart, _Partition] = {}
        self._paused: set[TopicPart] = set()  # paused in librdkafka
        self._lock = threading.Lock()
        self._calls: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], concurrent.futures.Future[Any]]] = (
            queue.SimpleQueue())
        self._stopping = threading.Event()
        self._closing = False
        self._runner = threading.Thread(target=self._run, name="rdkafka-consumer", daemon=True)
        self.error: BaseException | None = None
        self.highwaters: dict[TopicPart, int] = {}  # as the last fetch response of each partition gave it
        # The group's metadata and this member's id as of the current assignment (None between
        # assignments): what a transactional offset commit of this assignment's turns carries.
        self.group_metadata: Any = None
        self.member_id: str | None = None

    # -- the event loop's side ------------------------------------------------------------------
    def start(self) -> None:
        self._runner.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Leave the group and close the consumer (on its thread); wait for the thread to end."""
        if not self._runner.is_alive():
            return
        self._stopping.set()
        self._runner.join(timeout_s)

    def call(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """Run ``fn(*args)`` on the consumer's thread between two ``consume()`` calls."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if not self._runner.is_alive() and self._runner.ident is not None:
            future.set_exception(ConsumerClosed(f"the consumer thread has stopped ({self.error or 'closed'})"))
            return future
        self._calls.put((fn, args, future))
        if self._closing:  # the ending thread may have failed its queued calls for the last time already
            self._fail_calls()
        return future

    def set_active(self, partitions: Iterable[TopicPart]) -> None:
        self.active = frozenset(partitions)

    def take(self, partitions: Iterable[TopicPart]) -> list[RecordBatch]:
        """Everything buffered for ``partitions`` (and marker-only advances), emptied from the buffer."""
        out = []
        with self._lock:
            for tp in partitions:
                part = self._parts.get(tp)
                if part is None or not (part.records or part.marked):
                    continue
                out.append(RecordBatch(tp[0], tp[1], part.records, part.end, part.epoch, self.generation))
                part.records = []
                part.marked = False
        return out

    def stale_offset(self, topic: str, partition: int, epoch: int) -> int | None:
        """None if records of this epoch were fetched after the partition's last seek; else an offset
        just below where that seek sent it (-1 for a logical offset, or a partition gone)."""
        part = self._parts.get((topic, partition))
        if part is not None and part.epoch == epoch:
            return None
        return part.sought - 1 if part is not None and part.sought > 0 else -1

    def release(self) -> None:
        """Let the held partitions be fetched again."""
        self.held = set()

    # -- calls made on the consumer's thread (through :meth:`call`) -------------------------------
    def seek(self, topic: str, partition: int, offset: int, hold: bool = False) -> None:
        """Read the partition from ``offset`` (a logical offset too): drops what was buffered."""
        from confluent_kafka import TopicPartition

        tp = (topic, partition)
        with self._lock:
            part = self._parts.setdefault(tp, _Partition())
            part.records = []
            part.marked = False
            part.epoch += 1
            part.end = offset
            part.sought = offset
            if hold:
                self.held.add(tp)
        self.consumer.seek(TopicPartition(topic, partition, offset))

    def subscribe(self, topics: list[str]) -> None:
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)

    # -- the thread -------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._serve_calls()
                fetching = self._sync_pauses()
                records = self.consumer.consume(self.max_records, self.idle_s)
                touched = self._store(records) if records else set()
                # A partition that brought nothing may have moved past transaction markers; one of a
                # busy worker's quiet partitions too, so this is not left to an empty fetch.
                quiet = [tp for tp in fetching if tp not in touched]
                if quiet:
                    self._note_markers(quiet)
        except BaseException as exc:
            self.error = exc
            log.exception("the Kafka consumer's thread failed; the worker stops")
        finally:
            self._closing = True
            self._fail_calls()
            try:
                self.consumer.close()  # leaves the group: its revocation is not handed to Faust
            except Exception as exc:  # noqa: BLE001 - closing anyway
                log.warning("closing the Kafka consumer: %s", exc)
            self._fail_calls()
            self.wakeup()

    def _serve_calls(self, block_s: float = 0.0) -> None:
        while True:
            try:
                fn, args, future = self._calls.get(timeout=block_s) if block_s else self._calls.get_nowait()
            except queue.Empty:
                return
            block_s = 0.0
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

    def _fail_calls(self) -> None:
        while True:
            try:
                _fn, _args, future = self._calls.get_nowait()
            except queue.Empty:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(ConsumerClosed("the Kafka consumer has stopped"))

    def _sync_pauses(self) -> list[TopicPart]:
        """Pause in librdkafka what is not wanted now; resume what is. Returns what is fetched."""
        from confluent_kafka import TopicPartition

        with self._lock:
            full = {tp for tp, part in self._parts.items() if len(part.records) >= self.buffer_records}
            wanted = (self.active & self.assigned) - self.held - full
            pause = self.assigned - wanted - self._paused
            resume = self._paused & wanted
        if pause:
            self.consumer.pause([TopicPartition(t, p) for t, p in pause])
            self._paused |= pause
        if resume:
            self.consumer.resume([TopicPartition(t, p) for t, p in resume])
            self._paused -= resume
        return sorted(wanted)

    def _store(self, records: list[Any]) -> set[TopicPart]:
        """Buffer the records; returns the partitions they came for."""
        from confluent_kafka import TopicPartition

        stored = False
        touched: set[TopicPart] = set()
        with self._lock:
            last: TopicPart | None = None
            part: _Partition | None = None
            for record in records:
                if record.error() is not None:
                    self._on_error(record)
                    continue
                tp = (record.topic(), record.partition())
                if tp != last:
                    last = tp
                    part = self._parts.get(tp) if tp in self.assigned else None
                    if part is None and tp in self.assigned:
                        part = self._parts[tp] = _Partition()
                    if part is not None:
                        touched.add(tp)
                if part is None:
                    continue  # revoked meanwhile: the next owner reads it
                part.records.append(record)
                part.end = record.offset() + 1
                stored = True
        for topic, partition in touched:
            _low, high = self.consumer.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
            if high is not None and high >= 0:
                self.highwaters[(topic, partition)] = high
        if stored:
            self.wakeup()
        return touched

    def _note_markers(self, fetching: list[TopicPart]) -> None:
        """A partition of a batched topic whose position moved past transaction markers with no record:
        its end is handed over (so that its reader knows it has read everything up to there)."""
        from confluent_kafka import TopicPartition

        batched = [tp for tp in fetching if tp[0] in self.batched_topics]
        if not batched:
            return
        moved = False
        positions = self.consumer.position([TopicPartition(t, p) for t, p in batched])
        with self._lock:
            for where in positions:
                part = self._parts.get((where.topic, where.partition))
                if part is not None and not part.records and part.end >= 0 and where.offset > part.end:
                    part.end = where.offset
                    part.marked = True
                    moved = True
        if moved:
            self.wakeup()

    def _on_error(self, record: Any) -> None:
        err = record.error()
        if err.fatal():
            raise RuntimeError(f"Kafka consumer failed for good: {err}")
        log.warning("Kafka consumer: %s (topic %s, partition %s)", err, record.topic(), record.partition())

    # -- rebalance events (called by librdkafka inside consume(), on the thread) ------------------
    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        tps = [(tp.topic, tp.partition) for tp in partitions]
        consumer.assign(partitions)
        # Nothing is fetched until the application asks for a partition (Faust recovers first).
        consumer.pause(partitions)
        with self._lock:
            self.generation += 1
            self.group_metadata = consumer.consumer_group_metadata()
            self.member_id = consumer.memberid()
            self.assigned = frozenset(tps)
            self._paused = set(tps)
            self.held = set()
            for tp in tps:
                self._parts[tp] = _Partition()
        self._handle(ASSIGN, tps)

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self._lose(consumer, REVOKE, partitions)

    def _on_lost(self, consumer: Any, partitions: list[Any]) -> None:
        self._lose(consumer, LOST, partitions)

    def _lose(self, consumer: Any, kind: str, partitions: list[Any]) -> None:
        tps = [(tp.topic, tp.partition) for tp in partitions]
        if kind == LOST:  # nothing of this assignment can be committed any more
            self.group_metadata, self.member_id = None, None
        if not self._closing:
            self._handle(kind, tps)
        with self._lock:
            self.group_metadata, self.member_id = None, None
            self.assigned = self.assigned - set(tps)
            self._paused -= set(tps)
            self.held -= set(tps)
            for tp in tps:
                self._parts.pop(tp, None)
                self.highwaters.pop(tp, None)
        consumer.unassign()

    def _handle(self, kind: str, tps: list[TopicPart]) -> None:
        """Hand the event over and wait until it is handled, running the calls made meanwhile."""
        done = self.on_rebalance(kind, tps)
        while not done.done():
            if self._stopping.is_set():
                return  # closing: the group moves on without us
            self._serve_calls(block_s=0.05)
        exc = done.exception()
        if exc is not None:
            log.error("handling the %s of %s failed: %r", kind, tps, exc)
