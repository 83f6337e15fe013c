"""What a node keeps waiting for Kafka, and what to drop when it keeps too much (pure).

Waiting = the bytes of the tailed files that Kafka has not acknowledged, read or not. Two bounds,
like Fluent Bit's ``storage.total_limit_size``: bytes (over all files) and age (of each byte since
it was first seen). Past them the oldest bytes are dropped, rotated-away files first: the
shipper's open descriptors are what keeps a deleted rotated file on disk, and the live file is
still being written.

Ages come from a few (time, size) samples per file (``WriteHistory``): the bytes between two
samples' sizes were first seen by the later sample's time, so an age read from the samples is a
lower bound (never more than one sample spacing low) and nothing younger than the bound is
dropped for age.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


class WriteHistory:
    """When a file's bytes were first seen: (time, size) samples at least ``spacing_s`` apart."""

    def __init__(self, spacing_s: float) -> None:
        self.spacing_s = spacing_s
        self.samples: deque[tuple[float, int]] = deque()

    def seen(self, t: float, size: int) -> None:
        if self.samples:
            last_t, last_size = self.samples[-1]
            if size <= last_size or t - last_t < self.spacing_s:
                return  # nothing new, or too soon: the next sample covers these bytes (age stays a lower bound)
        self.samples.append((t, size))

    def first_seen(self, offset: int) -> float | None:
        """When the byte at ``offset`` was first seen; None when no sample covers it yet."""
        for t, size in self.samples:
            if size > offset:
                return t
        return None

    def seen_by(self, t: float) -> int:
        """An offset below which every byte had been seen by time ``t``."""
        out = 0
        for when, size in self.samples:
            if when > t:
                break
            out = size
        return out

    def forget_below(self, offset: int) -> None:
        """Samples wholly below an acknowledged offset no longer date anything."""
        while len(self.samples) > 1 and self.samples[0][1] <= offset:
            self.samples.popleft()


@dataclass(frozen=True, slots=True)
class Waiting:
    """One file's waiting bytes: [acked, size)."""

    stream: int
    acked: int
    size: int
    first_seen: float  # when the byte at `acked` was first seen
    aged_out: int  # bytes below this offset are older than the age bound (<= acked: none are)
    detached: bool  # rotated away, deleted or truncated-and-copied: only the shipper still reads it

    @property
    def nbytes(self) -> int:
        return max(0, self.size - self.acked)


@dataclass(frozen=True, slots=True)
class Drop:
    stream: int
    start: int
    end: int
    reason: str  # "waiting_age" or "waiting_bytes"


def plan_drops(files: list[Waiting], max_bytes: int) -> list[Drop]:
    """The byte ranges to give up so that no waiting byte is older than the age bound and at most
    ``max_bytes`` wait: aged-out bytes first, then the oldest of the rest, rotated files first."""
    drops: list[Drop] = []
    start: dict[int, int] = {}
    for w in files:
        begin = w.acked
        if w.aged_out > begin:
            end = min(w.aged_out, w.size)
            if end > begin:
                drops.append(Drop(w.stream, begin, end, "waiting_age"))
                begin = end
        start[w.stream] = begin
    excess = sum(max(0, w.size - start[w.stream]) for w in files) - max_bytes
    for w in sorted(files, key=lambda w: (not w.detached, w.first_seen, w.stream)):
        if excess <= 0:
            break
        begin = start[w.stream]
        end = min(w.size, begin + excess)
        if end > begin:
            drops.append(Drop(w.stream, begin, end, "waiting_bytes"))
            excess -= end - begin
    return drops
