"""The Kafka side: Avro ``sluice.v1.RawBatch`` records through the registry, delivery reports back.

Encoding and producing are separate steps so that the shipper can split a batch that does not fit
before anything is handed to the producer. ``encode`` raises ``EncodeError`` when the contract
refuses the value (split or quarantine it) and ``SendError`` when the registry cannot be reached
(retry later); a delivery report says whether the broker refused a record as too large.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from streams.config import Settings
from streams.errors import SluiceError
from streams.ship.encoding import EncodeError, RawBatchContract
from streams.ship.settings import ShipSettings

log = logging.getLogger(__name__)

__all__ = ["DeliveryCallback", "DeliveryError", "EncodeError", "KafkaSender", "SendError", "Sender"]


class SendError(SluiceError):
    """A batch could not be handed to the producer now (registry unreachable, queue full): retry later."""


class DeliveryError(SendError):
    """Kafka did not acknowledge a record; ``too_large``: the broker refused its size."""

    def __init__(self, message: str, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


# Called with None once Kafka has the record (acks=all), else with a DeliveryError.
DeliveryCallback = Callable[[DeliveryError | None], None]


class Sender(Protocol):
    def encode(self, value: dict[str, Any]) -> bytes: ...

    def produce(self, key: bytes, payload: bytes, on_delivery: DeliveryCallback) -> None: ...

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
        # The shipper keeps values under max_message_bytes; the key and headers ride on top.
        "message.max.bytes": ship.max_message_bytes + 16 * 1024,
    }
    conf.update(ship.producer)
    return conf


def _too_large(err: Any) -> bool:
    from confluent_kafka import KafkaError

    return err.code() in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE,
                          KafkaError.INVALID_RECORD)


class KafkaSender:
    def __init__(self, settings: Settings, ship: ShipSettings, topic: str) -> None:
        from confluent_kafka import Producer
        from confluent_kafka.serialization import MessageField, SerializationContext

        from streams.avro_io import avro_serializer

        self.topic = topic
        self._producer = Producer(producer_config(settings, ship), logger=log)
        self._serializer = avro_serializer(settings, "raw_batch")
        self._ctx = SerializationContext(topic, MessageField.VALUE)
        self._contract = RawBatchContract()

    def encode(self, value: dict[str, Any]) -> bytes:
        try:
            return bytes(self._serializer(value, self._ctx))
        except Exception as exc:
            problem = self._contract.problem(value)
            if problem is not None:
                raise EncodeError(f"a RawBatch for {self.topic} does not fit the contract: {problem}") from exc
            raise SendError(f"cannot serialise a RawBatch for {self.topic} (registry: {exc})") from exc

    def produce(self, key: bytes, payload: bytes, on_delivery: DeliveryCallback) -> None:
        from confluent_kafka import KafkaException

        def report(err: Any, _msg: Any) -> None:
            if err is None:
                on_delivery(None)
            else:
                on_delivery(DeliveryError(f"delivery to {self.topic} failed: {err}", too_large=_too_large(err)))

        try:
            self._producer.produce(self.topic, key=key, value=payload, on_delivery=report)
        except BufferError as exc:
            raise SendError(f"producer queue full for {self.topic}") from exc
        except KafkaException as exc:
            raise SendError(f"the producer refused a record for {self.topic}: {exc}") from exc
        self._producer.poll(0)

    def poll(self, timeout_s: float) -> None:
        self._producer.poll(timeout_s)

    def flush(self, timeout_s: float) -> int:
        return int(self._producer.flush(timeout_s))
