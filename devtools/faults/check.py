"""What the stores and the DLQ hold after a fault run, held against what the input must give.

- Elasticsearch: every expected event id is a document of ``sluice-logs-<project>-*`` whose message is the
  expected message (a partial traceback indexed under the right id, or a fragment under another id,
  is a split); every metric point id is a document of ``sluice-metrics-<project>-*``.
- Cold: every expected event id is in exactly one record of the Avro objects under ``<project>/``
  (read with stock fastavro), with the expected message.
- DLQ: the originals it holds are exactly the values made bad on purpose.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from devtools.faults.burst import Expected
from streams.config import Settings


@dataclass
class Load:
    """What a run held: lines in while the input lasted, events out until everything was stored."""

    lines: int = 0
    events: int = 0
    feed_s: float = 0.0  # from the first unit produced to the last
    out_s: float = 0.0  # from the first unit produced until drained (or the drain gave up)
    lag_at_end: dict[str, int] = field(default_factory=dict)  # records not committed per stage, at the end

    def describe(self) -> str:
        if not self.feed_s:
            return "none"
        lag = ", ".join(f"{k} {v}" for k, v in self.lag_at_end.items()) or "?"
        return (f"{self.lines / self.feed_s:,.0f} lines/s in ({self.lines} lines in {self.feed_s:.0f} s); "
                f"{self.events / max(self.out_s, 1e-9):,.0f} events/s out ({self.events} events stored in "
                f"{self.out_s:.0f} s); lag at the end: {lag}")


@dataclass
class Figures:
    faults: Counter = field(default_factory=Counter)
    events_checked: int = 0
    multiline_checked: int = 0
    metrics_checked: int = 0
    lines_in: int = 0
    lost_es: int = 0
    lost_cold: int = 0
    lost_metrics: int = 0
    duplicated_cold: int = 0  # expected ids held more than once in cold objects (copies beyond the first)
    # ... of which the cold sink made itself (more copies in cold than records on the events topic);
    # the rest were re-emitted by the assemble stage (one id on several events-topic records).
    duplicated_by_cold_sink: int = 0
    reemitted_events: int = 0  # events-topic records beyond the first per event id
    split: int = 0  # expected events stored with another message (ES or cold)
    fragments: int = 0  # ids in the stores that no expected event has
    cold_objects: int = 0
    dlq_letters: int = 0
    dlq_distinct: int = 0
    dlq_unexpected: int = 0  # letters whose original was a good input
    dlq_missing: int = 0  # bad inputs with no letter
    unplanned_exits: Counter = field(default_factory=Counter)
    refused_stops: Counter = field(default_factory=Counter)  # stops on refused credentials, as designed
    load: Load = field(default_factory=Load)
    fuzzed: int = 0  # hostile records fed beside the corpus (each must come out as exactly one dead letter)
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost_es or self.lost_cold or self.lost_metrics or self.duplicated_cold or self.split
                    or self.fragments or self.dlq_unexpected or self.dlq_missing)

    def merge(self, other: Figures) -> None:
        for name, value in vars(other).items():
            if isinstance(value, Counter):
                getattr(self, name).update(value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                setattr(self, name, getattr(self, name) + value)
            elif isinstance(value, list):
                getattr(self, name).extend(value[: max(0, 10 - len(getattr(self, name)))])

    def example(self, text: str, first: bool = False) -> None:
        """Keep ten; losses, splits and fragments go before duplicates (which are many and alike)."""
        if first:
            self.examples.insert(0, text)
            del self.examples[10:]
        elif len(self.examples) < 10:
            self.examples.append(text)

    def table(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"
        exits = ", ".join(f"{k} {v}" for k, v in sorted(self.unplanned_exits.items())) or "none"
        refused = ", ".join(f"{k} {v}" for k, v in sorted(self.refused_stops.items())) or "none"
        rows = [
            ("load held", self.load.describe()),
            ("faults injected", f"{sum(self.faults.values())} ({faults})"),
            ("inputs fuzzed", self.fuzzed),
            ("lines in", self.lines_in),
            ("events checked", f"{self.events_checked} ({self.multiline_checked} multiline)"),
            ("metric points checked", self.metrics_checked),
            ("lost (Elasticsearch)", self.lost_es),
            ("lost (cold)", self.lost_cold),
            ("lost (metric points)", self.lost_metrics),
            ("duplicated (cold)", f"{self.duplicated_cold} ({self.duplicated_by_cold_sink} by the cold sink itself, "
                                  f"the rest re-emitted upstream)"),
            ("re-emitted on events topic", self.reemitted_events),
            ("split (wrong message)", self.split),
            ("fragments (unexpected ids)", self.fragments),
            ("cold objects read", self.cold_objects),
            ("dead letters", f"{self.dlq_letters} letters, {self.dlq_distinct} distinct originals: "
                             f"{self.dlq_letters - self.dlq_unexpected} expected (bad inputs), {self.dlq_unexpected} "
                             f"unexpected (good inputs); {self.dlq_missing} bad inputs without a letter"),
            ("unplanned worker exits", exits),
            ("stops on refused credentials", refused),
            ("wall time", f"{self.seconds:.0f} s"),
        ]
        width = max(len(r[0]) for r in rows)
        out = [f"{name:<{width}}  {value}" for name, value in rows]
        out += [f"  e.g. {e}" for e in self.examples[:10]]
        return "\n".join(out)


def es_documents(settings: Settings, index: str, fields: list[str]) -> dict[str, dict[str, Any]]:
    from elasticsearch import helpers

    from streams.clients import es_client

    es = es_client(settings.elasticsearch)
    es.indices.refresh(index=index, ignore_unavailable=True, allow_no_indices=True)
    docs: dict[str, dict[str, Any]] = {}
    for hit in helpers.scan(es, index=index, query={"query": {"match_all": {}}}, _source=fields, size=2000,
                            ignore_unavailable=True, allow_no_indices=True):
        docs[hit["_id"]] = hit.get("_source") or {}
    return docs


def cold_events(settings: Settings, project: str) -> tuple[int, list[dict[str, Any]]]:
    """(objects, every event record) under ``<project>/`` in the default bucket."""
    import fastavro

    from streams.clients import s3_client

    s3 = s3_client(settings.object_store)
    bucket = settings.object_store.default_bucket
    objects, events = 0, []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{project}/"):
        for obj in page.get("Contents", []):
            if not obj["Key"].endswith(".avro"):
                continue
            body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
            objects += 1
            records: Any = fastavro.reader(io.BytesIO(body))
            events += [{"event_id": r["event_id"], "message": r["message"], "key": obj["Key"],
                        "host": (r.get("source") or {}).get("host"), "file": (r.get("source") or {}).get("file"),
                        "raw": r.get("raw")} for r in records]
    return objects, events


def dead_letters(settings: Settings) -> list[dict[str, Any]]:
    """Every letter on the run's DLQ topic, from the first offset to the current end."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_deserializer

    decode = avro_deserializer(settings)
    topic = settings.topics.dlq
    ctx = SerializationContext(topic, MessageField.VALUE)
    return [decode(value, ctx) for _key, value in read_to_end(settings, topic)]


def read_to_end(settings: Settings, topic: str) -> list[tuple[bytes | None, bytes]]:
    """(key, value) of every committed record of ``topic``, from the first offset to the current end."""
    return [(msg.key(), msg.value() or b"") for msg in read_messages(settings, topic)]


def read_messages(settings: Settings, topic: str) -> list[Any]:
    """Every committed record of ``topic`` (what a read_committed sink sees; an aborted transaction's
    records are no output), as confluent-kafka messages."""
    from confluent_kafka import Consumer, TopicPartition

    from streams.kafka_read import read_to_end as read_partitions

    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"{topic}-check",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        bounds = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in parts}
        return list(read_partitions(consumer, topic, bounds, 60.0))
    finally:
        consumer.close()


def describe_reemissions(settings: Settings, topic: str, ids: set[str]) -> list[str]:
    """Where each copy of a re-emitted event sits: its events-topic partition and offset, when Kafka took it,
    and the raw records it was assembled from (to find the turns that wrote it in the worker logs)."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_deserializer

    decode = avro_deserializer(settings)
    ctx = SerializationContext(topic, MessageField.VALUE)
    out = []
    for msg in read_messages(settings, topic):
        key = (msg.key() or b"").decode()
        if key in ids:
            event = decode(msg.value(), ctx)
            raw = event.get("raw") or {}
            out.append(f"{key} at {topic}[{msg.partition()}]@{msg.offset()} ts {msg.timestamp()[1]}: raw "
                       f"[{raw.get('partition')}] {raw.get('first_offset')}-{raw.get('last_offset')}, "
                       f"{event.get('line_count')} lines")
    return sorted(out)


# The host of the files a node shipper ships in a fault run (devtools/faults/ship.py checks those).
SHIPPED_HOST = "fault-ship-node"


def _shipped(doc: dict[str, Any]) -> bool:
    return (doc.get("source") or {}).get("host") == SHIPPED_HOST


def check(settings: Settings, expected: Expected) -> Figures:
    fig = Figures(events_checked=len(expected.events), multiline_checked=len(expected.multiline),
                  metrics_checked=len(expected.metrics), lines_in=expected.lines)
    check_elasticsearch(settings, expected, fig)
    check_cold(settings, expected, fig)
    check_dlq(settings, expected, fig)
    return fig


def check_elasticsearch(settings: Settings, expected: Expected, fig: Figures) -> None:
    project = settings.routing.default_project
    indexed = es_documents(settings, f"sluice-logs-{project}-*", ["message", "source.host"])
    indexed = {eid: d for eid, d in indexed.items() if not _shipped(d)}  # checked by message (faults/ship.py)
    for eid, message in expected.events.items():
        doc = indexed.get(eid)
        if doc is None:
            fig.lost_es += 1
            fig.example(f"not in Elasticsearch: {eid} {message[:80]!r}", first=True)
        elif doc.get("message") != message:
            fig.split += 1
            fig.example(f"Elasticsearch holds another message under {eid}: {str(doc.get('message'))[:200]!r}, "
                        f"expected {message[:200]!r}", first=True)
    for eid in indexed.keys() - expected.events.keys():
        fig.fragments += 1
        fig.example(f"unexpected Elasticsearch id {eid}: {str(indexed[eid].get('message'))[:200]!r}", first=True)

    points = es_documents(settings, f"sluice-metrics-{project}-*", ["raw", "metrics", "source.host"])
    points = {eid: d for eid, d in points.items() if not _shipped(d)}
    fig.lost_metrics = len(expected.metrics - points.keys())
    for eid in points.keys() - expected.metrics:
        fig.fragments += 1
        fig.example(f"unexpected metric point id {eid}: {str(points[eid])[:200]}", first=True)


def check_cold(settings: Settings, expected: Expected, fig: Figures) -> None:
    project = settings.routing.default_project
    fig.cold_objects, records = cold_events(settings, project)
    records = [r for r in records if r.get("host") != SHIPPED_HOST]
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_id.setdefault(r["event_id"], []).append(r)
    events_topic = settings.topics.events_topic(project)
    on_topic = Counter(key.decode() for key, _v in read_to_end(settings, events_topic) if key)
    fig.reemitted_events = sum(n - 1 for n in on_topic.values())
    again = {eid for eid, n in on_topic.items() if n > 1}
    if again:
        for where in describe_reemissions(settings, events_topic, set(sorted(again)[:5])):
            fig.example(f"re-emitted: {where}", first=True)
    for eid, message in expected.events.items():
        copies = by_id.get(eid, [])
        if not copies:
            fig.lost_cold += 1
            fig.example(f"not in cold objects: {eid} {message[:80]!r}", first=True)
            continue
        if len(copies) > 1:
            fig.duplicated_cold += len(copies) - 1
            fig.duplicated_by_cold_sink += max(0, len(copies) - on_topic.get(eid, 0))
            fig.example(f"{len(copies)} copies of {eid} in cold objects {sorted(r['key'] for r in copies)[:3]}")
        wrong = [r for r in copies if r["message"] != message]  # every copy must be whole
        if wrong:
            fig.split += 1
            fig.example(f"cold holds another message under {eid} in {wrong[0]['key']}: "
                        f"{wrong[0]['message'][:200]!r}, expected {message[:200]!r}", first=True)
    for eid in by_id.keys() - expected.events.keys():
        fig.fragments += 1
        r = by_id[eid][0]
        fig.example(f"unexpected cold id {eid} in {r['key']}: {r['message'][:200]!r}", first=True)


def check_dlq(settings: Settings, expected: Expected, fig: Figures) -> None:
    letters = dead_letters(settings)
    originals = Counter(bytes(letter["original"]) for letter in letters)
    fig.dlq_letters = len(letters)
    fig.dlq_distinct = len(originals)
    for letter in letters:
        if bytes(letter["original"]) not in expected.bad_values:
            fig.dlq_unexpected += 1
            fig.example(f"dead letter of a good input: stage {letter['stage']}, {letter['error_type']}: "
                        f"{letter['error'][:120]}", first=True)
    fig.dlq_missing = len(expected.bad_values - originals.keys())
