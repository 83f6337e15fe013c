"""Which offset of a file Kafka has acknowledged (pure).

Batches of one file are sent in order and may be acknowledged in any order; the acknowledged offset
only moves over a contiguous run of acknowledged batches (the Kafka Connect offset-tracker rule).
"""

from __future__ import annotations

from collections import deque


class AckTracker:
    def __init__(self, offset: int) -> None:
        self.offset = offset  # every byte before this one is in Kafka
        self._order: deque[int] = deque()
        self._ends: dict[int, int] = {}
        self._done: set[int] = set()
        self._next_token = 0

    def sent(self, end: int) -> int:
        """Record a batch ending at ``end``; returns the token its delivery report will name."""
        token = self._next_token
        self._next_token += 1
        self._order.append(token)
        self._ends[token] = end
        return token

    def cancel_last(self, token: int) -> None:
        """Take back the batch just recorded: it never reached the producer and goes again later."""
        if self._order and self._order[-1] == token:
            self._order.pop()
            self._ends.pop(token, None)

    def acked(self, token: int) -> bool:
        """A batch was acknowledged; returns whether the acknowledged offset moved."""
        if token not in self._ends:
            return False  # from before a reset: its range is being sent again
        self._done.add(token)
        moved = False
        while self._order and self._order[0] in self._done:
            head = self._order.popleft()
            self._done.discard(head)
            self.offset = self._ends.pop(head)
            moved = True
        return moved

    def reset(self) -> None:
        """Forget every batch in flight (after a failed delivery the file is re-read from ``offset``)."""
        self._order.clear()
        self._ends.clear()
        self._done.clear()

    @property
    def in_flight(self) -> int:
        return len(self._order)
