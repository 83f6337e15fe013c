"""Files on disk: finding them by glob, observing them, reading them by descriptor (I/O)."""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from pathlib import Path

from streams.ship.acks import AckTracker
from streams.ship.checkpoint import Entry
from streams.ship.identity import FINGERPRINT_BYTES, Fingerprint, Observation, stream_offset
from streams.ship.lines import LineSplitter


def discover(patterns: list[str], exclude: list[str]) -> list[str]:
    """Regular files matching any glob (``**`` = any depth) and no exclude pattern, sorted."""
    found: set[str] = set()
    for pattern in patterns:
        for path in glob.iglob(pattern, recursive=True):  # noqa: PTH207 - absolute patterns with **
            if any(fnmatch.fnmatch(path, ex) for ex in exclude):
                continue
            try:
                if stat.S_ISREG(Path(path).stat().st_mode):
                    found.add(path)
            except OSError:
                continue  # vanished between the listing and the stat
    return sorted(found)


def observe_path(path: str) -> Observation | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return observe_fd(fd)
    finally:
        os.close(fd)


def observe_fd(fd: int, st: os.stat_result | None = None) -> Observation:
    st = st or os.fstat(fd)
    head = os.pread(fd, FINGERPRINT_BYTES, 0) if st.st_size else b""
    return Observation(st.st_dev, st.st_ino, st.st_size, head)


def find_in_directory(directory: str, dev: int, ino: int, fingerprint: Fingerprint) -> str | None:
    """Where a file we know by identity went (renamed by rotation within its directory)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return None
    for entry in entries:
        if entry.inode() == ino and entry.is_file(follow_symlinks=False):
            obs = observe_path(entry.path)
            if obs and (obs.dev, obs.ino) == (dev, ino) and fingerprint.matches(obs.head):
                return entry.path
    return None


def find_copy(directory: str, fingerprint: Fingerprint, min_size: int, not_ino: int) -> str | None:
    """The newest file that starts like ours and is at least as long: a copytruncate copy."""
    best: tuple[float, str] | None = None
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return None
    for entry in entries:
        try:
            if entry.inode() == not_ino or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat()
        except OSError:
            continue
        if st.st_size < min_size or (best and st.st_mtime <= best[0]):
            continue
        obs = observe_path(entry.path)
        if obs and obs.size >= min_size and fingerprint.length and fingerprint.matches(obs.head):
            best = (st.st_mtime, entry.path)
    return best[1] if best else None


class TailedFile:
    """One file being shipped: an open descriptor, its identity, and how far it is read and acknowledged.

    ``attached`` means the file is still the one at ``path``; a rotated-away, deleted or truncated-
    and-copied file is detached and drained to its end through its descriptor.
    """

    def __init__(self, sid: int, path: str, fd: int | None, obs: Observation, fingerprint: Fingerprint,
                 generation: int, offset: int, max_line_bytes: int, now: float) -> None:
        self.id = sid
        self.path = path
        self.fd = fd
        self.dev, self.ino = obs.dev, obs.ino
        self.fingerprint = fingerprint
        self.generation = generation
        self.base = stream_offset(generation, 0)
        self.read_pos = offset
        self.splitter = LineSplitter(offset, max_line_bytes)
        self.acks = AckTracker(offset)
        self.attached = True
        self.at_eof = False
        self.last_growth = now
        self.last_stat: tuple[int, int] = (obs.size, 0)
        self.partial_mark = -1
        self.partial_since = now
        self.paused_until = 0.0
        self.epoch = 0  # bumped when the file is re-read after a failed delivery
        self.inflight_bytes = 0
        self.key = b""
        self.source: dict[str, object] = {}
        self.labels: dict[str, str] = {}

    @staticmethod
    def open_fd(path: str) -> tuple[int, Observation] | None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        return fd, observe_fd(fd)

    def observe(self, st: os.stat_result | None = None) -> Observation:
        if self.fd is None:
            raise ValueError(f"{self.path} is closed")
        return observe_fd(self.fd, st)

    def read(self, max_bytes: int) -> bytes:
        if self.fd is None:
            return b""
        data = os.pread(self.fd, max_bytes, self.read_pos)
        self.read_pos += len(data)
        self.at_eof = len(data) < max_bytes
        return data

    def extend_fingerprint(self, head: bytes) -> None:
        if not self.fingerprint.complete() and len(head) > self.fingerprint.length:
            self.fingerprint = Fingerprint.of(head)

    def move_to(self, fd: int, obs: Observation) -> None:
        """Follow the content to another file (the copy made by copytruncate)."""
        self.close()
        self.fd = fd
        self.dev, self.ino = obs.dev, obs.ino

    def rewind(self) -> None:
        """Re-read from the acknowledged offset (a delivery failed)."""
        self.acks.reset()
        self.read_pos = self.acks.offset
        self.splitter.reset(self.acks.offset)
        self.epoch += 1
        self.inflight_bytes = 0
        self.at_eof = False

    def entry(self) -> Entry:
        return Entry(self.dev, self.ino, self.fingerprint.length, self.fingerprint.digest, self.path,
                     self.generation, self.acks.offset)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def directory_of(path: str) -> str:
    return str(Path(path).parent)
