"""Lines into batches, when to send them, and how to split one that does not fit (pure; the caller
passes the time).

The send schedule is staggered per node so that a cluster whose jobs all log at the same moment
(a checkpoint, a 9:00 start) does not send at the same moment::

    phase_ms = int.from_bytes(blake2b(node_name, digest_size=8), "big") mod window_ms
    a node sends at every wall-clock instant t (ms since the epoch) with
        t mod interval_ms == phase_ms mod interval_ms

Nodes' phases are spread uniformly over the window; since sends repeat every interval, the spread
between nodes is min(window, interval): with the defaults (both 90 s) a cluster's uploads spread
over 90 s. A window of 0 means no stagger: every node sends on the interval grid.
Full batches wait for the node's slot too, unless memory or the waiting bytes near their bounds
(``SendSchedule``): only then does bounded memory win over the spread.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from streams.ship.identity import GENERATION_SHIFT
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


class Due(enum.Enum):
    NOTHING = "nothing"
    FULL = "full"  # full batches only: memory or the waiting bytes near their bound
    ALL = "all"  # every pending batch: the node's slot, or memory at its cap


class SendSchedule:
    """When a node sends: at its slot every interval; full batches earlier only near the bounds."""

    def __init__(self, interval_ms: int, phase_ms: int, early_fraction: float) -> None:
        self.interval_ms = max(1, interval_ms)
        self.phase_ms = phase_ms
        self.early_fraction = early_fraction
        self.next_ms = 0

    def start(self, now_ms: int) -> None:
        self.next_ms = next_send_ms(now_ms, self.interval_ms, self.phase_ms)

    def due(self, now_ms: int, held: int, held_cap: int, waiting: int, waiting_cap: int) -> Due:
        if now_ms >= self.next_ms:
            self.next_ms = next_send_ms(now_ms, self.interval_ms, self.phase_ms)
            return Due.ALL
        if held >= held_cap:
            return Due.ALL  # reading has stopped: whatever is pending goes, or nothing moves until the slot
        if held >= self.early_fraction * held_cap or waiting >= self.early_fraction * waiting_cap:
            return Due.FULL
        return Due.NOTHING

    def wait_ms(self, now_ms: int) -> int:
        return max(0, self.next_ms - now_ms)


# A file_offset carries the byte offset in its low GENERATION_SHIFT bits: a line starting beyond
# them (a file over 1 TiB) is sent without one rather than with another generation's.
OFFSET_LIMIT = 1 << GENERATION_SHIFT


@dataclass(slots=True)
class Batch:
    stream: int  # the tailed file the lines come from
    base: int | None  # added to byte offsets to form file_offset (the file's generation, see identity)
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

    def add(self, stream: int, base: int | None, lines: list[Line], ts_ms: int) -> None:
        if not lines:
            return
        if base is None or lines[-1][1] > OFFSET_LIMIT:
            self._add_unbounded(stream, base, lines, ts_ms)
            return
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

    def _add_unbounded(self, stream: int, base: int | None, lines: Iterable[Line], ts_ms: int) -> None:
        """The rare path: lines whose offset does not fit a file_offset get none."""
        batch = self._open.get(stream)
        for start, end, text in lines:
            size = end - start + LINE_OVERHEAD_BYTES
            if batch is None or len(batch.records) >= self.max_lines or batch.nbytes + size > self.max_bytes:
                if batch is not None and batch.records:
                    self._full.append(batch)
                batch = Batch(stream, base, start=start)
                self._open[stream] = batch
            offset = base + start if base is not None and start < OFFSET_LIMIT else None
            batch.records.append({"line": text, "file_offset": offset, "ts": ts_ms})
            batch.end = end
            batch.nbytes += size
        if batch is not None and (len(batch.records) >= self.max_lines or batch.nbytes >= self.max_bytes):
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

    def drop(self, stream: int) -> list[Batch]:
        """Forget a stream's pending lines (its file is about to be re-read, or skipped); returns them."""
        dropped = [b for b in self._full if b.stream == stream]
        self._full = [b for b in self._full if b.stream != stream]
        open_batch = self._open.pop(stream, None)
        return dropped + ([open_batch] if open_batch is not None and open_batch.records else [])

    def pending_streams(self) -> set[int]:
        return {b.stream for b in self._full} | {s for s, b in self._open.items() if b.records}

    def pending_lines(self) -> int:
        return sum(len(b.records) for b in self._full) + sum(len(b.records) for b in self._open.values())


Record = dict[str, Any]


def split_to_fit(records: list[Record], fits: Callable[[list[Record]], bool]) -> list[tuple[list[Record], bool]]:
    """Records that do not fit one message, as consecutive parts in their order, each with whether it
    fits: a part that does not is a single record that fits in no message on its own (to be
    quarantined). Halving keeps the parts few: a batch too large by bytes splits in two or four, a
    batch with one bad line isolates it in about 2 log2(n) encodings."""
    out: list[tuple[list[Record], bool]] = []
    todo = [records]
    while todo:
        part = todo.pop()
        if not part:
            continue
        if fits(part):
            out.append((part, True))
        elif len(part) == 1:
            out.append((part, False))
        else:
            half = len(part) // 2
            todo += [part[half:], part[:half]]  # the first half is popped first: order is kept
    return out
