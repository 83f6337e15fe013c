"""The shipping loop: tail files, batch lines, send, advance the checkpoint on acknowledgement.

One thread; the clock is passed in. Each ``tick`` checks the tailed paths for rotation, reads new
bytes while the memory cap allows, hands due batches to the producer, processes delivery reports
and writes the checkpoint. The checkpoint only ever holds offsets that Kafka acknowledged, so a
crash re-sends at most the unacknowledged tail, with the same offsets (downstream de-duplicates).

Memory: ``held_bytes`` = file bytes read but not yet acknowledged (pending batches, partial lines,
records in the producer). At ``max_buffer_bytes`` reading stops; the files are the buffer.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from streams.ship.batching import Batch, Batcher, next_send_ms, stagger_phase_ms
from streams.ship.checkpoint import Checkpoint, CheckpointStore, Entry
from streams.ship.identity import Change, Fingerprint, Observation, classify
from streams.ship.labels import SourceBuilder
from streams.ship.sender import Sender, SendError
from streams.ship.settings import ShipSettings
from streams.ship.tailer import TailedFile, directory_of, discover, find_copy, find_in_directory, observe_path

log = logging.getLogger(__name__)


@dataclass
class Stats:
    lines_read: int = 0
    bytes_read: int = 0
    batches_sent: int = 0
    batches_acked: int = 0
    delivery_failures: int = 0
    rotations: int = 0
    truncations: int = 0
    max_held_bytes: int = 0
    checkpoints_written: int = 0


@dataclass
class _Flight:
    stream: int
    epoch: int
    nbytes: int
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
        self.files: dict[int, TailedFile] = {}
        self.at_path: dict[str, int] = {}
        self.checkpoint = Checkpoint()
        self.stats = Stats()
        self.phase_ms = stagger_phase_ms(sources.node.host, int(ship.stagger_window_s * 1000))
        self.interval_ms = max(1, int(ship.interval_s * 1000))
        self._next_id = 0
        self._orphan_bytes = 0  # in flight from before a rewind: still in the producer's memory
        self._next_scan = 0.0
        self._next_send_ms = 0
        self._send_blocked_until = 0.0
        self._dirty = False
        self._last_checkpoint = 0.0

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        now = self.clock()
        saved = self.store.load()
        self.checkpoint = saved or Checkpoint()
        self._restore(now, first_start=saved is None)
        self._next_scan = now + self.ship.scan_interval_s
        self._next_send_ms = next_send_ms(int(now * 1000), self.interval_ms, self.phase_ms)
        self._save(now)

    def run(self, stop: threading.Event) -> None:
        self.start()
        while not stop.is_set():
            stop.wait(self.tick())
        self.shutdown()

    def tick(self) -> float:
        """One pass; returns how long to wait before the next."""
        now = self.clock()
        if now >= self._next_scan:
            self._scan(now)
            self._next_scan = now + self.ship.scan_interval_s
        self._check_paths(now)
        self._read(now)
        self._send(now)
        self.sender.poll(0)
        self._retire(now)
        if self._dirty and now - self._last_checkpoint >= self.ship.checkpoint_interval_s:
            self._save(now)
        until_send = self._next_send_ms / 1000 - now
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

    def acked_entries(self) -> list[Entry]:
        return [f.entry() for f in self.files.values()]

    # -- files -----------------------------------------------------------------------------------

    def _track(self, path: str, fd: int | None, obs: Observation, fingerprint: Fingerprint, generation: int,
               offset: int, now: float, attached: bool) -> TailedFile:
        f = TailedFile(self._next_id, path, fd, obs, fingerprint, generation, offset, self.ship.max_line_bytes, now)
        self._next_id += 1
        source, labels = self.sources.for_path(path)
        from streams.rawbatch import source_key

        f.source, f.labels, f.key = source, labels, source_key(source)
        f.attached = attached
        self.files[f.id] = f
        if attached:
            self.at_path[path] = f.id
        self.checkpoint.generations[path] = max(self.checkpoint.generations.get(path, -1), generation)
        self._dirty = True
        return f

    def _open_new(self, path: str, now: float, at_end: bool = False) -> TailedFile | None:
        opened = TailedFile.open_fd(path)
        if opened is None:
            return None
        fd, obs = opened
        if any((f.dev, f.ino) == (obs.dev, obs.ino) for f in self.files.values()):
            os.close(fd)  # a tracked file renamed to a name the globs match: not a new file
            return None
        gen = self.checkpoint.next_generation(path)
        log.info("tailing %s (generation %d)", path, gen)
        return self._track(path, fd, obs, Fingerprint.of(obs.head), gen, obs.size if at_end else 0, now, True)

    def _restore(self, now: float, first_start: bool) -> None:
        paths = set(discover(self.ship.paths, self.ship.exclude))
        claimed: set[str] = set()
        for e in self.checkpoint.entries:
            where = None
            obs = observe_path(e.path) if e.path not in claimed else None
            if obs and (obs.dev, obs.ino) == (e.dev, e.ino):
                change = classify(e.dev, e.ino, e.fingerprint, e.offset, obs)
                if change in (Change.SAME, Change.GREW):
                    where = e.path
                else:  # truncated while we were down: its tail is in the copy, if there is one
                    where = find_copy(directory_of(e.path), e.fingerprint, e.offset, e.ino)
            else:
                where = find_in_directory(directory_of(e.path), e.dev, e.ino, e.fingerprint)
            opened = TailedFile.open_fd(where) if where else None
            if opened is None:
                log.warning("%s (inode %d) is gone; it was shipped up to byte %d", e.path, e.ino, e.offset)
                continue
            fd, obs = opened
            attached = where == e.path and where in paths
            if attached:
                claimed.add(e.path)
            self._track(e.path, fd, obs, e.fingerprint, e.generation, e.offset, now, attached)
        for path in sorted(paths - claimed):
            self._open_new(path, now, at_end=first_start and self.ship.start_at == "end")

    def _scan(self, now: float) -> None:
        for path in discover(self.ship.paths, self.ship.exclude):
            if path not in self.at_path:
                self._open_new(path, now)

    def _check_paths(self, now: float) -> None:
        for fid in list(self.at_path.values()):
            f = self.files[fid]
            try:
                st = Path(f.path).stat()
            except FileNotFoundError:
                self._detach(f)  # deleted, or renamed with nothing created yet: drain it
                continue
            if (st.st_dev, st.st_ino) != (f.dev, f.ino):
                self.stats.rotations += 1
                log.info("%s rotated (renamed, new file created)", f.path)
                self._detach(f)
                self._open_new(f.path, now)
                continue
            if (st.st_size, st.st_mtime_ns) == f.last_stat:
                continue
            f.last_stat = (st.st_size, st.st_mtime_ns)
            obs = f.observe(st)
            if classify(f.dev, f.ino, f.fingerprint, f.read_pos, obs) is Change.TRUNCATED:
                self._truncated(f, now)
            else:
                f.extend_fingerprint(obs.head)

    def _detach(self, f: TailedFile) -> None:
        f.attached = False
        if self.at_path.get(f.path) == f.id:
            del self.at_path[f.path]

    def _truncated(self, f: TailedFile, now: float) -> None:
        """copytruncate: the old content continues in the copy; the path starts a new generation."""
        self.stats.truncations += 1
        copy = find_copy(directory_of(f.path), f.fingerprint, f.read_pos, f.ino)
        opened = TailedFile.open_fd(copy) if copy else None
        self._detach(f)
        if opened:
            log.info("%s truncated (copytruncate); reading its tail from %s", f.path, copy)
            f.move_to(opened[0], opened[1])
        else:
            log.warning("%s truncated and no copy found: bytes written after offset %d before the truncation "
                        "are lost", f.path, f.read_pos)
            f.close()
        f.at_eof = False
        self._open_new(f.path, now)

    def _retire(self, now: float) -> None:
        pending = None
        for f in list(self.files.values()):
            if f.attached or f.read_pos != f.acks.offset or f.acks.in_flight or f.splitter.partial:
                continue
            if f.fd is not None and not (f.at_eof and now - f.last_growth >= self.ship.rotate_wait_s):
                continue
            pending = self.batcher.pending_streams() if pending is None else pending
            if f.id in pending:
                continue
            f.close()
            del self.files[f.id]
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
        batches = self.batcher.take_full()
        now_ms = int(now * 1000)
        if now_ms >= self._next_send_ms or self.held_bytes() >= self.ship.max_buffer_bytes:
            batches += self.batcher.take_all()
            if now_ms >= self._next_send_ms:
                self._next_send_ms = next_send_ms(now_ms, self.interval_ms, self.phase_ms)
        self._dispatch(batches, now)

    def _dispatch(self, batches: list[Batch], now: float) -> None:
        for i, batch in enumerate(batches):
            f = self.files[batch.stream]
            flight = _Flight(f.id, f.epoch, batch.end - batch.start)
            value: dict[str, Any] = {"source": f.source, "labels": f.labels, "lines": batch.records,
                                     "sent_ts": int(now * 1000)}
            try:
                self.sender.send(f.key, value, partial(self._delivered, flight))
            except SendError as exc:
                log.warning("%s; retrying in %.1fs", exc, self.ship.retry_backoff_s)
                self.batcher.put_back(batches[i:])
                self._send_blocked_until = now + self.ship.retry_backoff_s
                return
            flight.token = f.acks.sent(batch.end)
            f.inflight_bytes += flight.nbytes
            self.stats.batches_sent += 1

    def _delivered(self, flight: _Flight, err: Exception | None) -> None:
        f = self.files.get(flight.stream)
        if f is None or f.epoch != flight.epoch:
            self._orphan_bytes -= flight.nbytes
            return
        f.inflight_bytes -= flight.nbytes
        if err is not None:
            self.stats.delivery_failures += 1
            log.warning("%s: %s; re-reading %s from byte %d", err, f.path, f.path, f.acks.offset)
            self._orphan_bytes += f.inflight_bytes
            self.batcher.drop(f.id)
            f.rewind()
            f.paused_until = self.clock() + self.ship.retry_backoff_s
            return
        self.stats.batches_acked += 1
        if f.acks.acked(flight.token):
            self._dirty = True

    def _save(self, now: float) -> None:
        self.checkpoint.entries = self.acked_entries()
        self.store.save(self.checkpoint)
        self.stats.checkpoints_written += 1
        self._dirty = False
        self._last_checkpoint = now
