"""A sink's partition that was paused (records in flight over the high watermark) when a rebalance took it
away is read again when the group gives it back, on the real Kafka: librdkafka keeps the pause through
the revocation, while the runner forgets it then. The fault suite's hot sink once stopped reading two
partitions for good after a broker restart this way (its session timed out while they were paused)."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, Producer

from streams.config import Settings
from streams.sinks.kafka_io import KafkaRecordSource, sink_consumer_config


def _produce(settings: Settings, topic: str, tag: str, per_partition: int = 5) -> None:
    producer = Producer(settings.kafka.client_config())
    for partition in (0, 1):
        for n in range(per_partition):
            producer.produce(topic, value=f"{tag}-{partition}-{n}".encode(), partition=partition)
    producer.flush(10)


def _poll_until(source: KafkaRecordSource, done, timeout_s: float, other: Consumer | None = None) -> list:
    got = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not done(got):
        got += source.poll_batch(100, 0.2)
        if other is not None:
            other.poll(0.1)
    return got


def test_a_partition_paused_when_revoked_is_read_again_once_reassigned(stack: Settings, new_topic) -> None:
    topic = new_topic("pause-rebalance", partitions=2)
    group = f"pause-rebalance-{uuid.uuid4().hex[:8]}"
    _produce(stack, topic, "first")
    source = KafkaRecordSource(stack, [topic], group, stage="test")
    try:
        first = _poll_until(source, lambda got: len(got) >= 10, 60)
        assert {r.partition for r in first} == {0, 1}
        source.pause([(topic, 0), (topic, 1)])  # as the runner does at the high watermark

        # A second member joins: cooperative-sticky moves one partition to it; then it leaves, and the
        # partition comes back to the first member.
        other = Consumer(sink_consumer_config(stack, group))
        other.subscribe([topic])
        moved: list[tuple[str, int]] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not moved:
            source.poll_batch(100, 0.2)
            other.poll(0.2)
            moved = source.take_revoked()
        assert len(moved) == 1, "the second member never got a partition"
        (_, partition) = moved[0]
        other.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(source.consumer.assignment()) < 2:
            source.poll_batch(100, 0.2)
        assert len(source.consumer.assignment()) == 2, "the partition never came back"

        _produce(stack, topic, "second")
        got = _poll_until(source, lambda got: any(r.partition == partition for r in got), 30)
        again = [r.raw for r in got if r.partition == partition]
        assert again, f"partition {partition} came back paused and was never read again"
        # the partition that stayed assigned stays paused: the runner still holds it back
        assert not [r for r in got if r.partition != partition]
    finally:
        source.close()
