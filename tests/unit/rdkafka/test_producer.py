"""Faust's producer on the driver: Kafka's key partitioning, the librdkafka properties made from
Faust's settings, and sends settled by delivery reports (on a fake librdkafka producer)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from confluent_kafka import KafkaError
from fake_librdkafka import FakeMessage
from faust.exceptions import ProducerSendError
from faust.types import TP

from streams.rdkafka import use_client_config
from streams.rdkafka.producer import Producer, murmur2, partition_of, producer_config

# What Kafka's Java client computes, printed by kafka-clients 4.1.1 itself: for each key,
# ``Utils.murmur2(key)`` (a signed int) and ``Utils.toPositive(Utils.murmur2(key)) % n`` for n = 3, 12, 64.
JAVA_MURMUR2 = [
    (b"", 275646681, (0, 9, 25)),
    (b"a", -1563381124, (1, 4, 60)),
    (b"ab", 316155434, (2, 2, 42)),
    (b"abc", 479470107, (0, 3, 27)),
    (b"abcd", -1323649548, (2, 8, 52)),
    (b"abcde", 461995741, (1, 1, 29)),
    (b"job-42/rank-7", -754529108, (0, 0, 44)),
    (b"kafka", -798503068, (1, 4, 36)),
    ("héllo wörld".encode(), 439213890, (0, 6, 2)),
    (b"\xff", -311467685, (0, 3, 27)),  # bytes above 0x7f: Java's bytes are signed, masked with 0xff
    (b"\x80\xff", -80095470, (2, 2, 18)),
    (b"\xfe\x80\xff", 1159266012, (0, 0, 28)),
    (b"\xff\x80\xfe\x7f", 814734775, (1, 7, 55)),
    (b"\x00\x00\x00\x00", 850957120, (1, 4, 0)),
]


@pytest.mark.parametrize(("key", "java", "partitions"), JAVA_MURMUR2,
                         ids=[key.hex() or "empty" for key, _java, _partitions in JAVA_MURMUR2])
def test_murmur2_and_partition_of_match_kafkas_java_client(key: bytes, java: int,
                                                           partitions: tuple[int, int, int]) -> None:
    assert murmur2(key) == java & 0xFFFFFFFF
    assert tuple(partition_of(key, n) for n in (3, 12, 64)) == partitions


def test_producer_config_maps_faust_settings_and_client_config_overrides_them() -> None:
    app = faust.App("unit-config", broker="rdkafka://kafka-a:9093", producer_acks=1, producer_linger=0.25,
                    producer_compression_type="lz4", producer_max_request_size=4_000_000,
                    producer_request_timeout=90.0, broker_client_id="sluice-unit")
    config = producer_config(app.transport)
    assert config["bootstrap.servers"] == "kafka-a:9093"
    assert config["client.id"] == "sluice-unit"
    assert config["acks"] == "1"
    assert config["linger.ms"] == 250
    assert config["compression.type"] == "lz4"
    assert config["message.max.bytes"] == 4_000_000
    assert config["message.timeout.ms"] == 90_000
    assert config["partitioner"] == "murmur2_random"

    defaults = producer_config(faust.App("unit-defaults", broker="rdkafka://kafka").transport)
    assert (defaults["acks"], defaults["linger.ms"], defaults["compression.type"]) == ("all", 0, "none")

    use_client_config(app, {"linger.ms": 5, "sasl.username": "sluice"})
    config = producer_config(app.producer_transport)
    assert config["linger.ms"] == 5, "the transport's client_config has the last word"
    assert config["sasl.username"] == "sluice"
    assert config["acks"] == "1"


# -- sends on a fake producer ------------------------------------------------------------------------
class FakeRdProducer:
    """librdkafka's producer as the driver uses it: ``produce`` queues a delivery report that a later
    ``poll`` or ``flush`` (on another thread) calls; a full queue raises BufferError."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.sent: list[dict[str, Any]] = []
        self.full_for = 0  # produce() calls that find the queue full
        self.refused: set[str] = set()  # topics whose records fail delivery
        self.partitions = {"logs": 12}
        self._reports: deque[tuple[Any, KafkaError | None, FakeMessage]] = deque()

    def produce(self, topic: str, value: bytes | None, key: bytes | None, on_delivery: Any = None,
                partition: int = -1, timestamp: int = 0, headers: Any = None) -> None:
        with self.lock:
            if self.full_for:
                self.full_for -= 1
                raise BufferError("Local: Queue full")
            self.sent.append({"topic": topic, "key": key, "value": value, "partition": partition,
                              "timestamp": timestamp, "headers": headers})
            error = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE) if topic in self.refused else None
            where = partition if partition >= 0 else partition_of(key or b"", self.partitions[topic])
            self._reports.append((on_delivery, error, FakeMessage(topic, where, 100 + len(self.sent), value, key)))

    def poll(self, timeout: float) -> int:
        with self.lock:
            reports = list(self._reports)
            self._reports.clear()
        for on_delivery, error, message in reports:
            on_delivery(error, message)
        if not reports:
            time.sleep(min(timeout, 0.005))
        return len(reports)

    def flush(self, timeout: float) -> int:
        self.poll(0)
        return 0

    def list_topics(self, topic: str, timeout: float) -> Any:
        meta = SimpleNamespace(error=None, partitions=dict.fromkeys(range(self.partitions[topic])))
        return SimpleNamespace(topics={topic: meta})


@asynccontextmanager
async def producer_on_fake() -> AsyncIterator[tuple[Producer, FakeRdProducer]]:
    made: list[FakeRdProducer] = []

    class ProducerOnFake(Producer):
        @staticmethod
        def producer_factory(config: dict[str, Any]) -> FakeRdProducer:
            made.append(FakeRdProducer(config))
            return made[-1]

    app = faust.App("unit-producer", broker="rdkafka://127.0.0.1:1")
    producer = ProducerOnFake(app.producer_transport, loop=asyncio.get_running_loop())
    await producer.start()
    try:
        (fake,) = made
        yield producer, fake
    finally:
        await producer.stop()


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(test(), 30)

    asyncio.run(bounded())


def test_a_send_is_settled_by_its_delivery_report() -> None:
    async def test() -> None:
        async with producer_on_fake() as (producer, fake):
            fake.full_for = 2  # the first two tries find librdkafka's queue full: the send waits, then goes
            sent = await producer.send("logs", b"job-42/rank-7", b"line", None, 1_700_000_000.5,
                                       {"source": b"unit"})
            meta = await asyncio.wait_for(sent, 5.0)
            assert (meta.topic, meta.partition, meta.offset) == ("logs", 0, 101)  # Java's partition of the key
            assert fake.sent == [{"topic": "logs", "key": b"job-42/rank-7", "value": b"line", "partition": -1,
                                  "timestamp": 1_700_000_000_500, "headers": [("source", b"unit")]}]
            meta = await producer.send_and_wait("logs", None, b"x", 7, None, None)
            assert (meta.partition, fake.sent[-1]["partition"]) == (7, 7)

    run(test)


def test_a_failed_delivery_fails_the_send_with_its_topic() -> None:
    async def test() -> None:
        async with producer_on_fake() as (producer, fake):
            fake.refused.add("logs")
            sent = await producer.send("logs", b"k", b"v" * 10, None, None, None)
            with pytest.raises(ProducerSendError, match="logs"):
                await asyncio.wait_for(sent, 5.0)

    run(test)


def test_key_partition_uses_the_topics_partition_count_and_kafkas_hash() -> None:
    async def test() -> None:
        async with producer_on_fake() as (producer, _fake):
            assert producer.key_partition("logs", b"job-42/rank-7") == TP("logs", 0)
            assert producer.key_partition("logs", b"abcd") == TP("logs", 8)

    run(test)
