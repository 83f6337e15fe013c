"""Which offsets may be committed: only those below the first record not yet acknowledged.

Records of one partition are acknowledged out of order (a retried item finishes after later
ones), so the commit point is the end of the contiguous acknowledged prefix, as in Kafka Connect's
offset tracker. Pure: no Kafka here.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class PartitionOffsets:
    """Offsets of one topic-partition: in flight (added, not acked) and the commit point."""

    committed: int | None = None  # next offset to read after a restart (Kafka's meaning)
    _pending: list[int] = field(default_factory=list)  # min-heap of offsets in flight
    _acked: set[int] = field(default_factory=set)
    _highest_added: int = -1

    def add(self, offset: int) -> None:
        if offset <= self._highest_added:
            return  # a re-delivered record after a seek: already tracked
        heapq.heappush(self._pending, offset)
        self._highest_added = offset

    def ack(self, offset: int) -> None:
        self._acked.add(offset)
        while self._pending and self._pending[0] in self._acked:
            done = heapq.heappop(self._pending)
            self._acked.discard(done)
            self.committed = done + 1

    def advance(self, position: int) -> None:
        """Nothing in flight and the consumer stands at ``position``: everything below it is done.

        Past the last record of a transaction sits its commit marker, which takes an offset but is never
        returned as a record; without this the group's committed offset would stop one short of the
        partition's end for ever (lag 1, and "drained" never true)."""
        if not self._pending and position > max(self._highest_added, -1) and position != self.committed:
            self.committed = position

    @property
    def in_flight(self) -> int:
        return len(self._pending)


class OffsetTracker:
    """Per (topic, partition) bookkeeping; ``commit_points`` is what the consumer may commit."""

    def __init__(self) -> None:
        self._parts: dict[tuple[str, int], PartitionOffsets] = {}
        self._reported: dict[tuple[str, int], int] = {}

    def add(self, topic: str, partition: int, offset: int) -> None:
        self._parts.setdefault((topic, partition), PartitionOffsets()).add(offset)

    def ack(self, topic: str, partition: int, offset: int) -> None:
        part = self._parts.get((topic, partition))
        if part is None:
            # Revoked (forgotten) while the store was writing it: the new owner re-reads and commits.
            return
        part.ack(offset)

    def advance(self, positions: Mapping[tuple[str, int], int]) -> None:
        """The consumer's positions (past transaction markers); see :meth:`PartitionOffsets.advance`."""
        for tp, position in positions.items():
            if position >= 0:
                self._parts.setdefault(tp, PartitionOffsets()).advance(position)

    def in_flight(self, topic: str, partition: int) -> int:
        part = self._parts.get((topic, partition))
        return part.in_flight if part else 0

    def in_flight_by_partition(self) -> dict[tuple[str, int], int]:
        return {tp: part.in_flight for tp, part in self._parts.items()}

    def total_in_flight(self) -> int:
        return sum(p.in_flight for p in self._parts.values())

    def commit_points(self) -> dict[tuple[str, int], int]:
        """New commit points since the last call (to avoid committing the same offset again)."""
        out = {}
        for tp, part in self._parts.items():
            if part.committed is not None and self._reported.get(tp) != part.committed:
                out[tp] = part.committed
                self._reported[tp] = part.committed
        return out

    def unreport(self, points: dict[tuple[str, int], int]) -> None:
        """The commit of ``points`` failed: report them again next time."""
        for tp in points:
            self._reported.pop(tp, None)

    def forget(self, topic: str, partition: int) -> None:
        """A partition was revoked: its in-flight records will be re-read by the new owner."""
        self._parts.pop((topic, partition), None)
        self._reported.pop((topic, partition), None)
