"""Files on disk: finding them by glob, opening them safely, reading them by descriptor (I/O).

Nothing here follows a symlink: the globs are matched while walking without following links, files
are opened with ``O_NOFOLLOW`` (and ``O_NONBLOCK``, so a FIFO cannot block the loop), and the file
actually opened must be a regular file that resolves inside the globs' roots (``paths.inside``).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from streams.ship.acks import AckTracker
from streams.ship.backlog import WriteHistory
from streams.ship.checkpoint import Entry
from streams.ship.identity import FINGERPRINT_BYTES, Fingerprint, Observation, generation_base
from streams.ship.lines import LineSplitter
from streams.ship.paths import GlobPattern, Refusal, inside
from streams.widetext import marked_codec

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)  # regular files the globs match, sorted
    refused: dict[str, Refusal] = field(default_factory=dict)  # matched (or walked) paths not read, and why


def resolved_roots(patterns: list[GlobPattern]) -> tuple[str, ...]:
    """The globs' roots with their own symlinks resolved (an operator may mount the logs anywhere)."""
    return tuple(sorted({os.path.realpath(p.root) for p in patterns}))


def discover(patterns: list[GlobPattern], exclude: list[str]) -> Discovery:
    """Walk each glob's root without following symlinks; regular files that match and are not excluded."""
    found = Discovery()
    files: set[str] = set()
    for pattern in patterns:
        todo: list[tuple[str, tuple[str, ...]]] = [(pattern.root, ())]
        while todo:
            directory, rel = todo.pop()
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except OSError:
                continue  # gone, or not a directory, or not ours to read
            for entry in entries:
                try:
                    _look(entry, (*rel, entry.name), pattern, exclude, todo, files, found.refused)
                except OSError:
                    continue  # vanished between the listing and the look
    found.files = sorted(files)
    return found


def _look(entry: os.DirEntry[str], rel: tuple[str, ...], pattern: GlobPattern, exclude: list[str],
          todo: list[tuple[str, tuple[str, ...]]], files: set[str], refused: dict[str, Refusal]) -> None:
    wanted, deeper = pattern.matches(rel), pattern.may_contain(rel)
    if not (wanted or deeper):
        return
    if entry.is_dir(follow_symlinks=False):
        if deeper:
            todo.append((entry.path, rel))
        return
    if any(fnmatch.fnmatch(entry.path, ex) for ex in exclude):
        return
    if entry.is_symlink():
        refused[entry.path] = Refusal.SYMLINK  # to a file, or to a directory the walk would enter
    elif wanted and entry.is_file(follow_symlinks=False):
        files.add(entry.path)
    elif wanted:
        refused[entry.path] = Refusal.NOT_REGULAR


def _opened_path(fd: int, path: str, st: os.stat_result) -> str | None:
    """Where the file behind ``fd`` really is (symlinks in its directories resolved), or None."""
    try:
        target = str(Path(f"/proc/self/fd/{fd}").readlink())
        if target.startswith("/"):
            return target.removesuffix(" (deleted)")
    except OSError:
        pass  # no /proc (not Linux): resolve the name, and make sure it still names what we opened
    real = os.path.realpath(path)
    try:
        now = Path(real).stat(follow_symlinks=False)
    except OSError:
        return None
    return real if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) else None


def open_confined(path: str, roots: tuple[str, ...]) -> tuple[int, Observation] | Refusal | None:
    """Open a file to tail: its descriptor and first look, a refusal, or None when it is not there."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return Refusal.SYMLINK if exc.errno == errno.ELOOP else None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            refusal = Refusal.NOT_REGULAR
        else:
            where = _opened_path(fd, path, st)
            if where is not None and inside(where, roots):
                return fd, observe_fd(fd, st)
            refusal = Refusal.OUTSIDE_ROOTS
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    return refusal


def observe_path(path: str, roots: tuple[str, ...]) -> Observation | None:
    opened = open_confined(path, roots)
    if not isinstance(opened, tuple):
        return None
    fd, obs = opened
    os.close(fd)
    return obs


def observe_fd(fd: int, st: os.stat_result | None = None) -> Observation:
    st = st or os.fstat(fd)
    head = os.pread(fd, FINGERPRINT_BYTES, 0) if st.st_size else b""
    return Observation(st.st_dev, st.st_ino, st.st_size, head)


def find_in_directory(directory: str, dev: int, ino: int, fingerprint: Fingerprint,
                      roots: tuple[str, ...]) -> str | None:
    """Where a file we know by identity went (renamed by rotation within its directory)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return None
    for entry in entries:
        if entry.inode() == ino and entry.is_file(follow_symlinks=False):
            obs = observe_path(entry.path, roots)
            if obs and (obs.dev, obs.ino) == (dev, ino) and fingerprint.matches(obs.head):
                return entry.path
    return None


def find_copy(directory: str, fingerprint: Fingerprint, min_size: int, not_ino: int,
              roots: tuple[str, ...]) -> str | None:
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
        obs = observe_path(entry.path, roots)
        if obs and obs.size >= min_size and fingerprint.length and fingerprint.matches(obs.head):
            best = (st.st_mtime, entry.path)
    return best[1] if best else None


class TailedFile:
    """One file being shipped: an open descriptor, its identity, and how far it is read and acknowledged.

    ``attached`` means the file is still the one at ``path``; a rotated-away, deleted or truncated-
    and-copied file is detached and drained to its end through its descriptor.
    """

    def __init__(self, sid: int, path: str, fd: int | None, obs: Observation, fingerprint: Fingerprint,
                 generation: int, offset: int, max_line_bytes: int, now: float, history: WriteHistory) -> None:
        self.id = sid
        self.path = path
        self.fd = fd
        self.dev, self.ino = obs.dev, obs.ino
        self.fingerprint = fingerprint
        self.generation = generation
        self.base = generation_base(generation)
        self.read_pos = offset
        self.splitter = LineSplitter(offset, max_line_bytes, marked_codec(obs.head))
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
        self.size_seen = obs.size  # the file's size when last looked at
        self.history = history  # when its bytes were first seen (the waiting bound's ages)
        self.key = b""
        self.source: dict[str, object] = {}
        self.labels: dict[str, str] = {}

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

    def line_start_at_or_after(self, offset: int, limit: int) -> int:
        """The first line start at or after ``offset``, looking at most ``limit`` bytes ahead (a longer
        line is cut there, as the splitter cuts it)."""
        if self.fd is None or offset == 0 or os.pread(self.fd, 1, offset - 1) == b"\n":
            return offset
        pos, end = offset, offset + limit
        while pos < end:
            chunk = os.pread(self.fd, min(64 * 1024, end - pos), pos)
            if not chunk:
                return pos  # the end of the file: a partial line, skipped with the rest
            newline = chunk.find(b"\n")
            if newline >= 0:
                return pos + newline + 1
            pos += len(chunk)
        return end

    def extend_fingerprint(self, head: bytes) -> None:
        if not self.fingerprint.complete() and len(head) > self.fingerprint.length:
            self.fingerprint = Fingerprint.of(head)

    def move_to(self, fd: int, obs: Observation) -> None:
        """Follow the content to another file (the copy made by copytruncate)."""
        self.close()
        self.fd = fd
        self.dev, self.ino = obs.dev, obs.ino

    def rewind(self, to: int | None = None) -> None:
        """Re-read from the acknowledged offset (a delivery failed), or skip ahead to ``to`` (a drop)."""
        self.acks.reset()
        if to is not None:
            self.acks.offset = to
        self.read_pos = self.acks.offset
        self.splitter.reset(self.acks.offset)
        self.epoch += 1
        self.inflight_bytes = 0
        self.at_eof = False

    def entry(self) -> Entry:
        return Entry(self.dev, self.ino, self.fingerprint.length, self.fingerprint.digest, self.path,
                     self.generation, self.acks.offset, max(self.size_seen, self.read_pos))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def directory_of(path: str) -> str:
    return str(Path(path).parent)
