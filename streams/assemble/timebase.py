"""The time a block with no time of its own takes (a bare traceback, a ``terminate called`` dump).

Not the producer's clock: a log keeps one time base, so an incident does not split between the log's
own times and the shipping time. Not "the last event built from the source" either: a source may be
one stdout that several ranks write, and the merger closes a rank's block only when that rank's
block ends, so the events built just before it can come from lines written long after it began.

The block is placed after the nearest timed line before it, by position in the source (raw offset,
then line index in the record):

1. of the same writer, the block's stream prefix (``[rank3]:``, ``[default0]:``, a syslog tag).
   A writer's own lines are in order; the interleaving of writers is not (each process buffers its
   stdout), so its own last time is the surer bound;
2. else of the source: a rank whose first words are its traceback, and any unprefixed block (the
   unprefixed lines are no one writer: a rank's ``terminate called`` dump goes to stderr without
   the prefix its Python lines carry);
3. else none: the caller takes the agent's read time.

It takes that line's time plus the read time elapsed between the two (never less): read live, a
traceback printed ten minutes after its rank's last timed line is ten minutes later, and the
launcher's teardown after a rank's traceback comes after it; read from a backlog (one read time for
many lines) it is the line's time. A duration between two read times is the same on any clock, so
the time stays in the log's own time base, whatever zone or skew that has.

Pure, bounded (:data:`MAX_WRITERS` writers and :data:`MAX_RECENT` source times per source) and
JSON-able: the assemble worker saves it with the rest of a source's state.
"""

from __future__ import annotations

from bisect import insort
from typing import Any

from streams.assemble.times import MAX_MS

MAX_WRITERS = 256  # prefixes remembered per source: ranks of a node, processes of a syslog stream
# Source times kept by position: a block closes after the timed blocks that began after it and ended
# first (other ranks' lines); it needs the nearest one before its own start, so a few are kept.
MAX_RECENT = 8

Pos = tuple[int, int]  # (raw offset, index of the line in its record)
Timed = tuple[Pos, int, int]  # (position, the line's own time, its read time; 0: none)


class SourceTimes:
    """The timed lines of one source: the last one per writer and the most recent few overall."""

    __slots__ = ("recent", "writers")

    def __init__(self) -> None:
        self.writers: dict[str, Timed] = {}
        self.recent: list[Timed] = []  # sorted by position

    def note(self, prefix: str, pos: Pos, ts: int, read: int) -> None:
        """A timed block of ``prefix`` that starts at ``pos``, read at ``read``."""
        entry = (pos, ts, read)
        if prefix:
            writers = self.writers
            if prefix in writers:
                del writers[prefix]  # re-inserted last: the least recently timed writer goes first
            elif len(writers) >= MAX_WRITERS:
                del writers[next(iter(writers))]
            writers[prefix] = entry
        recent = self.recent
        if not recent or recent[-1][0] < pos:
            recent.append(entry)
        else:
            insort(recent, entry)
        if len(recent) > MAX_RECENT:
            del recent[0]

    def before(self, prefix: str, pos: Pos, read: int) -> int | None:
        """The time an untimed block of ``prefix`` starting at ``pos``, read at ``read``, takes; None
        when no timed line precedes it."""
        anchor = self.writers.get(prefix) if prefix else None
        if anchor is None or not anchor[0] < pos:
            anchor = next((e for e in reversed(self.recent) if e[0] < pos), None)
            if anchor is None:
                return None
        _, ts, at = anchor
        return min(ts + read - at, MAX_MS) if read > at > 0 else ts

    def latest(self) -> int | None:
        """The time of the timed line furthest into the source."""
        return self.recent[-1][1] if self.recent else None

    def to_dict(self) -> dict[str, Any]:
        return {"w": {k: [*p, ts, at] for k, (p, ts, at) in self.writers.items()},
                "r": [[*p, ts, at] for p, ts, at in self.recent]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SourceTimes:
        out = cls()
        out.writers = {k: ((o, i), ts, at) for k, (o, i, ts, at) in d.get("w", {}).items()}
        out.recent = sorted(((o, i), ts, at) for o, i, ts, at in d.get("r", []))[-MAX_RECENT:]
        return out

    @classmethod
    def carried(cls, ts: int) -> SourceTimes:
        """A state that only knows its source's last time (as written before writers were kept): that
        time precedes every block still to come."""
        out = cls()
        out.recent = [((-1, -1), ts, 0)]
        return out
