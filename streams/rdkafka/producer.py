"""Faust's producer on librdkafka: ``send`` returns an asyncio future settled by the delivery report.

librdkafka calls delivery reports from ``poll()``; a thread of the producer's own polls, and each
report settles its future on the event loop. Keys without a partition go where Kafka's Java client
puts them (``murmur2_random``), so a task's records keep their partition whichever client wrote
them, and the tables keyed by task keep their state there.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from faust.exceptions import ProducerSendError
from faust.transport import producer as faust_producer
from faust.types import TP, RecordMetadata

log = logging.getLogger(__name__)

FLUSH_TIMEOUT_S = 30.0
ACKS = {0: "0", 1: "1", -1: "all"}


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of a key (``org.apache.kafka.common.utils.Utils.murmur2``)."""
    length = len(data)
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    if rest:
        tail = data[length - rest:]
        if rest >= 3:
            h ^= tail[2] << 16
        if rest >= 2:
            h ^= tail[1] << 8
        h ^= tail[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def partition_of(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives ``key`` (``toPositive(murmur2(key)) % n``)."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def producer_config(transport: Any) -> dict[str, Any]:
    conf = transport.app.conf
    config: dict[str, Any] = {
        "bootstrap.servers": transport.bootstrap_servers(),
        "client.id": conf.broker_client_id,
        "acks": ACKS.get(conf.producer_acks, "all"),
        "linger.ms": int((conf.producer_linger or 0) * 1000),
        "message.max.bytes": conf.producer_max_request_size,
        "compression.type": conf.producer_compression_type or "none",
        "message.timeout.ms": int(conf.producer_request_timeout * 1000),  # a send fails after this long
        "partitioner": "murmur2_random",
    }
    return {**config, **transport.client_config}


class Producer(faust_producer.Producer):
    """Faust's producer over one librdkafka producer (see the module's text)."""

    allow_headers = True
    #: Makes the librdkafka producer from its properties: confluent-kafka's ``Producer`` when None
    #: (a subclass may run the driver on something else, as its tests run it on a fake).
    producer_factory: Callable[[dict[str, Any]], Any] | None = None

    def __post_init__(self) -> None:
        self._client: Any = None
        self._stopping = threading.Event()
        self._poller: threading.Thread | None = None
        self._partitions: dict[str, int] = {}

    async def on_start(self) -> None:
        from confluent_kafka import Producer as RdProducer

        await super().on_start()
        self._client = (self.producer_factory or RdProducer)(producer_config(self.transport))
        self._stopping.clear()
        self._poller = threading.Thread(target=self._poll, name="rdkafka-producer", daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        client = self._client
        while not self._stopping.is_set():
            client.poll(0.1)

    async def on_stop(self) -> None:
        if self._client is not None:
            await self.loop.run_in_executor(None, self._client.flush, FLUSH_TIMEOUT_S)
        self._stopping.set()
        if self._poller is not None:
            await self.loop.run_in_executor(None, self._poller.join, 5.0)

    async def send(self, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                   timestamp: float | None, headers: Any, *, transactional_id: str | None = None) -> Any:
        loop = self.loop
        future: asyncio.Future[RecordMetadata] = loop.create_future()

        def settle(err: Any, msg: Any) -> None:
            if future.done():
                return
            if err is not None:
                future.set_exception(ProducerSendError(f"writing to {topic} failed: {err}"))
            else:
                tp = TP(msg.topic(), msg.partition())
                future.set_result(RecordMetadata(tp.topic, tp.partition, tp, msg.offset()))

        def delivered(err: Any, msg: Any) -> None:
            loop.call_soon_threadsafe(settle, err, msg)

        kwargs: dict[str, Any] = {"on_delivery": delivered}
        if partition is not None:
            kwargs["partition"] = partition
        if timestamp:
            kwargs["timestamp"] = int(timestamp * 1000)
        if headers:
            kwargs["headers"] = list(headers.items()) if isinstance(headers, dict) else list(headers)
        while True:
            try:
                self._client.produce(topic, value, key, **kwargs)
            except BufferError:  # librdkafka's queue is full: let the poller drain it
                await asyncio.sleep(0.05)
            else:
                return future

    async def send_and_wait(self, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                            timestamp: float | None, headers: Any, *,
                            transactional_id: str | None = None) -> RecordMetadata:
        future = await self.send(topic, key, value, partition, timestamp, headers)
        result: RecordMetadata = await future
        return result

    async def flush(self) -> None:
        await self.buffer.flush()
        if self._client is not None:
            left = await self.loop.run_in_executor(None, self._client.flush, FLUSH_TIMEOUT_S)
            if left:
                log.warning("%d messages not delivered %.0f s into a flush; they are still being sent",
                            left, FLUSH_TIMEOUT_S)

    def key_partition(self, topic: str, key: bytes) -> TP:
        if topic not in self._partitions:
            meta = self._client.list_topics(topic, timeout=10).topics[topic]
            if meta.error is not None:
                raise ProducerSendError(f"topic {topic}: {meta.error}")
            self._partitions[topic] = len(meta.partitions)
        return TP(topic, partition_of(key, self._partitions[topic]))

    async def create_topic(self, topic: str, partitions: int, replication: int, **kwargs: Any) -> None:
        await self.transport.create_topic(topic, partitions, replication, **kwargs)  # type: ignore[attr-defined]

    def supports_headers(self) -> bool:
        return True
