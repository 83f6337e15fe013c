"""The files being shipped: found by the globs, opened confined, followed through rotation and
truncation, restored from the checkpoint, and closed once drained (I/O through ``tailer``).

Each file found gets the next generation at its path (``identity``); a tracked file renamed away
(rotation) or truncated with a copy (copytruncate) is detached and drained through its descriptor
while its path starts a new generation. A refused path (``paths.Refusal``) is counted and logged once
while it stays refused. A file gone at restart before it was all acknowledged counts as lost.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable

from streams.rawbatch import source_key
from streams.ship.backlog import WriteHistory
from streams.ship.checkpoint import Checkpoint, Entry
from streams.ship.identity import Change, Fingerprint, Observation, classify
from streams.ship.labels import SourceBuilder
from streams.ship.paths import GlobPattern, Refusal
from streams.ship.settings import ShipSettings
from streams.ship.stats import Stats
from streams.ship.tailer import (
    TailedFile,
    directory_of,
    discover,
    find_copy,
    find_in_directory,
    observe_path,
    open_confined,
    resolved_roots,
)

log = logging.getLogger(__name__)

# Age samples a file keeps per age bound (backlog.WriteHistory): ages are this fine.
AGE_SAMPLES = 64


class TailedFiles:
    """Every file being read, by id, and the one at each path."""

    def __init__(self, ship: ShipSettings, sources: SourceBuilder, stats: Stats) -> None:
        self.ship = ship
        self.sources = sources
        self.stats = stats
        self.files: dict[int, TailedFile] = {}
        self.at_path: dict[str, int] = {}  # path -> the file at it now
        self.checkpoint = Checkpoint()
        self.patterns = [GlobPattern.parse(p) for p in ship.paths]
        self.roots = resolved_roots(self.patterns)
        self.refused: dict[str, Refusal] = {}  # paths refused and still there: each is counted once
        self.next_id = 0
        self.dirty = False  # something the checkpoint keeps changed

    def entries(self) -> list[Entry]:
        return [f.entry() for f in self.files.values()]

    def _history(self) -> WriteHistory:
        return WriteHistory(self.ship.max_waiting_age_s / AGE_SAMPLES)

    def _track(self, path: str, fd: int | None, obs: Observation, fingerprint: Fingerprint, generation: int,
               offset: int, now: float, attached: bool, first_seen: float) -> TailedFile:
        history = self._history()
        history.seen(first_seen, obs.size)
        f = TailedFile(self.next_id, path, fd, obs, fingerprint, generation, offset, self.ship.max_line_bytes,
                       now, history)
        self.next_id += 1
        source, labels = self.sources.for_path(path)
        f.source, f.labels, f.key = source, labels, source_key(source)
        f.attached = attached
        self.files[f.id] = f
        if attached:
            self.at_path[path] = f.id
        self.checkpoint.generations[path] = max(self.checkpoint.generations.get(path, -1), generation)
        self.dirty = True
        return f

    def _refuse(self, path: str, why: Refusal, seen: dict[str, Refusal] | None = None) -> None:
        """Count and log a refused path once while it stays refused."""
        if self.refused.get(path) is not why:
            self.stats.refused[why.value] += 1
            log.warning("not reading %s: %s (only regular files inside %s are shipped; symlinks are never "
                        "followed)", path, _REFUSALS[why], ", ".join(self.roots))
        (self.refused if seen is None else seen)[path] = why

    def _open(self, path: str, seen: dict[str, Refusal] | None = None) -> tuple[int, Observation] | None:
        opened = open_confined(path, self.roots)
        if isinstance(opened, Refusal):
            self._refuse(path, opened, seen)
            return None
        return opened

    def _open_new(self, path: str, now: float, at_end: bool = False,
                  seen: dict[str, Refusal] | None = None) -> TailedFile | None:
        opened = self._open(path, seen)
        if opened is None:
            return None
        fd, obs = opened
        if any((f.dev, f.ino) == (obs.dev, obs.ino) for f in self.files.values()):
            os.close(fd)  # a tracked file renamed to a name the globs match: not a new file
            return None
        gen = self.checkpoint.next_generation(path)
        log.info("tailing %s (generation %d)", path, gen)
        first_seen = min(now, os.fstat(fd).st_mtime)  # its bytes were written by then: ages stay lower bounds
        return self._track(path, fd, obs, Fingerprint.of(obs.head), gen, obs.size if at_end else 0, now, True,
                           first_seen)

    def restore(self, checkpoint: Checkpoint, now: float, first_start: bool) -> None:
        """Find the checkpoint's files again (renamed, copied or gone) and the globs' new ones."""
        self.checkpoint = checkpoint
        found = discover(self.patterns, self.ship.exclude)
        for path, why in found.refused.items():
            self._refuse(path, why)
        paths = set(found.files)
        claimed: set[str] = set()
        for e in self.checkpoint.entries:
            where = None
            obs = observe_path(e.path, self.roots) if e.path not in claimed else None
            if obs and (obs.dev, obs.ino) == (e.dev, e.ino):
                change = classify(e.dev, e.ino, e.fingerprint, e.offset, obs)
                if change in (Change.SAME, Change.GREW):
                    where = e.path
                else:  # truncated while we were down: its tail is in the copy, if there is one
                    where = find_copy(directory_of(e.path), e.fingerprint, e.offset, e.ino, self.roots)
            else:
                where = find_in_directory(directory_of(e.path), e.dev, e.ino, e.fingerprint, self.roots)
            opened = self._open(where) if where else None
            if opened is None:
                self._lost_at_restart(e)
                continue
            fd, obs = opened
            attached = where == e.path and where in paths
            if attached:
                claimed.add(e.path)
            self._track(e.path, fd, obs, e.fingerprint, e.generation, e.offset, now, attached,
                        min(now, os.fstat(fd).st_mtime))
        for path in sorted(paths - claimed):
            self._open_new(path, now, at_end=first_start and self.ship.start_at == "end")

    def _lost_at_restart(self, e: Entry) -> None:
        if 0 <= e.size <= e.offset:
            log.info("%s (inode %d) is gone; it had been shipped whole (%d bytes)", e.path, e.ino, e.offset)
            return
        lost = max(0, e.size - e.offset)
        self.stats.dropped_files["gone_before_shipped"] += 1
        self.stats.dropped_bytes["gone_before_shipped"] += lost
        log.warning("%s (inode %d) was deleted (or rotated out of reach) while the shipper was down; it was "
                    "shipped up to byte %d of %s: %s bytes lost. Keep rotated files until they are shipped "
                    "(sluice_ship_waiting_bytes)", e.path, e.ino, e.offset,
                    e.size if e.size >= 0 else "an unknown size", lost if e.size >= 0 else "an unknown number of")

    def scan(self, now: float) -> None:
        self.roots = resolved_roots(self.patterns)
        found = discover(self.patterns, self.ship.exclude)
        seen: dict[str, Refusal] = {}
        for path, why in found.refused.items():
            self._refuse(path, why, seen)
        for path in found.files:
            if path not in self.at_path:
                self._open_new(path, now, seen=seen)
        self.refused = seen  # a path no longer refused is counted again if it is refused again

    def check_paths(self, now: float) -> None:
        for fid in list(self.at_path.values()):
            f = self.files[fid]
            try:
                st = os.lstat(f.path)
            except OSError:
                self._detach(f)  # deleted, or renamed with nothing created yet: drain it
                continue
            if not stat.S_ISREG(st.st_mode):
                self._detach(f)  # replaced by a symlink or a FIFO: drained; the next scan refuses the newcomer
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
                self._truncated(f, now)  # with the size seen before: what was never read is counted
                continue
            f.extend_fingerprint(obs.head)
            f.size_seen = st.st_size
            f.history.seen(now, st.st_size)
            self.dirty = True  # the checkpoint keeps sizes: what a file lost while we are down is known

    def _detach(self, f: TailedFile) -> None:
        f.attached = False
        if self.at_path.get(f.path) == f.id:
            del self.at_path[f.path]

    def _truncated(self, f: TailedFile, now: float) -> None:
        """copytruncate: the old content continues in the copy; the path starts a new generation."""
        self.stats.truncations += 1
        copy = find_copy(directory_of(f.path), f.fingerprint, f.read_pos, f.ino, self.roots)
        opened = self._open(copy) if copy else None
        self._detach(f)
        if opened:
            log.info("%s truncated (copytruncate); reading its tail from %s", f.path, copy)
            f.move_to(opened[0], opened[1])
        else:
            lost = max(0, f.size_seen - f.read_pos)
            self.stats.dropped_files["truncated_before_shipped"] += 1
            self.stats.dropped_bytes["truncated_before_shipped"] += lost
            log.warning("%s truncated and no copy found: %d bytes written after offset %d before the truncation "
                        "are lost", f.path, lost, f.read_pos)
            f.close()
        f.at_eof = False
        self._open_new(f.path, now)

    def retire(self, now: float, pending_streams: Callable[[], set[int]]) -> None:
        """Close and forget detached files that are read, acknowledged and idle."""
        pending = None
        for f in list(self.files.values()):
            if f.attached or f.read_pos != f.acks.offset or f.acks.in_flight or f.splitter.partial:
                continue
            if f.fd is not None and not (f.at_eof and now - f.last_growth >= self.ship.rotate_wait_s):
                continue
            pending = pending_streams() if pending is None else pending
            if f.id in pending:
                continue
            f.close()
            del self.files[f.id]
            self.dirty = True


_REFUSALS = {
    Refusal.SYMLINK: "it is a symbolic link",
    Refusal.OUTSIDE_ROOTS: "it resolves outside the globs' directories (a symlinked directory on its way?)",
    Refusal.NOT_REGULAR: "it is not a regular file (a FIFO, socket or device)",
}
