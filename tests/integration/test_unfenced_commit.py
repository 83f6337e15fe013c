"""Why the assemble stage never commits a turn while its consumer is between generations: the real
broker takes a transactional offset commit that carries no generation (-1) and no member id, for a group
whose partition another member owns, without fencing it. A stale generation is fenced; "no generation"
is not (Kafka's ClassicGroup.validateOffsetCommit skips the member check for transactional commits).
aiokafka holds exactly (-1, "") from the moment its session expired until it has joined again, so a turn
committed then emits what the partition's new owner emits too (tests/unit/test_assemble_membership.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from streams.config import Settings
from streams.workers.transactions import TransactionAborted, TransactionalWriter, group_metadata


@pytest.mark.timeout(120)
def test_the_broker_takes_an_offset_commit_with_no_generation_from_anyone(
        stack: Settings, new_topic: Callable[..., str], unique_name: Callable[[str], str]) -> None:
    from aiokafka import AIOKafkaConsumer

    source, out = new_topic("unfenced-in"), new_topic("unfenced-out")
    group = unique_name("unfenced-group")
    producer = Producer(stack.kafka.client_config())
    for i in range(10):
        producer.produce(source, f"in-{i}".encode())
    assert producer.flush(10) == 0
    writer = TransactionalWriter(stack.kafka.client_config(), unique_name("unfenced-txn"), 10_000)

    async def scenario() -> None:
        owner = AIOKafkaConsumer(source, bootstrap_servers=stack.kafka.bootstrap_servers, group_id=group,
                                 enable_auto_commit=False, auto_offset_reset="earliest")
        await owner.start()  # the partition's owner, a live member of the group
        try:
            await owner.getmany(timeout_ms=5000)
            generation = int(owner._coordinator.generation)
            assert generation > 0
            with pytest.raises(TransactionAborted):  # a stale generation: fenced
                await asyncio.to_thread(writer.write, [(out, b"k", b"stale", -1)], {(source, 0): 4},
                                        group_metadata(group, generation + 1, "someone-else"))
            # No generation and no member id, as aiokafka holds while it rejoins: taken.
            await asyncio.to_thread(writer.write, [(out, b"k", b"unfenced", -1)], {(source, 0): 7},
                                    group_metadata(group, -1, ""))
        finally:
            await owner.stop()

    asyncio.run(scenario())
    consumer = Consumer({**stack.kafka.client_config(), "group.id": group})
    try:
        (committed,) = consumer.committed([TopicPartition(source, 0)], timeout=10)
    finally:
        consumer.close()
    assert committed.offset == 7, "the broker took an offset commit nobody in the group could be fenced for"
