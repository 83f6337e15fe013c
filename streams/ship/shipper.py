"""The shipping loop: tail files, batch lines, send, advance the checkpoint on acknowledgement.

One thread; the clock is passed in. Each ``tick`` checks the tailed paths for rotation, reads new
bytes while the memory cap allows, hands due batches to the producer, processes delivery reports,
bounds what waits, and writes the checkpoint. The checkpoint only ever holds offsets that Kafka
acknowledged, so a crash re-sends at most the unacknowledged tail, with the same offsets
(downstream de-duplicates).

Memory: ``held_bytes`` = file bytes read but not yet acknowledged (pending batches, partial lines,
records in the producer). At ``max_buffer_bytes`` reading stops; the files are the buffer, and
what waits in them is bounded by ``max_waiting_bytes`` and ``max_waiting_age_s`` (``backlog``).

Nothing blocks a file forever: a path that is a symlink or resolves outside the globs' roots is
refused (``files``, ``tailer``), every field is bounded to the contract (``bounds``), a batch that
still does not fit one message is split and a line that fits in none is quarantined (``packing``),
and a checkpoint that cannot be written is retried while shipping goes on.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from streams.ship.backlog import Drop, Waiting, plan_drops
from streams.ship.batching import Batch, Batcher, Due, SendSchedule, stagger_phase_ms
from streams.ship.checkpoint import Checkpoint, CheckpointError, CheckpointStore, Entry
from streams.ship.files import TailedFiles
from streams.ship.health import ShipHealth
from streams.ship.labels import SourceBuilder
from streams.ship.packing import Packer
from streams.ship.sender import DeliveryError, Sender, SendError
from streams.ship.settings import ShipSettings
from streams.ship.stats import Stats
from streams.ship.tailer import TailedFile

log = logging.getLogger(__name__)

# How often the waiting bound is checked.
BACKLOG_CHECK_S = 1.0


@dataclass(frozen=True)
class Gauges:
    """What /metrics reports as levels, replaced whole once a second (read from another thread)."""

    waiting_bytes: int = 0  # bytes of the tailed files Kafka has not acknowledged, read or not
    waiting_lines: int = 0  # lines read and not yet acknowledged (unread lines are not counted yet)
    held_bytes: int = 0  # bytes read and not yet acknowledged: the memory cap's measure
    oldest_waiting_s: float = 0.0  # age of the oldest byte Kafka has not acknowledged
    files: int = 0


@dataclass
class _Flight:
    stream: int
    epoch: int
    nbytes: int  # file bytes the batch covers
    lines: int
    parts: int  # records the batch was sent as (more than one when it was split)
    largest: int  # bytes of the largest of them
    sent_at: float
    token: int = -1


class Shipper:
    def __init__(self, ship: ShipSettings, sender: Sender, store: CheckpointStore, sources: SourceBuilder,
                 clock: Callable[[], float] = time.time) -> None:
        self.ship = ship
        self.sender = sender
        self.store = store
        self.sources = sources
        self.clock = clock
        self.batcher = Batcher(ship.max_batch_lines, ship.max_batch_bytes)
        self.stats = Stats()
        self.health = ShipHealth(clock)
        self.tailed = TailedFiles(ship, sources, self.stats)
        self.files = self.tailed.files  # the same dict: files being read, by id
        self.phase_ms = stagger_phase_ms(sources.node.host, int(ship.stagger_window_s * 1000))
        self.schedule = SendSchedule(int(ship.interval_s * 1000), self.phase_ms, ship.early_send_fraction)
        self.packer = Packer(sender, ship.max_message_bytes, self.stats)
        self.waiting_bytes = 0  # as of the last backlog check
        self.gauges = Gauges()
        self._orphan_bytes = 0  # in flight from before a rewind: still in the producer's memory
        self._inflight_lines = 0
        self._next_scan = 0.0
        self._next_backlog = 0.0
        self._send_blocked_until = 0.0
        self._dirty = False
        self._last_checkpoint = 0.0

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        now = self.clock()
        saved = self.store.load()
        self.tailed.restore(saved or Checkpoint(), now, first_start=saved is None)
        self._next_scan = now + self.ship.scan_interval_s
        self.schedule.start(int(now * 1000))
        self._save(now)

    def run(self, stop: threading.Event) -> None:
        self.start()
        while not stop.is_set():
            stop.wait(self.tick())
        self.shutdown()

    def tick(self) -> float:
        """One pass; returns how long to wait before the next."""
        now = self.clock()
        self.health.turned()
        if now >= self._next_scan:
            self.tailed.scan(now)
            self._next_scan = now + self.ship.scan_interval_s
        self.tailed.check_paths(now)
        if now >= self._next_backlog:
            self._bound_waiting(now)
            self._next_backlog = now + BACKLOG_CHECK_S
        self._read(now)
        self._send(now)
        self.sender.poll(0)
        self.tailed.retire(now, self.batcher.pending_streams)
        if (self._dirty or self.tailed.dirty) and now - self._last_checkpoint >= self.ship.checkpoint_interval_s:
            self._save(now)
        until_send = self.schedule.wait_ms(int(now * 1000)) / 1000
        return max(0.0, min(self.ship.poll_interval_s, until_send))

    def shutdown(self) -> None:
        """Send what is complete, wait for acknowledgements (bounded), write the checkpoint."""
        now = self.clock()
        self._dispatch(self.batcher.take_all(), now)
        remaining = self.sender.flush(self.ship.shutdown_timeout_s)
        if remaining:
            log.warning("%d batches still unacknowledged at exit: they are re-sent on restart", remaining)
        self._save(self.clock())
        for f in self.files.values():
            f.close()

    def held_bytes(self) -> int:
        return sum(f.read_pos - f.acks.offset for f in self.files.values()) + self._orphan_bytes

    def waiting_lines(self) -> int:
        """Lines read and not yet acknowledged (lines in unread bytes are not known until read)."""
        return self.batcher.pending_lines() + self._inflight_lines

    def acked_entries(self) -> list[Entry]:
        return self.tailed.entries()

    # -- files -----------------------------------------------------------------------------------

    # -- the waiting bound ---------------------------------------------------------------------------

    def _bound_waiting(self, now: float) -> None:
        waiting: list[Waiting] = []
        cut = now - self.ship.max_waiting_age_s
        for f in self.files.values():
            if f.fd is None:
                continue
            if not f.attached:  # detached files are not stat-ed by path: look through the descriptor
                try:
                    f.size_seen = os.fstat(f.fd).st_size
                except OSError:
                    continue
                f.history.seen(now, f.size_seen)
            f.history.forget_below(f.acks.offset)
            if f.size_seen <= f.acks.offset:
                continue
            first = f.history.first_seen(f.acks.offset)
            waiting.append(Waiting(f.id, f.acks.offset, f.size_seen, now if first is None else first,
                                   f.history.seen_by(cut), not f.attached))
        self.waiting_bytes = sum(w.nbytes for w in waiting)
        drops = plan_drops(waiting, self.ship.max_waiting_bytes)
        if drops:
            self._drop(drops)
            self.waiting_bytes = max(0, self.waiting_bytes - sum(d.end - d.start for d in drops))
        self.gauges = Gauges(self.waiting_bytes, self.waiting_lines(), self.held_bytes(),
                             max((now - w.first_seen for w in waiting), default=0.0), len(self.files))

    def _drop(self, drops: list[Drop]) -> None:
        """Give up the planned ranges: the file skips to the first line start after them."""
        by_file: dict[int, list[Drop]] = {}
        for d in drops:
            by_file.setdefault(d.stream, []).append(d)
        for sid, parts in by_file.items():
            f = self.files[sid]
            end = max(d.end for d in parts)
            to = end if end >= f.size_seen else f.line_start_at_or_after(end, self.ship.max_line_bytes)
            for d in parts:
                self.stats.dropped_bytes[d.reason] += d.end - d.start
            self.stats.dropped_bytes[parts[-1].reason] += to - end
            lines = sum(len(b.records) for b in self.batcher.drop(f.id))
            self.stats.dropped_lines[parts[-1].reason] += lines
            whole = to >= f.size_seen and not f.attached
            if whole:
                self.stats.dropped_files[parts[-1].reason] += 1
            log.warning("%s: dropped bytes %d to %d (%s) without sending them: more than %s waited for Kafka%s",
                        f.path, f.acks.offset, to, ", ".join(sorted({d.reason for d in parts})),
                        f"{self.ship.max_waiting_bytes} bytes" if parts[-1].reason == "waiting_bytes"
                        else f"{self.ship.max_waiting_age_s:g} s",
                        "; the rotated file is closed" if whole else "")
            self._orphan_bytes += f.inflight_bytes
            f.rewind(to=to)
            self._dirty = True

    # -- reading and sending -------------------------------------------------------------------------

    def _read(self, now: float) -> None:
        cap = self.ship.max_buffer_bytes
        held = self.held_bytes()
        ts_ms = int(now * 1000)
        for f in list(self.files.values()):
            if now < f.paused_until:
                continue
            while held < cap:
                want = min(self.ship.read_chunk_bytes, cap - held)
                data = f.read(want)
                if not data:
                    break
                held += len(data)
                self.stats.bytes_read += len(data)
                f.last_growth = now
                lines = f.splitter.feed(data)
                if lines:
                    self.stats.lines_read += len(lines)
                    self.batcher.add(f.id, f.base, lines, ts_ms)
                if f.at_eof:
                    break
            self._partial(f, now, ts_ms)
        self.stats.max_held_bytes = max(self.stats.max_held_bytes, held)

    def _partial(self, f: TailedFile, now: float, ts_ms: int) -> None:
        if not f.splitter.partial:
            return
        if f.splitter.partial_start != f.partial_mark:
            f.partial_mark, f.partial_since = f.splitter.partial_start, now
        waited = now - f.partial_since >= self.ship.partial_max_wait_s
        rotated_and_idle = not f.attached and f.at_eof and now - f.last_growth >= self.ship.rotate_wait_s
        if waited or rotated_and_idle:
            lines = f.splitter.flush()
            self.stats.lines_read += len(lines)
            self.batcher.add(f.id, f.base, lines, ts_ms)

    def _send(self, now: float) -> None:
        if now < self._send_blocked_until:
            return
        due = self.schedule.due(int(now * 1000), self.held_bytes(), self.ship.max_buffer_bytes,
                                self.waiting_bytes, self.ship.max_waiting_bytes)
        if due is Due.ALL:
            self._dispatch(self.batcher.take_all(), now)
        elif due is Due.FULL:
            self._dispatch(self.batcher.take_full(), now)

    def _dispatch(self, batches: list[Batch], now: float) -> None:
        for i, batch in enumerate(batches):
            f = self.files[batch.stream]
            value: dict[str, Any] = {"source": f.source, "labels": f.labels, "lines": batch.records,
                                     "sent_ts": int(now * 1000)}
            try:
                payloads = self.packer.pack(f.path, value, batch.start, batch.end)
            except SendError as exc:
                self._blocked(exc, now, batches[i:])
                return
            flight = _Flight(f.id, f.epoch, batch.end - batch.start, len(batch.records), len(payloads),
                             max((len(p) for p in payloads), default=0), now)
            flight.token = f.acks.sent(batch.end)
            f.inflight_bytes += flight.nbytes
            self._inflight_lines += flight.lines
            self.stats.batches_sent += 1
            if not payloads:  # every line of it given up (counted): nothing to wait for
                flight.parts = 1
                self._delivered(flight, None)
                continue
            for n, payload in enumerate(payloads):
                try:
                    self.sender.produce(f.key, payload, partial(self._delivered, flight))
                except SendError as exc:
                    if n == 0:  # nothing of it reached the producer: the batch goes first next time
                        f.acks.cancel_last(flight.token)
                        f.inflight_bytes -= flight.nbytes
                        self._inflight_lines -= flight.lines
                        self.stats.batches_sent -= 1
                        self._blocked(exc, now, batches[i:])
                        return
                    flight.parts = n + 1  # n parts are in the producer; this one fails now: re-read the file
                    self._delivered(flight, DeliveryError(str(exc)))
                    self._blocked(exc, now, batches[i + 1:])
                    return

    def _blocked(self, exc: SendError, now: float, rest: list[Batch]) -> None:
        log.warning("%s; retrying in %.1fs", exc, self.ship.retry_backoff_s)
        self.health.kafka(str(exc))
        self.batcher.put_back(rest)
        self._send_blocked_until = now + self.ship.retry_backoff_s

    def _delivered(self, flight: _Flight, err: DeliveryError | None) -> None:
        flight.parts -= 1
        over = flight.parts == 0  # every record of the batch has its report
        if over:
            self._inflight_lines -= flight.lines
        f = self.files.get(flight.stream)
        if f is None or f.epoch != flight.epoch:  # the file was re-read (or dropped) since: not ours to ack
            if over:
                self._orphan_bytes -= flight.nbytes
            return
        if err is not None:
            self.stats.delivery_failures += 1
            self.health.kafka(str(err))
            if err.too_large and flight.largest:
                self.packer.refused_as_too_large(flight.largest)
            log.warning("%s: %s; re-reading it from byte %d", f.path, err, f.acks.offset)
            self._orphan_bytes += f.inflight_bytes - (flight.nbytes if over else 0)
            self.batcher.drop(f.id)
            f.rewind()
            f.paused_until = self.clock() + self.ship.retry_backoff_s
            return
        self.stats.ack_latency.observe(max(0.0, self.clock() - flight.sent_at))
        if not over:
            return
        self.health.kafka(None)
        f.inflight_bytes -= flight.nbytes
        self.stats.batches_acked += 1
        self.stats.lines_sent += flight.lines
        self.stats.bytes_sent += flight.nbytes
        if f.acks.acked(flight.token):
            self._dirty = True

    def _save(self, now: float) -> None:
        checkpoint = self.tailed.checkpoint
        checkpoint.entries = self.acked_entries()
        self._last_checkpoint = now  # a failed write is retried after the same interval
        problem = None
        try:
            self.store.save(checkpoint)
        except CheckpointError as exc:
            problem = str(exc)
        if problem is not None:
            self.stats.checkpoint_failures += 1
            if self.health.checkpoint_problem is None:
                log.error("%s; still shipping, retrying every %gs. After a crash, files are re-sent from the last "
                          "checkpoint written (same offsets, so no duplicates downstream)", problem,
                          self.ship.checkpoint_interval_s)
            self.health.checkpoint(problem)
            return
        if self.health.checkpoint_problem is not None:
            log.warning("checkpoint %s written again", self.store.path)
            self.health.checkpoint(None)
        self.stats.checkpoints_written += 1
        self._dirty = self.tailed.dirty = False
