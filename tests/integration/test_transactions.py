"""The assemble stage's transactional writer against the real broker, with a real group member.

A librdkafka consumer (what the stage's ``rdkafka://`` driver runs) joins a group; the writer commits
messages and that group's offsets in one transaction with the member's own group metadata. Once a
second member has joined, the first member's metadata of before is of a stale generation: a turn
carrying it is rolled back whole (read_committed readers see none of its messages, the offsets do not
move), while the metadata of the current generation commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from streams.config import Settings
from streams.kafka_read import read_to_end
from streams.workers.transactions import TransactionAborted, TransactionalWriter


def _committed_values(settings: Settings, topic: str) -> list[bytes]:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"{topic}-reader",
                         "isolation.level": "read_committed"})
    try:
        bounds = {0: consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)}
        return [msg.value() or b"" for msg in read_to_end(consumer, topic, bounds, 20.0)]
    finally:
        consumer.close()


def _member(settings: Settings, group: str, topic: str) -> Any:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 10_000,
                         "heartbeat.interval.ms": 1_000})
    consumer.subscribe([topic])
    return consumer


def _poll_until(members: list[Any], done: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s")
        for member in members:
            member.poll(0.2)


@pytest.mark.timeout(180)
def test_outputs_and_offsets_commit_together_and_a_stale_generation_rolls_back(
        stack: Settings, new_topic: Callable[..., str], unique_name: Callable[[str], str]) -> None:
    source, out = new_topic("txn-in"), new_topic("txn-out")
    group = unique_name("txn-group")
    producer = Producer(stack.kafka.client_config())
    for i in range(5):
        producer.produce(source, f"in-{i}".encode())
    assert producer.flush(10) == 0
    writer = TransactionalWriter(stack.kafka.client_config(), unique_name("txn-id"), 10_000)
    first = _member(stack, group, source)
    second = None
    try:
        _poll_until([first], lambda: bool(first.assignment()), "the first member's assignment")
        before = first.consumer_group_metadata()
        writer.write([(out, b"k", b"turn-1", -1)], {(source, 0): 3}, before)
        second = _member(stack, group, source)
        joined = second
        # The second member's join is a new generation, which the first member takes part in.
        _poll_until([first, joined], lambda: bytes(first.consumer_group_metadata()) != bytes(before)
                    and bool(joined.memberid()), "the rebalance after the second member joined")
        with pytest.raises(TransactionAborted):
            writer.write([(out, b"k", b"stale", -1)], {(source, 0): 5}, before)
        owner = first if first.assignment() else joined
        writer.write([(out, b"k", b"turn-2", -1)], {(source, 0): 4}, owner.consumer_group_metadata())
    finally:
        for member in (first, second):
            if member is not None:
                member.close()
    assert _committed_values(stack, out) == [b"turn-1", b"turn-2"]
    reader = Consumer({**stack.kafka.client_config(), "group.id": group})
    try:
        assert reader.committed([TopicPartition(source, 0)], timeout=10)[0].offset == 4
    finally:
        reader.close()
