"""Dead letters: list them with filters, show one, re-drive them to where they came from.

Re-drive sends each letter's original bytes (and key), opened with the dead-letter key when sealed
(:mod:`streams.deadletter`), back to its original topic, so the same stage
processes them again, now that the cause is fixed. It reads with its own consumer group and commits
after the re-sent records are acknowledged: a letter is re-driven once per group. Landing once in the
stores does not depend on that: re-processed records carry the same deterministic event ids.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from streams.avro_io import avro_deserializer
from streams.config import Settings
from streams.deadletter import letter_seal, open_original
from streams.errors import SluiceError


@dataclass(frozen=True)
class LetterFilter:
    stage: str | None = None
    error_type: str | None = None
    contains: str | None = None  # a substring of the error text
    since_ms: int | None = None
    until_ms: int | None = None

    def accepts(self, letter: dict[str, Any]) -> bool:
        ts = _ms(letter["timestamp"])
        return (
            (self.stage is None or letter["stage"] == self.stage)
            and (self.error_type is None or letter["error_type"] == self.error_type)
            and (self.contains is None or self.contains.lower() in letter["error"].lower())
            and (self.since_ms is None or ts >= self.since_ms)
            and (self.until_ms is None or ts < self.until_ms)
        )


@dataclass(frozen=True)
class Letter:
    partition: int
    offset: int
    value: dict[str, Any]


def _ms(ts: Any) -> int:
    return int(ts.timestamp() * 1000) if isinstance(ts, datetime) else int(ts)


def parse_time(text: str) -> int:
    """ISO-8601 (``2026-11-29T10:00``, ``2026-11-29``) or epoch milliseconds, to epoch ms (UTC)."""
    if text.isdigit():
        return int(text)
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise SluiceError(f"{text!r} is neither ISO-8601 nor epoch milliseconds") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def open_consumer(settings: Settings, group_id: str | None = None) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer({
        **settings.kafka.client_config(),
        "group.id": group_id or f"sluice-dlq-reader-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })
    consumer.subscribe([settings.topics.dlq])
    return consumer


def poll_letters(consumer: Any, settings: Settings, idle_s: float = 3.0) -> Iterator[Letter]:
    """Letters from the dead-letter topic until it has been quiet for ``idle_s``."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserialize = avro_deserializer(settings)
    ctx = SerializationContext(settings.topics.dlq, MessageField.VALUE)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < idle_s:
        msg = consumer.poll(0.3)
        if msg is None or msg.error():
            continue
        quiet_since = time.monotonic()
        yield Letter(int(msg.partition() or 0), int(msg.offset() or 0), deserialize(msg.value(), ctx))


def list_letters(settings: Settings, where: LetterFilter, limit: int | None = None) -> list[Letter]:
    consumer = open_consumer(settings)
    try:
        found = []
        for letter in poll_letters(consumer, settings):
            if where.accepts(letter.value):
                found.append(letter)
                if limit is not None and len(found) >= limit:
                    break
        return found
    finally:
        consumer.close()


def redrive(
    settings: Settings, where: LetterFilter, group_id: str = "sluice-dlq-redrive", to_topic: str | None = None,
    dry_run: bool = False, progress: Callable[[Letter], None] | None = None,
) -> list[Letter]:
    """Re-send matching letters' original bytes; commit the group only after Kafka acknowledged them.

    Letters that do not match are passed over and committed too: a group re-drives each letter at
    most once. Use another ``group_id`` to look at everything again.
    """
    from confluent_kafka import Producer

    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    seal = letter_seal(settings.dead_letters)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    consumer = open_consumer(settings, group_id)
    sent: list[Letter] = []
    last: dict[int, int] = {}
    try:
        for letter in poll_letters(consumer, settings):
            last[letter.partition] = letter.offset
            if not where.accepts(letter.value):
                continue
            sent.append(letter)
            if progress:
                progress(letter)
            if dry_run:
                continue
            v = letter.value
            origin = f"{settings.topics.dlq}/{letter.partition}/{letter.offset}"
            try:
                original = open_original(v, seal)
            except SluiceError as exc:
                raise SluiceError(f"dead letter {origin}: {exc}; it and the letters after it were not re-sent"
                                  ) from None
            producer.produce(to_topic or v["topic"], value=original, key=v["key"], on_delivery=on_delivery,
                             headers={"sluice-redriven-from": origin})
            producer.poll(0)
            if len(sent) % 500 == 0:
                _commit_after_flush(producer, consumer, settings, last, errors)
        if not dry_run and last:
            _commit_after_flush(producer, consumer, settings, last, errors)
    finally:
        consumer.close()
    return sent


def _commit_after_flush(producer: Any, consumer: Any, settings: Settings, last: dict[int, int],
                        errors: list[str]) -> None:
    from confluent_kafka import TopicPartition

    if producer.flush(30) or errors:
        raise SluiceError(f"re-drive not acknowledged ({errors[:3] or 'flush timed out'}); nothing was committed, "
                          "run it again when Kafka is healthy")
    consumer.commit(offsets=[TopicPartition(settings.topics.dlq, p, o + 1) for p, o in last.items()],
                    asynchronous=False)
