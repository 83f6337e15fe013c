"""The sampling loop: read the GPUs every ``interval_s``, turn each into a metric point, send them on
the shipper's schedule. One thread; the clock is passed in (tests drive it, samples carry its time).

Samples are taken on the interval grid (``t mod interval == 0``), so every node samples at the same
instants and a sample's time names it. They are sent the way the shipper sends lines: held until
the node's staggered send instant (``ship.interval_s``, ``ship.stagger_window_s``), then handed to
the producer together, which batches them into a few requests. A sample Kafka did not take is
queued again; past ``max_pending_points`` the oldest are dropped and counted: a node that cannot
reach Kafka for hours must not grow without bound.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from streams.gpu.attribution import ContainerRef, KnownSource, ProcCgroups, attribute
from streams.gpu.points import metric_point, sample_key
from streams.gpu.reading import GpuReader, GpuReadError
from streams.gpu.settings import GpuSettings
from streams.ship.batching import next_send_ms
from streams.ship.sender import SendError

log = logging.getLogger(__name__)

SEND_AT_ONCE = 1000  # this many samples waiting go at once, schedule or not


# Called with None once Kafka has the sample, else with the error.
PointDelivery = Callable[[Exception | None], None]


class PointSender(Protocol):
    """Hands one sample to the producer (``SendError``: not now, retry later) and reports delivery."""

    def send(self, key: bytes, value: dict[str, Any], on_delivery: PointDelivery) -> None: ...

    def poll(self, timeout_s: float) -> None: ...

    def flush(self, timeout_s: float) -> int: ...


@dataclass
class SamplerStats:
    samples: int = 0  # reads of the whole node
    points: int = 0
    read_failures: int = 0
    sent: int = 0
    acked: int = 0
    delivery_failures: int = 0
    dropped: int = 0


class GpuSampler:
    def __init__(self, reader: GpuReader, sender: PointSender, conf: GpuSettings, *, host: str,
                 node_labels: dict[str, str], known_sources: Callable[[], list[KnownSource]],
                 cgroups: ProcCgroups | None, send_interval_s: float, phase_ms: int,
                 clock: Callable[[], float] = time.time) -> None:
        self.reader = reader
        self.sender = sender
        self.conf = conf
        self.host = host
        self.node_labels = dict(node_labels)
        self.known_sources = known_sources
        self.cgroups = cgroups
        self.send_interval_ms = max(1, int(send_interval_s * 1000))
        self.phase_ms = phase_ms
        self.clock = clock
        self.pending: deque[tuple[bytes, dict[str, Any]]] = deque()
        self.stats = SamplerStats()
        self._next_sample = 0.0
        self._next_send_ms = 0
        self._blocked_until = 0.0

    def start(self) -> None:
        now = self.clock()
        self._next_sample = self._grid_after(now)
        self._next_send_ms = next_send_ms(int(now * 1000), self.send_interval_ms, self.phase_ms)

    def _grid_after(self, now: float) -> float:
        interval = self.conf.interval_s
        return (now // interval + 1) * interval

    def tick(self) -> float:
        """One pass; returns how long to wait before the next."""
        now = self.clock()
        due = self._next_sample
        if now >= due:
            # Stamped with the grid instant it was due at (the loop wakes a moment late), so that
            # samples line up across GPUs and nodes; a loop held up for longer stamps the real time.
            self.sample(due if now - due < self.conf.interval_s else now)
            self._next_sample = self._grid_after(now)
        now_ms = int(now * 1000)
        if now_ms >= self._next_send_ms or len(self.pending) >= SEND_AT_ONCE:
            self.send(now)
            if now_ms >= self._next_send_ms:
                self._next_send_ms = next_send_ms(now_ms, self.send_interval_ms, self.phase_ms)
        self.sender.poll(0)
        return max(0.0, min(self._next_sample - now, self._next_send_ms / 1000 - now))

    def run(self, stop: threading.Event) -> None:
        self.start()
        while not stop.is_set():
            stop.wait(self.tick())
        self.shutdown()

    def sample(self, now: float) -> list[dict[str, Any]]:
        """Read every GPU once and queue its point stamped ``now``; a failed read skips this sample."""
        try:
            readings = self.reader.read()
        except GpuReadError as exc:
            self.stats.read_failures += 1
            log.warning("%s", exc)
            return []
        self.stats.samples += 1
        refs: dict[int, ContainerRef | None] = {}
        if self.cgroups is not None:
            refs = self.cgroups.refs({pid for r in readings for pid in r.pids})
        known = self.known_sources()
        ts_ms = int(now * 1000)
        points = []
        for reading in readings:
            who = attribute(reading, [ref for pid in reading.pids if (ref := refs.get(pid))], known, now,
                            node_labels=self.node_labels, active_s=self.conf.node_task_active_s,
                            in_use_memory_mb=self.conf.in_use_memory_mb,
                            assume_node_task=self.conf.assume_node_task)
            point = metric_point(reading, who, self.host, self.node_labels, ts_ms, self.reader.name)
            points.append(point)
            self._queue(sample_key(self.host, reading), point)
        self.stats.points += len(points)
        return points

    def _queue(self, key: bytes, point: dict[str, Any]) -> None:
        self.pending.append((key, point))
        while len(self.pending) > self.conf.max_pending_points:
            self.pending.popleft()
            self.stats.dropped += 1
            if self.stats.dropped in (1, 10, 100) or self.stats.dropped % 1000 == 0:
                log.warning("GPU samples: %d dropped so far (Kafka has not taken them; max_pending_points=%d)",
                            self.stats.dropped, self.conf.max_pending_points)

    def send(self, now: float) -> None:
        if now < self._blocked_until:
            return
        while self.pending:
            key, point = self.pending[0]
            try:
                self.sender.send(key, point, partial(self._delivered, key, point))
            except SendError as exc:
                log.warning("GPU samples: %s; retrying in a send interval", exc)
                self._blocked_until = now + self.send_interval_ms / 1000
                return
            self.pending.popleft()
            self.stats.sent += 1

    def _delivered(self, key: bytes, point: dict[str, Any], err: Exception | None) -> None:
        if err is None:
            self.stats.acked += 1
            return
        self.stats.delivery_failures += 1
        log.warning("GPU sample %s not delivered (%s); it is sent again", point["event_id"], err)
        self._queue(key, point)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self.send(self.clock())
        left = self.sender.flush(timeout_s)
        if left or self.pending:
            log.warning("GPU samples: %d in flight and %d unsent at exit are lost (telemetry is not checkpointed)",
                        left, len(self.pending))
        self.reader.close()
