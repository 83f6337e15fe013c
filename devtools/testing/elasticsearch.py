"""Helpers for tests and benchmarks of the hot tier: real corpus events onto real Kafka topics.

Shared by the integration tests and ``tests/perf/hot_sink_bench.py`` so that they build their input the
same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from streams.assemble.pipeline import parse_files
from streams.config import ProjectRoute, RoutingSettings, Settings
from streams.sinks.elasticsearch.request import is_metric


def corpus_events(paths: Iterable[str | Path], project: str, task_types: tuple[str | None, ...] = (None,),
                  include_metrics: bool = True) -> Iterator[dict[str, Any]]:
    """Real LogEvents / MetricPoints from corpus files, given to ``project``.

    ``parse_files`` fakes Kafka coordinates per file (topic "file", offset = line number), so ids
    repeat across files: they are made unique with the project and the file name. ``task_types``
    are handed out round-robin per file, to spread events over several daily indices.
    """
    for n, path in enumerate(sorted(Path(p) for p in paths)):
        task_type = task_types[n % len(task_types)]
        for value in parse_files([path], include_metrics=include_metrics):
            value["project"] = project
            value["event_id"] = f"{project}/{path.stem}/{value['event_id']}"
            if task_type is not None:
                value["task_type"] = task_type
            yield value


def settings_for(stack: Settings, project: str, dlq: str, metrics: str) -> Settings:
    """A copy of ``stack`` where ``project`` is the only project and dlq/metrics are the given topics."""
    routing = RoutingSettings(default_project=project, projects={project: ProjectRoute()})
    topics = stack.topics.model_copy(update={"dlq": dlq, "metrics": metrics})
    return stack.model_copy(update={"routing": routing, "topics": topics})


def prepare_topics(settings: Settings) -> None:
    """Create the topics of ``settings`` that are missing, and register their contracts."""
    from streams.contracts import register_all
    from streams.topics import create_topics

    create_topics(settings)
    register_all(settings)


class EventProducer:
    """Avro-serialises LogEvents and MetricPoints to their topics; returns what it sent."""

    def __init__(self, settings: Settings, linger_ms: int = 5) -> None:
        from confluent_kafka import Producer

        from streams.avro_io import avro_serializer

        self.settings = settings
        self._events = avro_serializer(settings, "log_event")
        self._metrics = avro_serializer(settings, "metric_point")
        self.producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True,
                                  "linger.ms": linger_ms, "queue.buffering.max.messages": 1_000_000})

    def topic_of(self, value: dict[str, Any]) -> str:
        if is_metric(value):
            return self.settings.topics.metrics
        return self.settings.topics.events_topic(value["project"])

    def send(self, value: dict[str, Any]) -> bytes:
        from confluent_kafka.serialization import MessageField, SerializationContext

        topic = self.topic_of(value)
        serialize = self._metrics if is_metric(value) else self._events
        raw: bytes = serialize(value, SerializationContext(topic, MessageField.VALUE))
        while True:
            try:
                self.producer.produce(topic, key=value["event_id"].encode(), value=raw)
                break
            except BufferError:
                self.producer.poll(0.05)
        self.producer.poll(0)
        return raw

    def send_all(self, values: Iterable[dict[str, Any]]) -> dict[str, bytes]:
        """event_id -> the record value as written."""
        out = {v["event_id"]: self.send(v) for v in values}
        self.flush()
        return out

    def flush(self) -> None:
        self.producer.flush(30)


def committed_to_end(settings: Settings, group_id: str, topics: list[str]) -> bool:
    """Has ``group_id`` committed every partition of ``topics`` up to its end?"""
    return group_lag(settings, group_id, topics) == 0


def group_lag(settings: Settings, group_id: str, topics: list[str]) -> int:
    """Records of ``topics`` past what ``group_id`` has committed (a partition it never committed: all of it).
    Transaction markers count as records here; read it as "about"."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**settings.kafka.client_config(), "group.id": group_id, "enable.auto.commit": False})
    try:
        parts = []
        for topic in topics:
            meta = consumer.list_topics(topic, timeout=10).topics[topic]
            parts += [TopicPartition(topic, p) for p in meta.partitions]
        behind = 0
        for tp in consumer.committed(parts, timeout=10):
            low, high = consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=10)
            behind += max(0, high - (tp.offset if tp.offset >= 0 else low))
        return behind
    finally:
        consumer.close()


def wait_for(predicate: Any, timeout_s: float, interval_s: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return False


def read_alerts(settings: Settings, until: Callable[[list[dict[str, Any]]], bool],
                timeout_s: float = 60) -> list[dict[str, Any]]:
    """The alerts topic from its start, read until ``until(alerts)`` or the timeout; each alert is keyed
    by its id (what keeps the compacted topic at one record per alert)."""
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_deserializer

    deserialize = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([settings.topics.alerts])
    alerts: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and not until(alerts):
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            alert = deserialize(msg.value(), SerializationContext(settings.topics.alerts, MessageField.VALUE))
            if msg.key() != alert["alert_id"].encode():
                raise AssertionError(f"alert {alert['alert_id']} keyed {msg.key()!r}, not by its id")
            alerts.append(alert)
    finally:
        consumer.close()
    return alerts
