"""Batches of records: what an agent over a batched topic gets as one event.

Faust's per-message path (a ``ConsumerMessage``, the conductor, an ``Event``, the stream's queue)
costs tens of microseconds a record; a record holding one log line costs a few. On a topic made
with :func:`batch_topic`, the driver hands Faust one message per partition per fetch whose value is
a :class:`RecordBatch`: Faust's cost is paid once per batch, and the agent reads the records
themselves (librdkafka's ``Message``: ``offset()``, ``key()``, ``value()``, ``timestamp()``,
``headers()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import faust


@dataclass(slots=True)
class RecordBatch:
    """Records of one partition as one fetch brought them, oldest first.

    ``end`` is where reading the partition stands after them: the offset after the last record, or
    further when transaction markers follow it (a batch may then hold no record at all: it says the
    reader has read everything up to ``end``). ``generation`` counts the consumer's assignments when
    the batch was fetched.
    """

    topic: str
    partition: int
    records: list[Any]
    end: int
    epoch: int
    generation: int

    def __len__(self) -> int:
        return len(self.records)

    def messages(self) -> list[Message]:
        """The records as :class:`Message` views, each field read once from librdkafka's record."""
        topic, partition, generation = self.topic, self.partition, self.generation
        out = []
        for record in self.records:
            _kind, ts_ms = record.timestamp()
            out.append(Message(topic, partition, record.offset(), record.key(), record.value(),
                               ts_ms / 1000 if ts_ms and ts_ms > 0 else 0.0, record.headers(), generation))
        return out


@dataclass(slots=True)
class Message:
    """A record as a stage reads it: the attributes of Faust's ``ConsumerMessage`` that stages use
    (``timestamp`` in seconds, 0.0 when the record has none; ``headers`` a list of pairs or None)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: float
    headers: list[tuple[str, bytes]] | None
    generation_id: int


class BatchSchema(faust.Schema):
    """The event's value is the :class:`RecordBatch` itself; its key is None."""

    def loads_key(self, app: Any, message: Any, *, loads: Any = None, serializer: Any = None) -> Any:
        return None

    def loads_value(self, app: Any, message: Any, *, loads: Any = None, serializer: Any = None) -> Any:
        return message.value


def batch_topic(app: faust.App, *topics: str, **options: Any) -> Any:
    """``app.topic(*topics, **options)`` whose agents get one :class:`RecordBatch` per event.

    The app's broker must be an ``rdkafka://`` URL (:mod:`streams.rdkafka.transport`)."""
    batched = getattr(app.transport, "batched", None)
    if batched is None:
        raise TypeError(f"batch_topic needs the rdkafka:// transport; the app's broker is {app.conf.broker!r}")
    batched.update(topics)
    return app.topic(*topics, schema=BatchSchema(), **options)
