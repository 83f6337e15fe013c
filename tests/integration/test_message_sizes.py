"""One record size end to end, on the real broker: a worker whose topics accept less than
``kafka.max_message_bytes`` stops at start with what to change; a dead letter too large for the topic is
cut to fit (flagged, with the original's length and hash), never a producer error on every retry."""

from __future__ import annotations

import hashlib

import pytest

from streams.avro_io import avro_deserializer
from streams.config import Settings
from streams.contracts import register_all
from streams.errors import ConfigError
from streams.letters import ORIGINAL_BYTES, ORIGINAL_SHA256, PROTECT_RESERVE, TRUNCATED
from streams.message_size import check_message_sizes
from streams.sinks.base import SinkRecord
from streams.sinks.kafka_io import KafkaDeadLetters
from streams.topics import TopicSpec, create_topics, describe_topics
from tests.integration.test_dlq import _read_raw

MIB = 1024 * 1024


def with_dlq(stack: Settings, dlq: str) -> Settings:
    return stack.model_copy(update={"topics": stack.topics.model_copy(update={"dlq": dlq})})


def test_a_topic_that_accepts_less_stops_the_worker_at_start(stack: Settings, new_topic, unique_name) -> None:
    small = new_topic("dlq-small", config={"max.message.bytes": "200000"})
    with pytest.raises(ConfigError) as refused:
        check_message_sizes(with_dlq(stack, small), "hot")
    text = str(refused.value)
    assert small in text and "accepts 200000 bytes" in text and f"max.message.bytes={MIB}" in text
    # A topic made by `sluice topics create` takes the setting: the check passes.
    made = unique_name("dlq-made")
    create_topics(stack, [TopicSpec(made, 1)])
    assert describe_topics(stack, [made])[made]["max.message.bytes"] == str(MIB)
    check_message_sizes(with_dlq(stack, made), "cold")


def test_a_dead_letter_too_large_is_cut_to_fit(stack: Settings, new_topic) -> None:
    # The test broker takes 16 MiB; this topic only what a stock broker takes.
    dlq = new_topic("dlq-1mib", config={"max.message.bytes": str(MIB)})
    settings = with_dlq(stack, dlq)
    register_all(settings)
    original = ("RuntimeError: CUDA error: an illegal memory access was encountered ✗\n" * 50_000).encode()
    record = SinkRecord("logs.events.default", 2, 77, b"node-3/train.log", {}, original, "default", len(original))
    letters = KafkaDeadLetters(settings)
    letters.send(record, "hot_sink", "document too large for the index", "too_large")
    letters.flush()  # before: MSG_SIZE_TOO_LARGE from the producer, the sink down on every restart
    ((_key, value),) = _read_raw(settings, dlq)
    assert len(value) <= MIB
    from confluent_kafka.serialization import MessageField, SerializationContext

    letter = avro_deserializer(settings)(value, SerializationContext(dlq, MessageField.VALUE))
    assert original.startswith(letter["original"]) and len(letter["original"]) > MIB - PROTECT_RESERVE - 4096
    assert letter["headers"][TRUNCATED] == "original"
    assert letter["headers"][ORIGINAL_BYTES] == str(len(original))
    assert letter["headers"][ORIGINAL_SHA256] == hashlib.sha256(original).hexdigest()
    assert (letter["topic"], letter["partition"], letter["offset"]) == ("logs.events.default", 2, 77)
