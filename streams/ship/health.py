"""What the shipper's ``/healthz`` and ``/readyz`` answer (pure; the clock is passed in).

Alive: the loop has turned recently; a stuck loop is the one thing a restart fixes. Ready: Kafka
acknowledges and the checkpoint can be written. A checkpoint that cannot be written (a full disk)
is reported on both endpoints and counted, but the shipper keeps shipping and retrying: a restart
would not free the disk, and the offsets it could not write only mean re-sending (same ids) after
a crash.
"""

from __future__ import annotations

from collections.abc import Callable


class ShipHealth:
    def __init__(self, clock: Callable[[], float], stuck_after_s: float = 60.0) -> None:
        self.clock = clock
        self.stuck_after_s = stuck_after_s
        self.last_turn = clock()
        self.checkpoint_problem: str | None = None
        self.checkpoint_failing_since = 0.0
        self.kafka_problem: str | None = None
        self.kafka_failing_since = 0.0

    def turned(self) -> None:
        self.last_turn = self.clock()

    def checkpoint(self, problem: str | None) -> None:
        if problem is not None and self.checkpoint_problem is None:
            self.checkpoint_failing_since = self.clock()
        self.checkpoint_problem = problem

    def kafka(self, problem: str | None) -> None:
        if problem is not None and self.kafka_problem is None:
            self.kafka_failing_since = self.clock()
        self.kafka_problem = problem

    def problems(self) -> list[str]:
        now = self.clock()
        out = []
        if self.checkpoint_problem is not None:
            out.append(f"checkpoint not written for {now - self.checkpoint_failing_since:.0f} s "
                       f"(still shipping, retrying): {self.checkpoint_problem}")
        if self.kafka_problem is not None:
            out.append(f"Kafka not acknowledging for {now - self.kafka_failing_since:.0f} s: {self.kafka_problem}")
        return out

    def liveness(self) -> tuple[bool, str]:
        idle = self.clock() - self.last_turn
        if idle > self.stuck_after_s:
            return False, f"shipping loop stuck: no turn for {idle:.0f} s"
        problems = self.problems()
        return True, "ok" + "".join(f"; {p}" for p in problems)

    def readiness(self) -> tuple[bool, str]:
        problems = self.problems()
        return not problems, "; ".join(problems) or "ready"
