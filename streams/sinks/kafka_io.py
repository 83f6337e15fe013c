"""Kafka ends of a sink: a decoding record source with manual commits, and the dead-letter writer."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fastavro

from streams import observability as obs
from streams.assemble.redact import redactor_from
from streams.avro_io import avro_serializer
from streams.config import Settings
from streams.deadletter import letter_seal, protect_letter
from streams.errors import CommitFailed, DependencyRefused, DependencyUnavailable, Failure, SluiceError
from streams.kafka_errors import kafka_failure
from streams.letters import fit_letter
from streams.redrive_marks import marks_of
from streams.registry import checked
from streams.registry_cache import MissingSchemas
from streams.sinks.base import Backoff, SinkRecord

log = logging.getLogger(__name__)


def project_of(topic: str, value: dict[str, Any], events_prefix: str, default: str) -> str:
    project = value.get("project")
    if isinstance(project, str) and project:
        return project
    if topic.startswith(events_prefix):
        return topic[len(events_prefix):]
    return default


class WireDecoder:
    """Confluent wire-format Avro values to dicts: fastavro, each writer schema fetched and parsed once.

    For schemas without references or rules this returns what confluent's AvroDeserializer returns,
    at about a third of its cost (it re-expands the schema and runs its rule hooks on every record).
    Schemas with references or rules still go through the AvroDeserializer.
    """

    def __init__(self, registry: Any, deserializer: Any, url: str = "the schema registry") -> None:
        self.registry = registry
        self.deserializer = deserializer
        self.url = url
        self._schemas: dict[int, Any] = {}  # schema id -> parsed writer schema, or None: use the deserializer
        self._missing = MissingSchemas()

    def __call__(self, raw: bytes, ctx: Any) -> Any:
        """The decoded value. A registry that does not answer (or refuses us) raises a
        :class:`~streams.errors.DependencyFailure` (streams/registry.py); a value that cannot be
        decoded raises anything else."""
        if len(raw) <= 5 or raw[0] != 0:
            return self.deserializer(raw, ctx)  # let it raise its own "not wire format" error
        schema_id = int.from_bytes(raw[1:5], "big")
        if schema_id not in self._schemas:
            self._schemas[schema_id] = checked(lambda: self._parsed(schema_id), f"the lookup of schema id {schema_id}",
                                               self.url)
        parsed = self._schemas[schema_id]
        if parsed is None:
            return checked(lambda: self.deserializer(raw, ctx), f"the lookup of schema id {schema_id}", self.url)
        payload = io.BytesIO(raw)
        payload.seek(5)
        return fastavro.schemaless_reader(payload, parsed, None)

    def _parsed(self, schema_id: int) -> Any:
        # An unknown id raises, remembered for a while; a registry that is down raises, nothing cached.
        schema = self._missing.get_schema(self.registry, schema_id)
        if schema.references or schema.rule_set:
            return None
        try:
            return fastavro.parse_schema(json.loads(schema.schema_str))
        except (ValueError, TypeError, fastavro.schema.SchemaParseException):
            return None


def sink_consumer_config(settings: Settings, group_id: str) -> dict[str, Any]:
    """librdkafka settings of a sink's consumer in ``group_id``, secrets included: never log the result."""
    conf: dict[str, Any] = {
        **settings.kafka.client_config(),
        "group.id": group_id,
        "enable.auto.commit": False,  # the runner commits only what the store acknowledged
        "isolation.level": "read_committed",  # assemble writes in transactions: never an aborted one
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "cooperative-sticky",
    }
    session_s = settings.kafka.sink_session_timeout_s
    if session_s is not None:
        session_ms = round(session_s * 1000)
        conf["session.timeout.ms"] = session_ms
        # Kafka wants heartbeats at most a third of the session apart; a sixth lets a member miss a few (a
        # pause, a lost packet) and stay in the group. Twice a second at most spares the coordinator.
        conf["heartbeat.interval.ms"] = max(500, session_ms // 6)
    return conf


@dataclass
class Hold:
    """A partition held at ``offset`` because a dependency (the registry) did not answer for its record."""

    offset: int
    until: float
    attempts: int
    reason: str


class KafkaRecordSource:
    """confluent-kafka consumer: Avro values decoded via the registry, offsets committed by the runner.

    A record whose schema cannot be looked up because the registry does not answer is no record's
    fault: its partition is sought back to it and paused (a *hold*) for a backoff, and read again
    from there; the records before it, and other partitions, go on. Credentials refused by the
    broker or the registry stop the stage (:class:`~streams.errors.DependencyRefused`).
    """

    pauses_partitions = True

    def __init__(self, settings: Settings, topics: list[str], group_id: str, stage: str = "sink",
                 backoff: Backoff | None = None, clock: Callable[[], float] = time.monotonic,
                 **overrides: Any) -> None:
        from confluent_kafka import Consumer
        from confluent_kafka.schema_registry.avro import AvroDeserializer

        from streams.clients import registry_client

        self.settings = settings
        self.topics = topics
        self.consumer_group = group_id
        self.stage = stage
        self.backoff = backoff or Backoff(base_s=0.5, cap_s=30.0)
        self.clock = clock
        self._refused: list[str] = []  # credential errors the client reported (error_cb)
        self.consumer = Consumer({**sink_consumer_config(settings, group_id), "error_cb": self._on_error,
                                  **overrides})
        registry = registry_client(settings.registry)
        self._deserialize = WireDecoder(registry, AvroDeserializer(registry), settings.registry.url)
        self._revoked: list[tuple[str, int]] = []
        self._assigned: set[tuple[str, int]] = set()
        self._newest_ms: dict[tuple[str, int], int] = {}  # per partition: time of the newest record read
        self.holds: dict[tuple[str, int], Hold] = {}
        self._paused_by_runner: set[tuple[str, int]] = set()
        self._fresh: set[tuple[str, int]] = set()  # assigned since the last poll (see _on_assign)
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_revoke)

    # Cooperative rebalancing: a revocation is always followed by an assignment (possibly empty), which
    # ends the rebalance as far as readiness goes.
    def _on_assign(self, _consumer: Any, partitions: list[Any]) -> None:
        got = {(p.topic, p.partition) for p in partitions}
        self._assigned.update(got)
        # librdkafka keeps a partition's pause through its revocation and reassignment (the pause is the
        # partition's, not the assignment's), while the runner forgot it at the revocation: one paused when
        # it was taken away would come back paused and never be read again. Resumed at the next poll, once
        # the assignment is in place.
        self._fresh.update(got)
        obs.HEALTH.assignment(len(self._assigned))

    def _resume_fresh(self) -> None:
        from confluent_kafka import TopicPartition

        fresh = [TopicPartition(t, p) for t, p in self._fresh
                 if (t, p) in self._assigned and (t, p) not in self._paused_by_runner and (t, p) not in self.holds]
        self._fresh = set()
        if fresh:
            self.consumer.resume(fresh)

    def _on_error(self, err: Any) -> None:
        if kafka_failure(err) is Failure.REFUSED:
            self._refused.append(str(err))
        else:
            log.debug("kafka client: %s", err)

    def _check_refused(self) -> None:
        if self._refused:
            raise DependencyRefused(
                f"Kafka at {self.settings.kafka.bootstrap_servers} refused group {self.consumer_group}: "
                f"{self._refused[0]}. Check kafka.sasl_username / sasl_password (or the secret file), "
                "kafka.security_protocol and ssl_cafile, and the ACLs of that user on "
                f"{', '.join(self.topics)} and the group", "kafka")

    def _on_revoke(self, _consumer: Any, partitions: list[Any]) -> None:
        gone = [(p.topic, p.partition) for p in partitions]
        self._revoked.extend(gone)
        self._assigned.difference_update(gone)
        for tp in gone:
            self._newest_ms.pop(tp, None)
            self.holds.pop(tp, None)
            self._paused_by_runner.discard(tp)
            self._fresh.discard(tp)
        obs.HEALTH.revoked()

    def take_revoked(self) -> list[tuple[str, int]]:
        out, self._revoked = self._revoked, []
        return out

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        from confluent_kafka.serialization import MessageField, SerializationContext

        self._check_refused()
        if self._fresh:
            self._resume_fresh()
        self._release_holds()
        out = []
        held_now: set[tuple[str, int]] = set()
        for msg in self.consumer.consume(max_records, timeout_s):
            if msg.error():
                if kafka_failure(msg.error()) is Failure.REFUSED:
                    self._refused.append(str(msg.error()))
                    self._check_refused()
                log.warning("consumer error on %s [%s]: %s", msg.topic(), msg.partition(), msg.error())
                continue
            raw = msg.value() or b""
            topic, partition, offset = str(msg.topic()), int(msg.partition() or 0), int(msg.offset() or 0)
            if (topic, partition) in held_now:
                continue  # after a held record: read again, in order, once the hold ends
            error: tuple[str, str] | None = None
            try:
                decoded = self._deserialize(raw, SerializationContext(topic, MessageField.VALUE))
            except DependencyUnavailable as exc:
                held_now.add((topic, partition))
                self._hold(topic, partition, offset, str(exc))
                continue
            except Exception as exc:
                if isinstance(exc, DependencyRefused):
                    raise
                decoded = None
                error = (f"cannot decode the Avro value of {topic} [{partition}] @ {offset}: {exc}", "undecodable")
            value: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
            if error is None and not isinstance(decoded, dict):
                error = (f"{topic} [{partition}] @ {offset} holds no Avro record", "undecodable")
            project = project_of(topic, value, self.settings.topics.events_prefix,
                                 self.settings.routing.default_project)
            self._newest_ms[(topic, partition)] = msg.timestamp()[1]
            headers = msg.headers()
            marks = marks_of(headers) if headers else None
            out.append(SinkRecord(topic, partition, offset, msg.key(), value, raw, project, len(raw),
                                  decode_error=error, marks=marks or None))
        return out

    def _hold(self, topic: str, partition: int, offset: int, reason: str) -> None:
        """Seek the partition back to ``offset`` and pause it for a backoff (longer each time)."""
        from confluent_kafka import TopicPartition

        tp = (topic, partition)
        attempts = self.holds[tp].attempts + 1 if tp in self.holds else 1
        delay = max(self.backoff.base_s, self.backoff.delay(attempts))
        self.consumer.pause([TopicPartition(topic, partition)])
        self.consumer.seek(TopicPartition(topic, partition, offset))
        self.holds[tp] = Hold(offset, self.clock() + delay, attempts, reason)
        obs.DEPENDENCY_WAITS.labels(self.stage, "registry").inc()
        log.warning("%s [%d] held at offset %d for %.1f s (attempt %d): %s", topic, partition, offset, delay,
                    attempts, reason)

    def _release_holds(self) -> None:
        """Resume the held partitions whose backoff ended (unless the runner paused them itself). The
        hold stays recorded, so a failure again backs off longer; a record that decodes clears it."""
        from confluent_kafka import TopicPartition

        now = self.clock()
        due = [tp for tp, h in self.holds.items() if h.until <= now and h.until != float("inf")]
        for tp in due:
            self.holds[tp].until = float("inf")  # released: waiting to read the held record again
        resume = [TopicPartition(t, p) for t, p in due if (t, p) not in self._paused_by_runner]
        if resume:
            self.consumer.resume(resume)
        # A partition read past its held offset has recovered: forget its hold.
        if self.holds:
            positions = {(tp.topic, tp.partition): tp.offset
                         for tp in self.consumer.position([TopicPartition(t, p) for t, p in self.holds])}
            for tp, hold in list(self.holds.items()):
                if hold.until == float("inf") and positions.get(tp, -1) > hold.offset:
                    del self.holds[tp]

    def commit(self, points: dict[tuple[str, int], int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in points.items()],
                                 asynchronous=False)
        except KafkaException as exc:
            if kafka_failure(exc) is Failure.REFUSED:
                self._refused.append(str(exc.args[0]))
                self._check_refused()
            raise CommitFailed(f"committing {points} to group {self.consumer_group}: {exc}") from exc

    def positions(self) -> dict[tuple[str, int], int]:
        """Where the consumer stands in each assigned partition (past transaction markers; local call)."""
        return {(tp.topic, tp.partition): tp.offset for tp in self.consumer.position(self.consumer.assignment())}

    def newest_read_ms(self) -> dict[tuple[str, int], int]:
        """Per partition: the timestamp of the newest record read (the stage's lag in seconds is its age)."""
        return dict(self._newest_ms)

    def lag(self) -> dict[tuple[str, int], int]:
        """Records behind the end of each assigned partition (watermarks cached by the client)."""
        out = {}
        for tp in self.consumer.position(self.consumer.assignment()):
            try:
                _low, high = self.consumer.get_watermark_offsets(tp, cached=True)
            except Exception:  # noqa: BLE001, S112 - no fetch yet for this partition: skip it this round
                continue
            if high >= 0 and tp.offset >= 0:
                out[(tp.topic, tp.partition)] = max(0, high - tp.offset)
        return out

    def pause(self, partitions: list[tuple[str, int]]) -> None:
        from confluent_kafka import TopicPartition

        self._paused_by_runner.update(partitions)
        self.consumer.pause([TopicPartition(t, p) for t, p in partitions])

    def resume(self, partitions: list[tuple[str, int]]) -> None:
        """Resume what the runner paused, except partitions still held for a dependency."""
        from confluent_kafka import TopicPartition

        self._paused_by_runner.difference_update(partitions)
        free = [TopicPartition(t, p) for t, p in partitions if not self._held(t, p)]
        if free:
            self.consumer.resume(free)

    def _held(self, topic: str, partition: int) -> bool:
        hold = self.holds.get((topic, partition))
        return hold is not None and hold.until != float("inf")

    def pause_all(self) -> None:
        self.pause([(tp.topic, tp.partition) for tp in self.consumer.assignment()])

    def resume_all(self) -> None:
        self.resume([(tp.topic, tp.partition) for tp in self.consumer.assignment()])

    def close(self) -> None:
        self.consumer.close()


class KafkaDeadLetters:
    """Writes ``sluice.v1.DeadLetter`` records to logs.dlq; ``flush`` waits for the broker's ack.

    A letter too large for ``kafka.max_message_bytes`` goes with its original cut (streams/letters.py).
    A letter the broker did not take for a passing reason (brokers down past the delivery timeout) is
    sent again; a refused credential stops the stage."""

    def __init__(self, settings: Settings) -> None:
        from confluent_kafka import Producer

        self.settings = settings
        self.topic = settings.topics.dlq
        self.max_message_bytes = settings.kafka.max_message_bytes
        self._serialize = avro_serializer(settings, "dead_letter")
        self._redact = redactor_from(settings.redaction)
        self._seal = letter_seal(settings.dead_letters, writer=True)
        self.producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 5})
        self._errors: list[str] = []
        self._again: list[tuple[bytes | None, bytes]] = []

    def send(self, record: SinkRecord, stage: str, reason: str, error_type: str) -> None:
        """Queue one letter. Blocking the first time (the schema id is looked up): a registry that does
        not answer raises :class:`~streams.errors.DependencyUnavailable`."""
        from confluent_kafka.serialization import MessageField, SerializationContext

        letter: dict[str, Any] = {
            "original": record.raw, "key": record.key, "topic": record.topic, "partition": record.partition,
            "offset": record.offset, "stage": stage, "error": reason, "error_type": error_type,
            "timestamp": int(time.time() * 1000), "attempts": record.attempts + 1,
            "headers": dict(record.marks or {}),
        }
        letter = fit_letter(letter, self.max_message_bytes)
        protect_letter(letter, self._redact, self._seal)
        ctx = SerializationContext(self.topic, MessageField.VALUE)
        value = checked(lambda: self._serialize(letter, ctx), f"the lookup of {self.topic}-value",
                        self.settings.registry.url)
        self._produce(record.key, value)

    def _produce(self, key: bytes | None, value: bytes) -> None:
        while True:
            try:
                self.producer.produce(self.topic, key=key, value=value, on_delivery=self._on_delivery)
                break
            except BufferError:  # librdkafka's queue is full: let it drain
                self.producer.poll(0.1)
        self.producer.poll(0)

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is None:
            return
        kind = kafka_failure(err)
        if kind is Failure.TRANSIENT:
            self._again.append((msg.key(), msg.value()))
        elif kind is Failure.REFUSED:
            self._errors.append(f"credentials: {err}")
        else:
            self._errors.append(f"{err} (the topic accepts fewer bytes than kafka.max_message_bytes="
                                f"{self.max_message_bytes}? raise its max.message.bytes)")

    def flush(self) -> None:
        while True:
            while self.producer.flush(5):
                log.warning("dead-letter topic %s not acknowledging yet; waiting (offsets are held)", self.topic)
            if self._errors:
                errors, self._errors = self._errors, []
                if errors[0].startswith("credentials: "):
                    raise DependencyRefused(
                        f"Kafka at {self.settings.kafka.bootstrap_servers} refused the dead letters for "
                        f"{self.topic}: {errors[0]}. Check the Kafka credentials and this user's ACLs", "kafka")
                raise SluiceError(f"writing to {self.topic} failed: {errors[:3]}; offsets were not committed")
            if not self._again:
                return
            again, self._again = self._again, []
            log.warning("%d dead letters to %s not delivered (Kafka unavailable); sending them again",
                        len(again), self.topic)
            for key, value in again:
                self._produce(key, value)
