"""Reading partitions from a start offset to a fixed end, the way transactional topics need it.

The end is a high watermark taken before reading. Progress is measured by the consumer's own position,
not by the offset of the last record seen: a transaction's commit marker and aborted records take
offsets but are never returned as records (the events and state topics are written in transactions).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any


def read_to_end(consumer: Any, topic: str, bounds: Mapping[int, tuple[int, int]], timeout_s: float) -> list[Any]:
    """Every record of ``topic`` from ``low`` to ``high`` for each ``partition: (low, high)``.

    ``consumer`` is a confluent_kafka.Consumer (its isolation level decides what a record is). Raises
    TimeoutError, naming where each partition stopped, if the end is not reached in ``timeout_s``."""
    from confluent_kafka import TopicPartition

    ends = {p: high for p, (low, high) in bounds.items() if high > low}
    consumer.assign([TopicPartition(topic, p, bounds[p][0]) for p in ends])
    deadline = time.monotonic() + timeout_s

    def behind() -> dict[int, int]:
        where = consumer.position([TopicPartition(topic, p) for p in ends])
        return {tp.partition: tp.offset for tp in where if tp.offset < ends[tp.partition]}

    records: list[Any] = []
    while behind():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic}: not at the end {ends} after {timeout_s:.0f} s; stopped at {behind()}")
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            records.append(msg)
    return records
