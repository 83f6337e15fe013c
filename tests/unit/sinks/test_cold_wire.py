"""Pass-through: objects framed from the Kafka values' Avro bodies equal the re-encoded ones, byte for byte."""

from __future__ import annotations

import asyncio
import io
import json

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.testing.objectstore import MemoryObjectStore, corpus_events
from streams.config import Settings
from streams.contracts import parsed_schema, schema_text
from streams.sinks.base import SinkRecord
from streams.sinks.kafka_io import WireDecoder
from streams.sinks.objectstore.build import build_object, codec_available, sync_marker
from streams.sinks.objectstore.container import SYNC_INTERVAL
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.objectstore.wire import ContractBodies

KEY = "p/t/2025-11-29/trainer/logs.events.p+0+00000000000000000000.avro"
CONTRACT_ID = 7
OTHER_ID = 8


def body_of(event: dict) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed_schema("log_event"), event)
    return buf.getvalue()


def wire(event: dict, schema_id: int = CONTRACT_ID) -> bytes:
    return b"\0" + schema_id.to_bytes(4, "big") + body_of(event)


def other_schema(change) -> str:
    """The contract with one change (a field added, a logical type swapped...)."""
    schema = json.loads(schema_text("log_event"))
    change(schema)
    return json.dumps(schema)


def with_field(schema: dict) -> None:
    schema["fields"].append({"name": "extra", "type": ["null", "string"], "default": None})


def micros(schema: dict) -> None:
    schema["fields"][1]["type"]["logicalType"] = "timestamp-micros"


def registry(**schemas: str):
    by_id = {CONTRACT_ID: schema_text("log_event"), **{int(k[1:]): v for k, v in schemas.items()}}
    calls: list[int] = []

    def lookup(schema_id: int) -> str:
        calls.append(schema_id)
        return by_id[schema_id]

    return lookup, calls


@pytest.fixture
def events(corpus) -> list[dict]:
    # ~700 bytes each: 600 events make a dozen blocks, so block cutting is exercised too.
    return corpus_events(corpus, "p", "t", limit=600)


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
@pytest.mark.parametrize("level", [None, 1])
def test_pass_through_writes_the_bytes_of_the_re_encoding_builder(events, codec, level) -> None:
    if not codec_available(codec):
        pytest.skip(f"{codec} not installed here")
    offsets = list(range(len(events)))
    reference = build_object(KEY, "logs.events.p", 0, offsets, events, codec=codec, codec_level=level)
    passed = build_object(KEY, "logs.events.p", 0, offsets, events, codec=codec, codec_level=level,
                          bodies=[body_of(e) for e in events])
    mixed = build_object(KEY, "logs.events.p", 0, offsets, events, codec=codec, codec_level=level,
                         bodies=[None if i % 3 == 0 else body_of(e) for i, e in enumerate(events)])
    assert passed.body == reference.body
    assert mixed.body == reference.body
    assert passed.manifest_bytes() == reference.manifest_bytes()
    reader = fastavro.reader(io.BytesIO(passed.body))
    assert reader.metadata["avro.codec"] == codec
    assert [e["event_id"] for e in reader] == [e["event_id"] for e in events]
    assert sync_marker(KEY) in passed.body


def test_one_record_and_block_edges(events) -> None:
    """A single record, and objects that end just before, at and just after fastavro's first block cut."""
    total, cut = 0, 0
    while total < SYNC_INTERVAL:
        total += len(body_of(events[cut]))
        cut += 1
    for chunk in (events[:1], events[:cut - 1], events[:cut], events[:cut + 1]):
        offsets = list(range(len(chunk)))
        assert (build_object(KEY, "t", 0, offsets, chunk, bodies=[body_of(e) for e in chunk]).body
                == build_object(KEY, "t", 0, offsets, chunk).body)


def test_contract_bodies_pass_only_the_contracts_encoding(events) -> None:
    lookup, calls = registry(i8=other_schema(with_field), i9=other_schema(micros), i10=schema_text("log_event"))
    bodies = ContractBodies(lookup)
    event = events[0]
    assert bodies.body(wire(event), event) == body_of(event)
    assert bodies.body(wire(event, 10), event) == body_of(event), "another id with the same schema text"
    assert bodies.body(wire(event, OTHER_ID), event) is None, "another schema version: re-encoded"
    assert bodies.body(wire(event, 9), event) is None, "timestamp-micros has the same bytes but not the same meaning"
    assert bodies.body(b"", event) is None
    assert bodies.body(b"\x01" + wire(event)[1:], event) is None, "no Confluent magic byte"
    for e in events[:50]:
        bodies.body(wire(e), e)
    assert sorted(calls) == [CONTRACT_ID, OTHER_ID, 9, 10], "each id is looked up once"


def test_a_body_that_is_not_the_canonical_encoding_is_not_passed(events) -> None:
    lookup, _ = registry()
    event = events[0]
    assert ContractBodies(lookup).body(wire(events[1]), event) is None


def test_registry_down_re_encodes_and_asks_again_later(events) -> None:
    now = [0.0]
    calls = []

    def down(schema_id: int) -> str:
        calls.append(schema_id)
        raise ConnectionError("registry unreachable")

    bodies = ContractBodies(down, clock=lambda: now[0], retry_after_s=60)
    event = events[0]
    assert bodies.body(wire(event), event) is None
    assert bodies.body(wire(event), event) is None
    assert calls == [CONTRACT_ID], "not asked again on every record"
    bodies.lookup = registry()[0]
    now[0] = 61.0
    assert bodies.body(wire(event), event) == body_of(event)


def run_sink(records: list[SinkRecord], lookup) -> dict[str, bytes]:
    conf = ColdSinkSettings(rotate_records=200, lifecycle_enabled=False, idle_flush_s=10**6)
    store = MemoryObjectStore(conf)
    sink = ColdSink(Settings(), conf, store=store, bodies=ContractBodies(lookup))

    async def go() -> None:
        await sink.start()
        for rec in records:
            sink.add(rec)
        sink.begin_drain()
        while sink.buffered():
            await sink.flush(0.0)

    asyncio.run(go())
    return {key: body for (_bucket, key), body in store.objects.items()}


def test_sink_objects_are_the_same_with_and_without_pass_through(events) -> None:
    def records(raw) -> list[SinkRecord]:
        return [SinkRecord("logs.events.p", 0, i, None, dict(e), raw(i, e), "p", 700) for i, e in enumerate(events)]

    lookup, _ = registry(i8=other_schema(with_field))
    reencoded = run_sink(records(lambda i, e: b""), lookup)
    passed = run_sink(records(lambda i, e: wire(e)), lookup)
    mixed = run_sink(records(lambda i, e: wire(e, OTHER_ID if i % 2 else CONTRACT_ID)), lookup)
    assert len([k for k in passed if k.endswith(".avro")]) > 3
    assert passed == reencoded
    assert mixed == reencoded


def test_wire_decoder_returns_what_the_confluent_deserializer_returns(events) -> None:
    class Registry:
        """Just enough of SchemaRegistryClient for both decoders."""

        def __init__(self) -> None:
            self.lookups = 0

        def get_schema(self, schema_id: int, subject_name: str | None = None, fmt: str | None = None) -> Schema:
            self.lookups += 1
            return Schema(schema_text("log_event"), "AVRO")

        def get_associations_by_resource_name(self, **_kwargs: object) -> list:
            return []

    reg = Registry()
    confluent = AvroDeserializer(reg)
    decode = WireDecoder(reg, confluent)
    ctx = SerializationContext("logs.events.p", MessageField.VALUE)
    raws = [wire(e) for e in events[:100]]
    mine = [decode(r, ctx) for r in raws]
    assert reg.lookups == 1
    assert mine == [confluent(r, ctx) for r in raws]
    with pytest.raises(Exception, match="framing"):  # not wire format: confluent's own error, as before
        decode(b"\x07abc", ctx)
