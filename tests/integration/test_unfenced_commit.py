"""Why the assemble stage never commits a turn while its consumer is between assignments: the real
broker takes a transactional offset commit that carries no generation (-1) and no member id, for a group
whose partition another member owns, without fencing it (Kafka's ClassicGroup.validateOffsetCommit skips
the member check for transactional commits). That is the metadata librdkafka's consumer holds before it
has joined; the stage's driver hands out none between assignments (tests/unit/test_assemble_membership.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from streams.config import Settings
from streams.workers.transactions import TransactionalWriter


@pytest.mark.timeout(120)
def test_the_broker_takes_an_offset_commit_with_no_generation_from_anyone(
        stack: Settings, new_topic: Callable[..., str], unique_name: Callable[[str], str]) -> None:
    source, out = new_topic("unfenced-in"), new_topic("unfenced-out")
    group = unique_name("unfenced-group")
    producer = Producer(stack.kafka.client_config())
    for i in range(10):
        producer.produce(source, f"in-{i}".encode())
    assert producer.flush(10) == 0
    writer = TransactionalWriter(stack.kafka.client_config(), unique_name("unfenced-txn"), 10_000)
    owner = Consumer({**stack.kafka.client_config(), "group.id": group, "enable.auto.commit": False,
                      "auto.offset.reset": "earliest"})
    outsider = Consumer({**stack.kafka.client_config(), "group.id": group})  # never joins the group
    try:
        owner.subscribe([source])  # the partition's owner, a live member of the group
        deadline = time.monotonic() + 60
        while not owner.assignment():
            assert time.monotonic() < deadline, "the owner got no assignment in 60 s"
            owner.poll(0.2)
        writer.write([(out, b"k", b"unfenced", -1)], {(source, 0): 7}, outsider.consumer_group_metadata())
    finally:
        owner.close()
        outsider.close()
    consumer = Consumer({**stack.kafka.client_config(), "group.id": group})
    try:
        (committed,) = consumer.committed([TopicPartition(source, 0)], timeout=10)
    finally:
        consumer.close()
    assert committed.offset == 7, "the broker took an offset commit nobody in the group could be fenced for"
