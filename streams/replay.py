"""`sluice replay`: re-run a range of history into Elasticsearch, the object store, or a topic.

The replay reads with its own consumer, by explicit assignment: it joins no consumer group and
commits nothing to Kafka, so the live workers are not disturbed. Events go through the same sinks and
the same shared rate controller as the live stages; raw lines go through the same assemble core
first. Progress (the next offset per partition that every earlier record was acknowledged for) is
saved to a state file after each acknowledged write, so an interrupted replay resumes where it
stopped. Landing once does not depend on that: documents and objects carry deterministic ids.
Timestamps are turned into offsets by the broker (``offsets_for_times``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams.config import Settings
from streams.errors import NotFound, SluiceError
from streams.sinks.base import SinkRecord

TP = tuple[str, int]


@dataclass(frozen=True)
class Bound:
    """An offset, or a time in epoch ms (resolved by the broker)."""

    offset: int | None = None
    time_ms: int | None = None

    @staticmethod
    def parse(text: str | None) -> Bound | None:
        if text is None:
            return None
        if text.startswith("@"):
            return Bound(offset=int(text[1:]))
        from streams.dlq import parse_time

        return Bound(time_ms=parse_time(text))


@dataclass
class ReplayPlan:
    topic: str
    start: dict[int, int]  # partition -> first offset
    end: dict[int, int]  # partition -> offset after the last one

    @property
    def total(self) -> int:
        return sum(max(0, self.end[p] - self.start[p]) for p in self.start)


@dataclass
class ReplayFilter:
    project: str | None = None
    task_id: str | None = None

    def accepts(self, value: dict[str, Any]) -> bool:
        labels = value.get("labels") or {}
        project = value.get("project") or labels.get("project")
        task = value.get("task_id") or labels.get("task_id")
        return (self.project is None or project == self.project) and (self.task_id is None or task == self.task_id)


def plan_range(settings: Settings, topic: str, start: Bound | None, end: Bound | None,
               partitions: list[int] | None = None) -> ReplayPlan:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**settings.kafka.client_config(), "group.id": "sluice-replay-planner"})
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            raise NotFound(f"topic {topic} does not exist on {settings.kafka.bootstrap_servers}: `sluice topics list` "
                           "shows the topics there")
        parts = partitions if partitions is not None else sorted(meta.partitions)
        low_high = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in parts}

        def resolve(bound: Bound | None, default: Callable[[int], int]) -> dict[int, int]:
            if bound is None:
                return {p: default(p) for p in parts}
            if bound.offset is not None:
                return {p: min(max(bound.offset, low_high[p][0]), low_high[p][1]) for p in parts}
            when = int(bound.time_ms or 0)
            found = consumer.offsets_for_times([TopicPartition(topic, p, when) for p in parts], timeout=10)
            # -1: no record at or after that time: the partition's end.
            return {tp.partition: (tp.offset if tp.offset >= 0 else low_high[tp.partition][1]) for tp in found}

        first = resolve(start, lambda p: low_high[p][0])
        after = resolve(end, lambda p: low_high[p][1])
    finally:
        consumer.close()
    return ReplayPlan(topic, first, after)


@dataclass
class ReplayState:
    """Saved progress: the next offset to replay per partition."""

    path: Path
    next_offset: dict[int, int] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> ReplayState:
        if not path.is_file():
            return cls(path)
        data = json.loads(path.read_text())
        return cls(path, {int(k): int(v) for k, v in data["next_offset"].items()})

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"next_offset": self.next_offset}))
        tmp.replace(self.path)


class RangeSource:
    """A RecordSource over fixed offset ranges, decoding Avro; commits go to the state file."""

    # The runner pauses a replay as a whole: it reads one topic's range once, with no quiet partition
    # to keep flowing beside a busy one.
    pauses_partitions = False

    def __init__(self, settings: Settings, plan: ReplayPlan, state: ReplayState, where: ReplayFilter,
                 progress: Callable[[int], None] | None = None) -> None:
        from confluent_kafka import Consumer, TopicPartition
        from confluent_kafka.schema_registry.avro import AvroDeserializer

        from streams.clients import registry_client

        self.settings = settings
        self.plan = plan
        self.state = state
        self.where = where
        self.progress = progress
        self._deserialize = AvroDeserializer(registry_client(settings.registry))
        self.consumer = Consumer({**settings.kafka.client_config(), "group.id": f"sluice-replay-{os.getpid()}",
                                  "enable.auto.commit": False, "enable.auto.offset.store": False})
        self.position = {p: state.next_offset.get(p, plan.start[p]) for p in plan.start}
        assign = [TopicPartition(plan.topic, p, off) for p, off in self.position.items() if off < plan.end[p]]
        self.consumer.assign(assign)
        self.read = 0

    def done_reading(self) -> bool:
        return all(self.position[p] >= self.plan.end[p] for p in self.position)

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        from confluent_kafka import TopicPartition
        from confluent_kafka.serialization import MessageField, SerializationContext

        out: list[SinkRecord] = []
        if self.done_reading():
            return out
        finished = []
        for msg in self.consumer.consume(max_records, timeout_s):
            if msg.error():
                continue
            partition, offset = int(msg.partition() or 0), int(msg.offset() or 0)
            if offset >= self.plan.end[partition]:
                finished.append(TopicPartition(self.plan.topic, partition))
                continue
            self.position[partition] = offset + 1
            self.read += 1
            raw = msg.value() or b""
            try:
                value = self._deserialize(raw, SerializationContext(self.plan.topic, MessageField.VALUE))
                error = None
            except Exception as exc:  # noqa: BLE001 - a bad record becomes a dead letter, as live
                value, error = {}, (f"replay: cannot decode {self.plan.topic} [{partition}] @ {offset}: {exc}",
                                    "undecodable")
            if error is None and not self.where.accepts(value):
                value, error = {}, None
                out.append(SinkRecord(self.plan.topic, partition, offset, msg.key(), {}, raw, "", len(raw),
                                      decode_error=("filtered", "skip")))
                continue
            project = value.get("project") or self.settings.routing.default_project
            out.append(SinkRecord(self.plan.topic, partition, offset, msg.key(), value, raw, project, len(raw),
                                  decode_error=error))
            if self.position[partition] >= self.plan.end[partition]:
                finished.append(TopicPartition(self.plan.topic, partition))
        # The consumer's own positions step over what is never returned as a record: transaction
        # markers (the events topics are written in transactions) and aborted records.
        for tp in self.consumer.position(self.consumer.assignment()):
            p = int(tp.partition)
            if tp.offset > self.position.get(p, tp.offset):
                self.position[p] = min(int(tp.offset), self.plan.end[p])
                if self.position[p] >= self.plan.end[p]:
                    finished.append(TopicPartition(self.plan.topic, p))
        if finished:
            self.consumer.pause(finished)
        if self.progress and out:
            self.progress(len(out))
        return out

    def positions(self) -> dict[TP, int]:
        """The next offset to read per partition (past transaction markers)."""
        return {(self.plan.topic, p): off for p, off in self.position.items()}

    def lag(self) -> dict[TP, int]:
        """Offsets of the range still to read, per partition."""
        return {(self.plan.topic, p): max(0, self.plan.end[p] - off) for p, off in self.position.items()}

    def newest_read_ms(self) -> dict[TP, int]:
        """Empty: a replay reads old records on purpose; their age is no lag."""
        return {}

    def commit(self, points: dict[TP, int]) -> None:
        for (_topic, partition), offset in points.items():
            self.state.next_offset[partition] = offset
        self.state.save()

    def pause(self, partitions: list[TP]) -> None:
        from confluent_kafka import TopicPartition

        self.consumer.pause([TopicPartition(t, p) for t, p in partitions])

    def resume(self, partitions: list[TP]) -> None:
        from confluent_kafka import TopicPartition

        self.consumer.resume([TopicPartition(t, p) for t, p in partitions])

    def pause_all(self) -> None:
        self.consumer.pause(self.consumer.assignment())

    def resume_all(self) -> None:
        self.consumer.resume(self.consumer.assignment())

    def take_revoked(self) -> list[TP]:
        return []

    def close(self) -> None:
        self.consumer.close()


class FilteringDeadLetters:
    """Records the filter passed over are acknowledged without a dead letter; the rest go to the DLQ."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def send(self, record: SinkRecord, stage: str, reason: str, error_type: str) -> None:
        if error_type != "skip":
            self.inner.send(record, stage, reason, error_type)

    def flush(self) -> None:
        self.inner.flush()


async def replay_into_store(settings: Settings, plan: ReplayPlan, into: str, state: ReplayState,
                            where: ReplayFilter, rate: float | None,
                            progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Replay event or metric records of ``plan`` into ``es`` or ``s3``; returns the runner's stats."""
    from streams.sinks.base import SinkRunner
    from streams.sinks.kafka_io import KafkaDeadLetters
    from streams.sinks.ratecontrol import Capacity, RateController

    source = RangeSource(settings, plan, state, where, progress)
    dead = FilteringDeadLetters(KafkaDeadLetters(settings))
    runner: Any
    if into == "es":
        from streams.sinks.elasticsearch.sink import HotSink

        hot = settings.hot
        capacity = Capacity(rate / hot.utilisation, hot.capacity_bytes_per_s) if rate else hot.capacity()
        controller = RateController(capacity, window_s=hot.window_s, utilisation=hot.utilisation,
                                    carry_windows=hot.carry_windows)
        runner = SinkRunner(source, HotSink(settings.elasticsearch, settings.routing, hot), controller, dead,
                            "replay", ack_cap=True)
    elif into == "s3":
        from streams.sinks.objectstore.sink import ColdSink
        from streams.workers.cold import ColdSinkRunner, TopicProjectSource

        cold = settings.cold
        sink = ColdSink(settings, cold)
        capacity = Capacity(rate, cold.record_bytes_per_s) if rate else Capacity(cold.records_per_s,
                                                                                  cold.record_bytes_per_s)
        runner = ColdSinkRunner(TopicProjectSource(source, sink, settings.topics.events_prefix), sink,
                                RateController(capacity), dead, "replay",
                                max_buffered_bytes=cold.max_buffered_bytes)
    else:
        raise SluiceError(f"--into {into}: choose es, s3 or topic")
    await runner.sink.start()
    try:
        while not source.done_reading() or runner.tracker.total_in_flight():
            await runner.step(poll_timeout_s=0.2)
            if source.done_reading() and not runner._queued():
                await runner.drain()
                break
    finally:
        await runner.sink.close()
        source.close()
    return dict(runner.stats)


def replay_into_topic(settings: Settings, plan: ReplayPlan, target: str, state: ReplayState,
                      where: ReplayFilter, rate: float | None, progress: Callable[[int], None] | None = None) -> int:
    """Copy the range's records (value, key, headers) to ``target``, acknowledged before progress is saved."""
    from confluent_kafka import Producer

    if target == plan.topic:
        raise SluiceError(f"--target {target} is the topic being replayed; that would loop")
    source = RangeSource(settings, plan, state, where)
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 10})
    sent = 0
    started = time.monotonic()
    try:
        while not source.done_reading():
            batch = source.poll_batch(500, 0.5)
            for rec in batch:
                if rec.decode_error and rec.decode_error[1] == "skip":
                    continue
                producer.produce(target, value=rec.raw, key=rec.key)
                sent += 1
                producer.poll(0)
                if rate:
                    ahead = sent / rate - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
            if producer.flush(30):
                raise SluiceError(f"copy to {target} not acknowledged; progress kept at {state.next_offset}")
            source.commit({(plan.topic, p): off for p, off in source.position.items()})
            if progress and batch:
                progress(len(batch))
    finally:
        source.close()
    return sent


def run_replay(settings: Settings, plan: ReplayPlan, into: str, state: ReplayState, where: ReplayFilter,
               rate: float | None, target: str | None = None,
               progress: Callable[[int], None] | None = None) -> dict[str, int]:
    if into == "topic":
        if not target:
            raise SluiceError("--into topic needs --target TOPIC")
        return {"copied": replay_into_topic(settings, plan, target, state, where, rate, progress)}
    return asyncio.run(replay_into_store(settings, plan, into, state, where, rate, progress))
