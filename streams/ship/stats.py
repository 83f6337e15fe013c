"""What the shipper has done, counted where it happens and read by ``/metrics`` (pure)."""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field

# Produce-to-acknowledgement seconds: a healthy broker answers in milliseconds; an outage holds a
# record until message_timeout_ms.
ACK_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class Histogram:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)  # per bucket, not cumulative; last = over the top
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.buckets) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, int]]:
        """(upper bound, observations at or below it), Prometheus style, ending with +Inf."""
        out, running = [], 0
        for bound, n in zip((*map(str, self.buckets), "+Inf"), self.counts, strict=True):
            running += n
            out.append((bound, running))
        return out


@dataclass
class Stats:
    lines_read: int = 0
    bytes_read: int = 0
    lines_sent: int = 0  # acknowledged by Kafka
    bytes_sent: int = 0  # file bytes whose lines Kafka acknowledged
    batches_sent: int = 0
    batches_acked: int = 0
    delivery_failures: int = 0
    rotations: int = 0
    truncations: int = 0
    max_held_bytes: int = 0
    checkpoints_written: int = 0
    checkpoint_failures: int = 0
    batches_split: int = 0  # did not fit one message (size or contract): sent in parts
    lines_quarantined: int = 0  # fit in no message as they were: sent escaped (and cut), flagged
    refused: Counter[str] = field(default_factory=Counter)  # paths not read, by reason, each counted once
    dropped_bytes: Counter[str] = field(default_factory=Counter)  # by reason
    dropped_files: Counter[str] = field(default_factory=Counter)  # whole files given up, by reason
    dropped_lines: Counter[str] = field(default_factory=Counter)  # lines read and then given up, by reason
    ack_latency: Histogram = field(default_factory=lambda: Histogram(ACK_LATENCY_BUCKETS))
