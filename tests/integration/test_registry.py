"""The real schema registry (Confluent REST API): contracts register, round-trip, and evolve safely."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from streams.avro_io import avro_deserializer, avro_serializer
from streams.config import Settings
from streams.contracts import check_all, register_all, schema_text
from streams.rawbatch import batches_from_file, default_source


def test_register_all_is_idempotent(stack: Settings) -> None:
    first = register_all(stack)
    second = register_all(stack)
    assert [r.schema_id for r in first] == [r.schema_id for r in second]
    assert {r.subject for r in first} >= {f"{stack.topics.raw}-value", f"{stack.topics.dlq}-value"}
    assert all(c.compatible for c in check_all(stack))


def test_raw_batch_roundtrip_in_wire_format(stack: Settings, corpus) -> None:
    register_all(stack)
    path = corpus / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    batch = next(batches_from_file(path, default_source(path), {"project": "default"}, 1000, 1_700_000_000_000))
    ctx = SerializationContext(stack.topics.raw, MessageField.VALUE)
    data = avro_serializer(stack, "raw_batch")(batch, ctx)
    assert data[0] == 0, "Confluent wire format starts with magic byte 0"
    schema_id = int.from_bytes(data[1:5], "big")
    registered = SchemaRegistryClient({"url": stack.registry.url}).get_schema(schema_id)
    assert json.loads(registered.schema_str)["name"] == "RawBatch"
    back = avro_deserializer(stack)(data, ctx)
    assert [line["line"] for line in back["lines"]] == [line["line"] for line in batch["lines"]]
    assert len(back["lines"]) == 22


def _record(fields: list[dict]) -> str:
    return json.dumps({"type": "record", "name": "Probe", "namespace": "sluice.test", "fields": fields})


def test_registry_rejects_backward_incompatible_change(stack: Settings, unique_name) -> None:
    client = SchemaRegistryClient({"url": stack.registry.url})
    subject = unique_name("compat") + "-value"
    client.set_compatibility(subject_name=subject, level="BACKWARD_TRANSITIVE")
    v1 = _record([{"name": "a", "type": "string"}])
    v2 = _record([{"name": "a", "type": "string"}, {"name": "b", "type": "long", "default": 0}])
    # b without a default: readable against v2 data (which has b) but not v1 data, so plain
    # BACKWARD would accept it and BACKWARD_TRANSITIVE must not.
    candidate = _record([{"name": "a", "type": "string"}, {"name": "b", "type": "long"}])
    client.register_schema(subject, Schema(v1, "AVRO"))
    client.register_schema(subject, Schema(v2, "AVRO"))
    # The compatibility endpoint checks one version at a time, as Confluent's does.
    assert client.test_compatibility(subject, Schema(candidate, "AVRO"), version=2) is True
    assert client.test_compatibility(subject, Schema(candidate, "AVRO"), version=1) is False
    with pytest.raises(SchemaRegistryError) as err:
        client.register_schema(subject, Schema(candidate, "AVRO"))
    assert err.value.http_status_code == 409
    assert len(client.get_versions(subject)) == 2

    # Under plain BACKWARD the same candidate is accepted: the refusal above came from checking v1.
    client.set_compatibility(subject_name=subject, level="BACKWARD")
    assert client.register_schema(subject, Schema(candidate, "AVRO")) > 0


def test_changed_contract_is_reported_incompatible(stack: Settings, monkeypatch) -> None:
    """`sluice schemas check` on a breaking edit of a real contract says INCOMPATIBLE."""
    register_all(stack)
    original = json.loads(schema_text("dead_letter"))
    original["fields"].append({"name": "must_have", "type": "string"})  # no default: breaks old data
    broken = json.dumps(original)
    from streams import contracts

    monkeypatch.setattr(contracts, "schema_text", lambda name: broken if name == "dead_letter" else schema_text(name))
    results = {r.subject: r for r in contracts.check_all(stack)}
    assert results[f"{stack.topics.dlq}-value"].compatible is False
    assert results[f"{stack.topics.raw}-value"].compatible is True


def test_generic_avro_serializer_interoperates(stack: Settings, unique_name) -> None:
    """A stock Confluent serializer (auto-registering) and our deserializer agree."""
    subject_topic = unique_name("interop")
    client = SchemaRegistryClient({"url": stack.registry.url})
    schema = schema_text("alert")
    ser = AvroSerializer(client, schema)
    ctx = SerializationContext(subject_topic, MessageField.VALUE)
    alert = {"alert_id": "a1", "rule": "cuda_oom", "severity": "critical", "timestamp": 1_700_000_000_000,
             "project": "default", "task_id": "t1", "summary": "CUDA out of memory on rank 3", "count": 1,
             "first_seen": 1_700_000_000_000, "last_seen": 1_700_000_000_000, "event_ids": ["e1"], "details": {}}
    back = AvroDeserializer(client)(ser(alert, ctx), ctx)
    assert back["summary"] == alert["summary"]
    assert back["timestamp"].timestamp() * 1000 == alert["timestamp"]
