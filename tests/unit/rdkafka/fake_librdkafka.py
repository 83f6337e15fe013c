"""A fake of what the driver calls on confluent-kafka's ``Consumer``, over in-memory partition logs.

Like librdkafka, it runs the group's rebalance callbacks from inside ``consume()`` (the test queues
them with :meth:`FakeLibrdkafka.rebalance`), returns no record of a paused partition, moves a
partition's position past transaction markers (which are never returned) and, on ``close()``,
revokes what is still assigned through the subscription's callback.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

TopicPart = tuple[str, int]
MARKER = object()  # a transaction marker in a partition's log: takes an offset, is never returned
OFFSET_INVALID = -1001


class FakeMessage:
    def __init__(self, topic: str | None, partition: int | None, offset: int, value: bytes | None = None,
                 key: bytes | None = None, error: KafkaError | None = None) -> None:
        self._topic, self._partition, self._offset = topic, partition, offset
        self._value, self._key, self._error = value, key, error

    def topic(self) -> str | None:
        return self._topic

    def partition(self) -> int | None:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def error(self) -> KafkaError | None:
        return self._error

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def timestamp(self) -> tuple[int, int]:
        return 1, 1_700_000_000_000 + self._offset  # TIMESTAMP_CREATE_TIME, milliseconds

    def headers(self) -> list[tuple[str, bytes]] | None:
        return None


class FakeLibrdkafka:
    """One group member of a fake cluster. The test side (``produce``, ``rebalance``, ``fail``...)
    and the consumer's thread (the librdkafka API) share its state under one lock."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.logs: dict[TopicPart, list[Any]] = defaultdict(list)
        self.committed_offsets: dict[TopicPart, int] = {}
        self.assignment: set[TopicPart] = set()
        self.refuse_seek: set[TopicPart] = set()
        self.paused: set[TopicPart] = set()
        self.positions: dict[TopicPart, int] = {}
        self.generation = 0
        self.subscribed: list[str] = []
        self.callbacks: dict[str, Callable[[Any, list[TopicPartition]], None]] = {}
        self.closed = False
        self.consumes = 0
        self.pause_calls: list[set[TopicPart]] = []
        self.resume_calls: list[set[TopicPart]] = []
        self.seeks: list[TopicPart] = []
        self.metadata_asked_from = ""  # the thread that last asked for a topic's metadata
        self.busy: TopicPart | None = None  # a partition that gains a record before every consume()
        self._events: deque[tuple[str, list[TopicPart]]] = deque()
        self._errors: deque[KafkaError] = deque()
        self._gate: threading.Event | None = None
        self.gated = threading.Event()  # set once consume() waits at the gate

    # -- the test's side ----------------------------------------------------------------------------
    def produce(self, topic: str, partition: int, *values: bytes) -> None:
        with self.lock:
            self.logs[(topic, partition)].extend(values)

    def mark(self, topic: str, partition: int, count: int = 1) -> None:
        """Append transaction markers (commit or abort) to the partition's log."""
        with self.lock:
            self.logs[(topic, partition)].extend([MARKER] * count)

    def rebalance(self, kind: str, tps: list[TopicPart]) -> None:
        """Queue a rebalance event ("assign", "revoke", "lost"): the next consume() runs its callback."""
        with self.lock:
            self._events.append((kind, tps))

    def fail(self, error: KafkaError, gate: threading.Event | None = None) -> None:
        """The next consume() returns ``error`` as a message (waiting first for ``gate``, if given)."""
        with self.lock:
            self._errors.append(error)
            self._gate = gate

    def consumes_after(self, count: int, timeout_s: float = 5.0) -> None:
        """Wait until ``count`` more consume() calls have returned."""
        with self.lock:
            target = self.consumes + count
        wait_for(lambda: self.consumes >= target, f"{count} more consume() calls", timeout_s)

    # -- what the driver calls --------------------------------------------------------------------
    def subscribe(self, topics: list[str], on_assign: Any = None, on_revoke: Any = None, on_lost: Any = None) -> None:
        self.subscribed = list(topics)
        self.callbacks = {"assign": on_assign, "revoke": on_revoke, "lost": on_lost}

    def consume(self, num_messages: int, timeout: float) -> list[FakeMessage]:
        with self.lock:
            events = list(self._events)
            self._events.clear()
            gate = self._gate
        for kind, tps in events:
            if kind == "assign":
                self.generation += 1
            self.callbacks[kind](self, [TopicPartition(t, p) for t, p in tps])
        if gate is not None:
            self.gated.set()
            gate.wait(5.0)
        out: list[FakeMessage] = []
        with self.lock:
            if self.busy is not None:
                self.logs[self.busy].append(b"busy")
            for tp in sorted(self.assignment - self.paused):
                log, pos = self.logs[tp], self.positions[tp]
                while pos < len(log) and len(out) < num_messages:
                    if log[pos] is not MARKER:
                        out.append(FakeMessage(tp[0], tp[1], pos, log[pos], key=b"k%d" % pos))
                    pos += 1
                self.positions[tp] = pos
            while self._errors:
                out.append(FakeMessage(None, None, -1, error=self._errors.popleft()))
                self._gate = None
            self.consumes += 1
        if not out:
            time.sleep(timeout)
        return out

    def assign(self, partitions: list[TopicPartition]) -> None:
        with self.lock:
            for tp in partitions:
                key = (tp.topic, tp.partition)
                self.assignment.add(key)
                self.positions[key] = tp.offset if tp.offset >= 0 else self.committed_offsets.get(key, 0)

    def unassign(self) -> None:
        with self.lock:
            self.assignment.clear()
            self.paused.clear()
            self.positions.clear()

    def pause(self, partitions: list[TopicPartition]) -> None:
        tps = {(tp.topic, tp.partition) for tp in partitions}
        with self.lock:
            self.pause_calls.append(tps)
            self.paused |= tps

    def resume(self, partitions: list[TopicPartition]) -> None:
        tps = {(tp.topic, tp.partition) for tp in partitions}
        with self.lock:
            self.resume_calls.append(tps)
            self.paused -= tps

    def seek(self, where: TopicPartition) -> None:
        key = (where.topic, where.partition)
        if key in self.refuse_seek:  # librdkafka's answer for a partition a rebalance is taking away
            raise KafkaException(KafkaError(KafkaError._STATE, f"Failed to seek to offset {where.offset}"))
        with self.lock:
            self.seeks.append(key)
            end = len(self.logs[key])
            self.positions[key] = {-2: 0, -1: end}.get(where.offset, where.offset)

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        with self.lock:
            return [TopicPartition(tp.topic, tp.partition, self.positions.get((tp.topic, tp.partition), OFFSET_INVALID))
                    for tp in partitions]

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        with self.lock:
            return [TopicPartition(tp.topic, tp.partition,
                                   self.committed_offsets.get((tp.topic, tp.partition), OFFSET_INVALID))
                    for tp in partitions]

    def commit(self, offsets: list[TopicPartition], asynchronous: bool = True) -> None:
        with self.lock:
            self.committed_offsets.update({(tp.topic, tp.partition): tp.offset for tp in offsets})

    def get_watermark_offsets(self, partition: TopicPartition, timeout: float | None = None,
                              cached: bool = False) -> tuple[int, int]:
        with self.lock:
            return 0, len(self.logs[(partition.topic, partition.partition)])

    def list_topics(self, topic: str, timeout: float | None = None) -> Any:
        """Metadata of ``topic`` as librdkafka's consumer answers it: known once it holds records."""
        with self.lock:
            known = any(t == topic for t, _p in self.logs)
            self.metadata_asked_from = threading.current_thread().name
        return SimpleNamespace(topics={topic: SimpleNamespace(error=None)} if known else {})

    def consumer_group_metadata(self) -> str:
        return f"group-metadata-of-generation-{self.generation}"

    def memberid(self) -> str:
        return "member-1"

    def close(self) -> None:
        with self.lock:
            assigned = sorted(self.assignment)
        if assigned and self.callbacks.get("revoke"):
            self.callbacks["revoke"](self, [TopicPartition(t, p) for t, p in assigned])
        self.closed = True


def wait_for(predicate: Callable[[], Any], what: str, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.002)
