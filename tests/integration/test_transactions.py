"""The assemble stage's transactional writer against the real broker, with a real group member.

An aiokafka consumer (what Faust runs) joins a group; the writer commits messages and that group's
offsets in one transaction with the member's generation, and a turn with a stale generation is
rolled back whole: read_committed readers see none of its messages and the offsets do not move.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from streams.config import Settings
from streams.kafka_read import read_to_end
from streams.workers.transactions import TransactionAborted, TransactionalWriter, group_metadata


def _committed_values(settings: Settings, topic: str) -> list[bytes]:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"{topic}-reader",
                         "isolation.level": "read_committed"})
    try:
        bounds = {0: consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)}
        return [msg.value() or b"" for msg in read_to_end(consumer, topic, bounds, 20.0)]
    finally:
        consumer.close()


@pytest.mark.timeout(120)
def test_outputs_and_offsets_commit_together_and_a_stale_generation_rolls_back(
        stack: Settings, new_topic: Callable[..., str], unique_name: Callable[[str], str]) -> None:
    from aiokafka import AIOKafkaConsumer

    source, out = new_topic("txn-in"), new_topic("txn-out")
    group = unique_name("txn-group")
    producer = Producer(stack.kafka.client_config())
    for i in range(5):
        producer.produce(source, f"in-{i}".encode())
    assert producer.flush(10) == 0
    writer = TransactionalWriter(stack.kafka.client_config(), unique_name("txn-id"), 10_000)

    async def scenario() -> tuple[int, str]:
        consumer = AIOKafkaConsumer(source, bootstrap_servers=stack.kafka.bootstrap_servers, group_id=group,
                                    enable_auto_commit=False, auto_offset_reset="earliest")
        await consumer.start()
        try:
            await consumer.getmany(timeout_ms=5000)
            coordinator = consumer._coordinator
            gen, member = int(coordinator.generation), str(coordinator.member_id)
            assert gen > 0 and member
            await asyncio.to_thread(writer.write, [(out, b"k", b"turn-1", -1)], {(source, 0): 3},
                                    group_metadata(group, gen, member))
            with pytest.raises(TransactionAborted):
                await asyncio.to_thread(writer.write, [(out, b"k", b"stale", -1)], {(source, 0): 5},
                                        group_metadata(group, gen + 1, member))
            await asyncio.to_thread(writer.write, [(out, b"k", b"turn-2", -1)], {}, None)  # usable again
            return gen, member
        finally:
            await consumer.stop()

    asyncio.run(scenario())
    assert _committed_values(stack, out) == [b"turn-1", b"turn-2"]
    reader = Consumer({**stack.kafka.client_config(), "group.id": group})
    try:
        assert reader.committed([TopicPartition(source, 0)], timeout=10)[0].offset == 3
    finally:
        reader.close()
