"""The real KRaft broker: records round-trip in order per key; topic configs are what we asked for."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer

from streams.config import Settings
from streams.topics import create_topics, describe_topics, topic_specs


def _consume(settings: Settings, topic: str, count: int, timeout_s: float = 20.0) -> list[tuple[bytes, bytes, int]]:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"t-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out: list[tuple[bytes, bytes, int]] = []
    import time

    deadline = time.monotonic() + timeout_s
    try:
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            out.append((msg.key(), msg.value(), msg.partition()))
    finally:
        consumer.close()
    return out


def test_records_roundtrip_in_key_order(stack: Settings, new_topic) -> None:
    topic = new_topic("kafka-rt", partitions=3)
    producer = Producer({**stack.kafka.client_config(), "enable.idempotence": True})
    for i in range(300):
        producer.produce(topic, key=f"source-{i % 5}".encode(), value=str(i).encode())
    assert producer.flush(20) == 0
    got = _consume(stack, topic, 300)
    assert len(got) == 300
    by_key: dict[bytes, list[int]] = {}
    partition_of: dict[bytes, set[int]] = {}
    for key, value, partition in got:
        by_key.setdefault(key, []).append(int(value))
        partition_of.setdefault(key, set()).add(partition)
    # One source, one partition, in order: what the multiline merger relies on.
    assert all(len(p) == 1 for p in partition_of.values())
    assert all(v == sorted(v) for v in by_key.values())


def test_topics_create_sets_retention_and_compaction(stack: Settings) -> None:
    create_topics(stack)
    again = create_topics(stack)
    assert again == [], "a second `topics create` must be a no-op"
    specs = {s.name: s for s in topic_specs(stack)}
    described = describe_topics(stack, list(specs))
    raw = described[stack.topics.raw]
    assert raw["retention.ms"] == str(7 * 24 * 3600 * 1000)
    assert raw["partitions"] == str(stack.topics.raw_partitions)
    assert described[stack.topics.alerts]["cleanup.policy"] == "compact,delete"
    for project in stack.projects():
        assert stack.topics.events_topic(project) in described
