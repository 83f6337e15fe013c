"""Kafka records as fixture files: what a node agent put on a topic, byte for byte.

One record per line of ``records.jsonl``: ``partition``, ``offset``, ``key`` and ``value``. A key
or value that is valid UTF-8 is kept as text (readable in a diff); anything else (OTLP protobuf,
say) is kept as base64 under ``key_b64`` / ``value_b64``. ``None`` stays ``null``.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Recorded:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int = 0


def _put(row: dict, name: str, data: bytes | None) -> None:
    if data is None:
        row[name] = None
        return
    try:
        row[name] = data.decode("utf-8")
    except UnicodeDecodeError:
        row[name + "_b64"] = base64.b64encode(data).decode("ascii")


def _get(row: dict, name: str) -> bytes | None:
    if name + "_b64" in row:
        return base64.b64decode(row[name + "_b64"])
    text = row.get(name)
    return None if text is None else text.encode("utf-8")


def dump(records: Iterable[Recorded], path: Path) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for r in records:
            row: dict = {"partition": r.partition, "offset": r.offset}
            _put(row, "key", r.key)
            _put(row, "value", r.value)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def load(path: Path) -> list[Recorded]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Recorded(row["partition"], row["offset"], _get(row, "key"), _get(row, "value")))
    return out


def read_topic(brokers: str, topic: str, *, quiet_s: float = 5.0, timeout_s: float = 120.0,
               at_least: int = 1) -> Iterator[Recorded]:
    """Every record of ``topic`` from the start, until none has come for ``quiet_s`` (after ``at_least``)."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": brokers, "group.id": f"agent-recorder-{time.time_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = 0
    start = last = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout_s or (seen >= at_least and now - last > quiet_s):
                return
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            seen += 1
            last = time.monotonic()
            yield Recorded(msg.partition() or 0, msg.offset() or 0, msg.key(), msg.value(), msg.timestamp()[1])
    finally:
        consumer.close()
