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


def has_record(consumer: Any, topic: str, partition: int, start: int, end: int, timeout_s: float) -> bool:
    """Is there a record in ``[start, end)`` of one partition, as ``consumer``'s isolation level sees
    records? A transaction's markers (and, read_committed, aborted records) take offsets but are not
    records, so a reader whose next offset is below the high watermark may still have read everything.
    Stops at the first record found. Raises TimeoutError if neither answer comes in ``timeout_s``."""
    from confluent_kafka import TopicPartition

    consumer.assign([TopicPartition(topic, partition, start)])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            return bool(msg.offset() < end)
        (where,) = consumer.position([TopicPartition(topic, partition)])
        if where.offset >= end:
            return False
    raise TimeoutError(f"{topic} [{partition}]: no answer between offsets {start} and {end} in {timeout_s:.0f} s")
