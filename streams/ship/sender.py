"""The Kafka side: Avro ``sluice.v1.RawBatch`` records through the registry, delivery reports back."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from streams.config import Settings
from streams.errors import SluiceError
from streams.ship.settings import ShipSettings

log = logging.getLogger(__name__)

# Called with None once Kafka has the record (acks=all), else with the error.
DeliveryCallback = Callable[[Exception | None], None]


class SendError(SluiceError):
    """A batch could not be handed to the producer now (registry unreachable, queue full): retry later."""


class Sender(Protocol):
    def send(self, key: bytes, value: dict[str, Any], on_delivery: DeliveryCallback) -> None: ...

    def poll(self, timeout_s: float) -> None: ...

    def flush(self, timeout_s: float) -> int: ...


def producer_config(settings: Settings, ship: ShipSettings) -> dict[str, Any]:
    conf: dict[str, Any] = {
        **settings.kafka.client_config(),
        # Idempotence: librdkafka's retries never duplicate or reorder within a partition.
        "enable.idempotence": True,
        "acks": "all",
        "compression.type": ship.compression,
        "linger.ms": ship.linger_ms,
        "message.timeout.ms": ship.message_timeout_ms,
        # librdkafka's own queue stays above our cap: the shipper's cap is the one that binds.
        "queue.buffering.max.kbytes": max(4 * ship.max_buffer_bytes // 1024, 1024),
        # Come back quickly after an outage (librdkafka's default backs off to 10 s).
        "reconnect.backoff.max.ms": 2000,
        "message.max.bytes": max(1_000_000, 2 * ship.max_batch_bytes),
    }
    conf.update(ship.producer)
    return conf


class KafkaSender:
    def __init__(self, settings: Settings, ship: ShipSettings, topic: str) -> None:
        from confluent_kafka import Producer
        from confluent_kafka.serialization import MessageField, SerializationContext

        from streams.avro_io import avro_serializer

        self.topic = topic
        self._producer = Producer(producer_config(settings, ship), logger=log)
        self._serializer = avro_serializer(settings, "raw_batch")
        self._ctx = SerializationContext(topic, MessageField.VALUE)

    def send(self, key: bytes, value: dict[str, Any], on_delivery: DeliveryCallback) -> None:
        try:
            payload = self._serializer(value, self._ctx)
        except Exception as exc:  # the registry lookup is I/O: any failure is worth a retry
            raise SendError(f"cannot serialise a RawBatch for {self.topic} (registry: {exc})") from exc

        def report(err: Any, _msg: Any) -> None:
            on_delivery(None if err is None else SendError(f"delivery to {self.topic} failed: {err}"))

        try:
            self._producer.produce(self.topic, key=key, value=payload, on_delivery=report)
        except BufferError as exc:
            raise SendError(f"producer queue full for {self.topic}") from exc
        self._producer.poll(0)

    def poll(self, timeout_s: float) -> None:
        self._producer.poll(timeout_s)

    def flush(self, timeout_s: float) -> int:
        return int(self._producer.flush(timeout_s))
