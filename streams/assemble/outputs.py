"""Encode the assemble stage's outputs for Kafka: Avro in the Confluent wire format, our topics."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

import fastavro

from streams.assemble.pipeline import Output
from streams.assemble.redact import redactor_from
from streams.avro_writer import body_writer
from streams.config import Settings
from streams.contracts import schema_text
from streams.deadletter import letter_seal, protect_letter
from streams.registry_cache import MissingSchemas

CONTRACT_OF_KIND = {"event": "log_event", "metric": "metric_point", "dead_letter": "dead_letter"}


class OutputEncoder:
    """Output -> (topic, key, value bytes). Schema ids are looked up once per subject."""

    def __init__(self, settings: Settings, registry: Any) -> None:
        from confluent_kafka.schema_registry import Schema

        self.settings = settings
        self._registry = registry
        # Dead letters are redacted and their original bytes sealed here, where they are written.
        self.redact = redactor_from(settings.redaction)
        self.seal = letter_seal(settings.dead_letters, writer=True)
        self._schema_cls = Schema
        self._ids: dict[str, int] = {}

    def topic_of(self, out: Output) -> str:
        if out.kind == "metric":
            return self.settings.topics.metrics
        if out.kind == "dead_letter":
            return self.settings.topics.dlq
        project = out.value.get("project") or self.settings.routing.default_project
        return self.settings.topics.events_topic(project)

    def _schema_id(self, topic: str, contract: str) -> int:
        subject = f"{topic}-value"
        sid = self._ids.get(subject)
        if sid is None:
            # Registered by `sluice schemas register`; a lookup fails loudly if the contract drifted.
            found = self._registry.lookup_schema(subject, self._schema_cls(schema_text(contract), "AVRO"),
                                                 normalize_schemas=True)
            sid = self._ids[subject] = int(found.schema_id)
        return sid

    def encode(self, out: Output) -> tuple[str, bytes | None, bytes]:
        topic = self.topic_of(out)
        contract = CONTRACT_OF_KIND[out.kind]
        header = struct.pack(">bI", 0, self._schema_id(topic, contract))
        value = out.value
        if out.kind == "dead_letter":
            value = protect_letter(dict(value), self.redact, self.seal)
        return topic, out.key, header + body_writer(contract, self.settings.assemble.engine)(value)


def registry_schema_lookup(registry: Any, logical_types: bool = True) -> Callable[[int], Any]:
    """schema id -> parsed fastavro schema, cached (the decoder of Avro raw records).

    ``logical_types=False`` drops the ``logicalType`` annotations, which change no byte of the
    encoding: timestamps then come back as the ints they are on the wire instead of datetimes made
    for every line and turned back into ints (1.5 vs 2.7 µs a line for fastavro alone). An id the
    registry does not have is remembered as missing for a while (streams/registry_cache.py)."""
    cache: dict[int, Any] = {}
    missing = MissingSchemas()

    def lookup(schema_id: int) -> Any:
        if schema_id not in cache:
            schema = json.loads(missing.get_schema(registry, schema_id).schema_str)
            cache[schema_id] = fastavro.parse_schema(schema if logical_types else _plain(schema))
        return cache[schema_id]

    return lookup


def _plain(schema: Any) -> Any:
    """The schema without ``logicalType`` annotations."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema
