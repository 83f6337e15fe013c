"""Encode the assemble stage's outputs for Kafka: Avro in the Confluent wire format, our topics."""

from __future__ import annotations

import json
import struct
from typing import Any

import fastavro

from streams.assemble.pipeline import Output
from streams.assemble.redact import redactor_from
from streams.avro_writer import body_writer
from streams.config import Settings
from streams.contracts import schema_text
from streams.deadletter import letter_seal, protect_letter
from streams.registry import SchemaCache, checked

CONTRACT_OF_KIND = {"event": "log_event", "metric": "metric_point", "dead_letter": "dead_letter"}


def encode_body(out: Output, engine: str | None = None) -> bytes:
    """The output's Avro body (no wire header): what the Assembler's ``encode`` hook is in the worker.
    ``engine`` (``assemble.engine``): None for the process's (streams/native.py); the bytes are the same."""
    return body_writer(CONTRACT_OF_KIND[out.kind], engine)(out.value)


class OutputEncoder:
    """Output -> (topic, key, value bytes). Schema ids are looked up once per subject."""

    def __init__(self, settings: Settings, registry: Any) -> None:
        from confluent_kafka.schema_registry import Schema

        self.settings = settings
        self.engine = settings.assemble.engine
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
            found = checked(lambda: self._registry.lookup_schema(
                subject, self._schema_cls(schema_text(contract), "AVRO"), normalize_schemas=True),
                f"the lookup of {subject}", self.settings.registry.url)
            sid = self._ids[subject] = int(found.schema_id)
        return sid

    def prepare(self) -> None:
        """Look up now the schema id of every topic the stage writes to (blocking; a registry that does
        not answer raises :class:`~streams.errors.DependencyUnavailable`), so that no turn needs the
        registry halfway through its transaction."""
        t = self.settings.topics
        self._schema_id(t.metrics, "metric_point")
        self._schema_id(t.dlq, "dead_letter")
        for project in self.settings.projects():
            self._schema_id(t.events_topic(project), "log_event")

    def body(self, out: Output) -> bytes:
        """The output's Avro body as this worker writes it: the Assembler's ``encode`` hook, so that
        whatever fails here fails inside the Assembler's guard and costs one dead letter (and a letter's
        size is checked as written). Dead letters are redacted and their original bytes sealed here."""
        if out.kind == "dead_letter":
            return body_writer("dead_letter", self.engine)(protect_letter(dict(out.value), self.redact, self.seal))
        return encode_body(out, self.engine)

    def encode(self, out: Output) -> tuple[str, bytes | None, bytes]:
        """(topic, key, value in the Confluent wire format); the body already written when the
        Assembler encoded it. The schema id is registry I/O: its failures are not the output's."""
        topic = self.topic_of(out)
        header = struct.pack(">bI", 0, self._schema_id(topic, CONTRACT_OF_KIND[out.kind]))
        return topic, out.key, header + (out.body if out.body is not None else self.body(out))


def registry_schema_lookup(registry: Any, logical_types: bool = True, url: str = "the schema registry"
                           ) -> SchemaCache:
    """schema id -> parsed fastavro schema, cached (the decoder of Avro raw records).

    ``logical_types=False`` drops the ``logicalType`` annotations, which change no byte of the
    encoding: timestamps then come back as the ints they are on the wire instead of datetimes made
    for every line and turned back into ints (1.5 vs 2.7 µs a line for fastavro alone). An id the
    registry does not have is remembered as missing for a while (streams/registry_cache.py); a registry
    that does not answer raises :class:`~streams.errors.DependencyUnavailable` (streams/registry.py)."""

    def parse(text: str) -> Any:
        schema = json.loads(text)
        return fastavro.parse_schema(schema if logical_types else _plain(schema))

    return SchemaCache(registry, parse, url)


def _plain(schema: Any) -> Any:
    """The schema without ``logicalType`` annotations."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema
