"""Lines into batches, and when to send them (pure; the caller passes the time).

The send schedule is staggered per node so that a cluster whose jobs all log at the same moment
(a checkpoint, a 9:00 start) does not send at the same moment::

    phase_ms = int.from_bytes(blake2b(node_name, digest_size=8), "big") mod window_ms
    a node sends at every wall-clock instant t (ms since the epoch) with
        t mod interval_ms == phase_ms mod interval_ms

Nodes' phases are spread uniformly over the window; since sends repeat every interval, the
spread between nodes is min(window, interval): with the defaults (interval 30 s, window 90 s, a
multiple of it) every node's phase is uniform over the 30 s. Set the interval to 90 s to spread
sends over 90 s. A window of 0 means no stagger: every node sends on the interval grid.
A batch that is full (max lines or bytes) is sent at once, off schedule: bounded memory wins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from streams.ship.lines import Line

# Avro per line on top of the text: string length, file offset and ts (varints) and a union index.
LINE_OVERHEAD_BYTES = 16


def stagger_phase_ms(node_name: str, window_ms: int) -> int:
    if window_ms <= 0:
        return 0
    digest = hashlib.blake2b(node_name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % window_ms


def next_send_ms(now_ms: int, interval_ms: int, phase_ms: int) -> int:
    """The first scheduled instant strictly after ``now_ms``."""
    return now_ms + (phase_ms - now_ms - 1) % interval_ms + 1


@dataclass(slots=True)
class Batch:
    stream: int  # the tailed file the lines come from
    base: int  # added to byte offsets to form file_offset (the file's generation, see identity)
    records: list[dict[str, Any]] = field(default_factory=list)
    start: int = -1  # byte offset of the first line
    end: int = -1  # byte offset just past the last line
    nbytes: int = 0  # encoded size estimate (text bytes + per-line overhead)


class Batcher:
    """Lines of each stream into batches of at most ``max_lines`` lines and ``max_bytes`` bytes."""

    def __init__(self, max_lines: int, max_bytes: int) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._open: dict[int, Batch] = {}
        self._full: list[Batch] = []

    def add(self, stream: int, base: int, lines: Iterable[Line], ts_ms: int) -> None:
        batch = self._open.get(stream)
        max_lines, max_bytes = self.max_lines, self.max_bytes
        for start, end, text in lines:
            size = end - start + LINE_OVERHEAD_BYTES
            if batch is None or len(batch.records) >= max_lines or batch.nbytes + size > max_bytes:
                if batch is not None and batch.records:
                    self._full.append(batch)
                batch = Batch(stream, base, start=start)
                self._open[stream] = batch
            batch.records.append({"line": text, "file_offset": base + start, "ts": ts_ms})
            batch.end = end
            batch.nbytes += size
        if batch is not None and (len(batch.records) >= max_lines or batch.nbytes >= max_bytes):
            self._full.append(batch)
            del self._open[stream]

    def take_full(self) -> list[Batch]:
        """Batches that are full: they go now, whatever the schedule."""
        out, self._full = self._full, []
        return out

    def take_all(self) -> list[Batch]:
        """Everything pending (the scheduled send): full batches first, in the order they filled."""
        out = self._full + [b for b in self._open.values() if b.records]
        self._full, self._open = [], {}
        return out

    def put_back(self, batches: list[Batch]) -> None:
        """Batches that could not be handed to the producer; they go first next time."""
        self._full = batches + self._full

    def drop(self, stream: int) -> None:
        """Forget a stream's pending lines (its file is about to be re-read from the acknowledged offset)."""
        self._open.pop(stream, None)
        self._full = [b for b in self._full if b.stream != stream]

    def pending_streams(self) -> set[int]:
        return {b.stream for b in self._full} | {s for s, b in self._open.items() if b.records}
