"""Dead letters: list them with filters, show one, re-drive them to where they came from.

Every command works on a fixed range decided at its start: the end offsets of the dead-letter topic
are read first, and reading stops there, so letters written meanwhile (a re-driven letter that
failed again) wait for the next run instead of feeding this one.

Re-drive sends each letter's original bytes (and key) back to its original topic, marked
(:mod:`streams.redrive_marks`) with where the letter was and how many times it has been re-driven.
It reads from its consumer group's committed offsets and commits the end of its range once every
re-sent record is acknowledged: a letter is re-driven once per group. A letter whose bytes were
re-driven ``max_redrives`` times already is reported and not sent again. With ``wait_s``, re-drive
then follows the topic that long and reports each re-sent letter that came back as a new letter.
Landing once in the stores does not depend on any of this: re-processed records carry the same
deterministic event ids. A sealed letter's original is opened with the dead-letter key before it is
sent (:mod:`streams.deadletter`).
"""

from __future__ import annotations

import heapq
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from streams.avro_io import avro_deserializer
from streams.config import Settings
from streams.deadletter import letter_seal, open_original
from streams.errors import NotFound, SluiceError
from streams.redrive_marks import REDRIVEN_FROM, coordinates, marks_for, redrives_of

DEFAULT_MAX_REDRIVES = 3
STALL_S = 30.0  # no progress towards the end of the range for this long: stop with an error


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

    @property
    def sort_key(self) -> tuple[int, int, int]:
        return _ms(self.value["timestamp"]), self.partition, self.offset

    def summary(self, dlq_topic: str, safe: Callable[[str], str] = str) -> dict[str, Any]:
        """The letter as a JSON-ready dict, without its original bytes (``dlq show`` has those); its text
        fields through ``safe`` (redaction and escaping, for a terminal)."""
        v = self.value
        return {
            "at": coordinates(dlq_topic, self.partition, self.offset), "partition": self.partition,
            "offset": self.offset, "time": iso_ms(_ms(v["timestamp"])), "stage": safe(v["stage"]),
            "error_type": safe(v["error_type"]), "error": safe(v["error"]), "from": safe(origin_of(v)),
            "original_bytes": len(v["original"]), "redrives": redrives_of(v.get("headers")),
        }


def _ms(ts: Any) -> int:
    return int(ts.timestamp() * 1000) if isinstance(ts, datetime) else int(ts)


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def origin_of(value: dict[str, Any]) -> str:
    """Where a letter came from; an event never written (unroutable) has only the topic it was meant for."""
    if value["partition"] < 0:
        return str(value["topic"])
    return f"{value['topic']}/{value['partition']}@{value['offset']}"


def parse_time(text: str) -> int:
    """ISO-8601 (``2026-11-29T10:00``, ``2026-11-29``, ``...Z``) or epoch milliseconds, to epoch ms (UTC)."""
    if text.isdigit():
        return int(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError as exc:
        raise SluiceError(f"{text!r} is neither ISO-8601 nor epoch milliseconds") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


# -- the fixed range ---------------------------------------------------------------------------

@dataclass(frozen=True)
class LetterRange:
    """Per partition of the dead-letter topic: where reading starts and the end it stops at."""

    topic: str
    start: dict[int, int]
    end: dict[int, int]

    @property
    def size(self) -> int:
        """Offsets in the range (transaction markers take offsets too: letters may be fewer)."""
        return sum(max(0, self.end[p] - self.start[p]) for p in self.start)


def open_consumer(settings: Settings, group_id: str | None = None) -> Any:
    """A consumer of the dead-letter topic that reads committed letters only and commits nothing by itself."""
    from confluent_kafka import Consumer

    return Consumer({
        **settings.kafka.client_config(),
        "group.id": group_id or f"sluice-dlq-reader-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "isolation.level": "read_committed",
    })


def plan_range(consumer: Any, settings: Settings, from_group: bool = False) -> LetterRange:
    """The range to read, its end taken now: from the start of the topic, or (``from_group``) from the
    consumer group's committed offsets."""
    from confluent_kafka import TopicPartition

    topic = settings.topics.dlq
    meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
    if meta is None or meta.error is not None:
        raise NotFound(f"topic {topic} does not exist on {settings.kafka.bootstrap_servers}: create it with "
                       "`sluice topics create` (or set topics.dlq)")
    parts = sorted(meta.partitions)
    bounds = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in parts}
    start = {p: low for p, (low, _high) in bounds.items()}
    if from_group:
        for tp in consumer.committed([TopicPartition(topic, p) for p in parts], timeout=10):
            if tp.offset >= 0:
                start[tp.partition] = max(start[tp.partition], tp.offset)
    return LetterRange(topic, start, {p: high for p, (_low, high) in bounds.items()})


@dataclass
class ReadCounts:
    letters: int = 0
    undecodable: list[str] = field(default_factory=list)  # coordinates and reason of each


def read_range(consumer: Any, settings: Settings, rng: LetterRange, counts: ReadCounts | None = None,
               stall_s: float = STALL_S) -> Iterator[Letter]:
    """Every letter of ``rng`` in offset order per partition; stops at the range's end."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.serialization import MessageField, SerializationContext

    counts = counts if counts is not None else ReadCounts()
    ends = {p: e for p, e in rng.end.items() if e > rng.start[p]}
    if not ends:
        return
    deserialize = avro_deserializer(settings)
    ctx = SerializationContext(rng.topic, MessageField.VALUE)
    consumer.assign([TopicPartition(rng.topic, p, rng.start[p]) for p in ends])
    position = {p: rng.start[p] for p in ends}
    progressed = time.monotonic()
    while any(position[p] < ends[p] for p in ends):
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            p, offset = int(msg.partition() or 0), int(msg.offset() or 0)
            if p in ends and offset < ends[p]:
                try:
                    value = deserialize(msg.value(), ctx)
                except Exception as exc:  # noqa: BLE001 - one bad letter is counted, the rest still listed
                    counts.undecodable.append(f"{coordinates(rng.topic, p, offset)}: {exc}")
                else:
                    counts.letters += 1
                    yield Letter(p, offset, value)
        # The consumer's positions step over transaction markers, which are never returned as records.
        moved = False
        for tp in consumer.position([TopicPartition(rng.topic, p) for p in ends]):
            if tp.offset > position[tp.partition]:
                position[tp.partition] = tp.offset
                moved = True
        if moved:
            progressed = time.monotonic()
        elif time.monotonic() - progressed > stall_s:
            behind = {p: f"{position[p]} of {ends[p]}" for p in ends if position[p] < ends[p]}
            raise SluiceError(f"reading {rng.topic} stopped short of the end fixed at the start ({behind}) for "
                              f"{stall_s:g} s; check the brokers, then run the command again")


# -- ls ----------------------------------------------------------------------------------------

@dataclass
class Listing:
    topic: str
    letters: list[Letter]  # the newest ``limit`` matches, oldest first
    matched: int
    scanned: int
    undecodable: list[str]

    @property
    def more(self) -> int:
        """Matching letters older than the ones shown."""
        return self.matched - len(self.letters)


def list_letters(settings: Settings, where: LetterFilter, limit: int | None = None) -> list[Letter]:
    """The newest ``limit`` letters that match (all with None), oldest first."""
    return scan_letters(settings, where, limit).letters


def scan_letters(settings: Settings, where: LetterFilter, limit: int | None = None) -> Listing:
    consumer = open_consumer(settings)
    try:
        rng = plan_range(consumer, settings)
        counts = ReadCounts()
        newest: list[tuple[tuple[int, int, int], Letter]] = []  # a min-heap of the newest ``limit``
        kept: list[Letter] = []
        matched = 0
        for letter in read_range(consumer, settings, rng, counts):
            if not where.accepts(letter.value):
                continue
            matched += 1
            if limit is None:
                kept.append(letter)
            elif limit > 0:
                item = (letter.sort_key, letter)
                if len(newest) < limit:
                    heapq.heappush(newest, item)
                elif item[0] > newest[0][0]:
                    heapq.heapreplace(newest, item)
        letters = kept if limit is None else [letter for _key, letter in newest]
        letters.sort(key=lambda lt: lt.sort_key)
        return Listing(rng.topic, letters, matched, counts.letters, counts.undecodable)
    finally:
        consumer.close()


# -- redrive -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sent:
    letter: Letter
    to_topic: str


@dataclass
class RedriveReport:
    topic: str
    group: str
    dry_run: bool
    max_redrives: int
    scanned: int = 0
    matched: int = 0
    sent: list[Sent] = field(default_factory=list)
    given_up: list[Letter] = field(default_factory=list)  # re-driven max_redrives times already
    no_topic: list[Sent] = field(default_factory=list)  # their topic does not exist: not sent
    failed_again: list[tuple[Sent, Letter]] = field(default_factory=list)  # (what was sent, its new letter)
    waited_s: float = 0.0
    undecodable: list[str] = field(default_factory=list)


def redrive(
    settings: Settings, where: LetterFilter, group_id: str = "sluice-dlq-redrive", to_topic: str | None = None,
    dry_run: bool = False, progress: Callable[[Sent], None] | None = None,
    max_redrives: int = DEFAULT_MAX_REDRIVES, wait_s: float = 0.0,
) -> RedriveReport:
    """Re-send matching letters' original bytes; commit the group only after Kafka acknowledged them.

    Letters that do not match are passed over and committed too: a group re-drives each letter at
    most once. Use another ``group_id`` to look at everything again.
    """
    from confluent_kafka import Producer

    report = RedriveReport(settings.topics.dlq, group_id, dry_run, max_redrives)
    seal = letter_seal(settings.dead_letters)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    # A record for a topic that is gone fails after message.timeout.ms; fail within a minute, not five.
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True,
                         "message.timeout.ms": 60_000})
    consumer = open_consumer(settings, group_id)
    exists: dict[str, bool] = {}

    def topic_exists(topic: str) -> bool:
        if topic not in exists:
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            exists[topic] = meta is not None and meta.error is None
        return exists[topic]

    try:
        rng = plan_range(consumer, settings, from_group=True)
        counts = ReadCounts()
        unsent = 0
        for letter in read_range(consumer, settings, rng, counts):
            if not where.accepts(letter.value):
                continue
            report.matched += 1
            v = letter.value
            if redrives_of(v.get("headers")) >= max_redrives:
                report.given_up.append(letter)
                continue
            sent = Sent(letter, to_topic or v["topic"])
            if not topic_exists(sent.to_topic):
                report.no_topic.append(sent)
                continue
            report.sent.append(sent)
            if progress:
                progress(sent)
            if dry_run:
                continue
            _resend(producer, rng.topic, sent, seal, on_delivery)
            unsent += 1
            if unsent >= 500:
                _flush_or_fail(producer, errors, report)
                unsent = 0
        report.scanned = counts.letters
        report.undecodable = counts.undecodable
        if not dry_run:
            _flush_or_fail(producer, errors, report)
            _commit_end(consumer, rng)
    finally:
        consumer.close()
    if wait_s > 0 and report.sent and not dry_run:
        _follow(settings, rng, report, wait_s)
    return report


def _resend(producer: Any, dlq_topic: str, sent: Sent, seal: Any, on_delivery: Callable[[Any, Any], None]) -> None:
    """Produce a letter's original bytes (opened when sealed) to its topic, marked as re-driven."""
    letter, v = sent.letter, sent.letter.value
    try:
        original = open_original(v, seal)
    except SluiceError as exc:
        raise SluiceError(f"dead letter {coordinates(dlq_topic, letter.partition, letter.offset)}: {exc}; it and "
                          "the letters after it were not re-sent (nothing of this run was committed)") from None
    producer.produce(sent.to_topic, value=original, key=v["key"], on_delivery=on_delivery,
                     headers=marks_for(dlq_topic, letter.partition, letter.offset, redrives_of(v.get("headers"))))
    producer.poll(0)


def _flush_or_fail(producer: Any, errors: list[str], report: RedriveReport) -> None:
    if producer.flush(60) or errors:
        raise SluiceError(f"re-drive not acknowledged by Kafka ({'; '.join(errors[:3]) or 'flush timed out'}); "
                          f"{len(report.sent)} letter(s) were being re-sent and nothing of this run was committed: "
                          "run it again when Kafka is healthy (letters re-sent twice land once: same event ids)")


def _commit_end(consumer: Any, rng: LetterRange) -> None:
    from confluent_kafka import TopicPartition

    points = [TopicPartition(rng.topic, p, end) for p, end in rng.end.items() if end > rng.start[p]]
    if points:
        consumer.commit(offsets=points, asynchronous=False)


def _follow(settings: Settings, rng: LetterRange, report: RedriveReport, wait_s: float) -> None:
    """Read letters written after the range for ``wait_s`` (or until every re-sent letter came back):
    those marked as re-driven from a letter this run sent failed again."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.serialization import MessageField, SerializationContext

    waiting = {coordinates(rng.topic, s.letter.partition, s.letter.offset): s for s in report.sent}
    deserialize = avro_deserializer(settings)
    ctx = SerializationContext(rng.topic, MessageField.VALUE)
    consumer = open_consumer(settings)
    started = time.monotonic()
    try:
        consumer.assign([TopicPartition(rng.topic, p, end) for p, end in rng.end.items()])
        while waiting and time.monotonic() - started < wait_s:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            try:
                value = deserialize(msg.value(), ctx)
            except Exception:  # noqa: BLE001, S112 - not a letter of ours to report
                continue
            came_from = (value.get("headers") or {}).get(REDRIVEN_FROM)
            if came_from in waiting:
                report.failed_again.append((waiting.pop(came_from),
                                            Letter(int(msg.partition() or 0), int(msg.offset() or 0), value)))
    finally:
        consumer.close()
        report.waited_s = time.monotonic() - started
