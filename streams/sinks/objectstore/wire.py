"""Which Kafka values already hold the contract's Avro body, so objects can be framed from them.

A value in the Confluent wire format is ``0``, a 4-byte schema id, then the Avro binary body written
with that id's schema. If that writer schema lays out the bytes exactly as the contract the object
header declares, the body is what re-encoding the decoded event would write, and the builder can
use it as is (build.py). Each schema id is looked up in the registry once.

"Exactly as the contract": the Parsing Canonical Form (names, types, field order, symbols, sizes)
plus logical types, which the canonical form drops: a ``timestamp-micros`` writer has a ``long`` in
the same place, but re-encoding under the contract would convert it, and passing it through would
not. The first record seen with an id is also re-encoded once and compared with its body, which
catches a producer that encodes non-canonically (maps in several blocks, say).

Anything else (another schema version, no wire header, the registry unreachable) falls back to
re-encoding, which writes the same bytes, only slower. A failed lookup is retried after
``retry_after_s`` rather than on every record.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import fastavro

from streams.contracts import parsed_schema

log = logging.getLogger(__name__)

MAGIC = 0
HEADER_SIZE = 5
_LAYOUT_KEYS = ("type", "name", "fields", "items", "values", "symbols", "size", "logicalType", "precision", "scale")

SchemaLookup = Callable[[int], str]  # schema id -> the writer schema's JSON text


def binary_layout(schema: Any) -> Any:
    """What of a parsed schema decides its binary encoding and the values' meaning."""
    if isinstance(schema, list):
        return [binary_layout(s) for s in schema]
    if isinstance(schema, dict):
        return {k: binary_layout(schema[k]) for k in _LAYOUT_KEYS if k in schema}
    return schema


class RegistryLookup:
    """Schema text by id from the schema registry. ``connect`` makes the client (the first one in a
    process takes ~0.2 s: imports and CA certificates), at the sink's start rather than in its first
    object's build."""

    def __init__(self, registry_settings: Any) -> None:
        self.registry_settings = registry_settings
        self._client: Any = None

    def connect(self) -> None:
        if self._client is None:
            from streams.clients import registry_client

            self._client = registry_client(self.registry_settings)

    def __call__(self, schema_id: int) -> str:
        self.connect()
        return str(self._client.get_schema(schema_id).schema_str)


class ContractBodies:
    """``body(raw, event)``: the Avro body of a wire-format value if it is the contract's, else None."""

    def __init__(self, lookup: SchemaLookup | None, contract: str = "log_event",
                 clock: Callable[[], float] = time.monotonic, retry_after_s: float = 60.0) -> None:
        self.lookup = lookup
        self.contract = contract
        self.clock = clock
        self.retry_after_s = retry_after_s
        self._layout = binary_layout(parsed_schema(contract))
        self._same: dict[int, bool] = {}  # schema id -> its bodies can be passed through
        self._failed_until: dict[int, float] = {}

    def body(self, raw: bytes, event: dict[str, Any]) -> bytes | None:
        if self.lookup is None or len(raw) <= HEADER_SIZE or raw[0] != MAGIC:
            return None
        schema_id = int.from_bytes(raw[1:HEADER_SIZE], "big")
        same = self._same.get(schema_id)
        if same is None:
            same = self._check(schema_id, raw[HEADER_SIZE:], event)
        return raw[HEADER_SIZE:] if same else None

    def _check(self, schema_id: int, body: bytes, event: dict[str, Any]) -> bool:
        if self._failed_until.get(schema_id, float("-inf")) > self.clock():
            return False
        try:
            writer = fastavro.parse_schema(json.loads(self.lookup(schema_id))) if self.lookup else None
        except Exception as exc:  # noqa: BLE001 - registry down or odd schema: re-encode, ask again later
            self._failed_until[schema_id] = self.clock() + self.retry_after_s
            log.warning("cold: cannot look up schema id %d (%s); re-encoding its records for now", schema_id, exc)
            return False
        same = binary_layout(writer) == self._layout and self._reencodes_to(body, event)
        self._same[schema_id] = same
        log.info("cold: schema id %d is %s; its records are %s", schema_id,
                 "the contract" if same else "not the contract's encoding", "passed through" if same else "re-encoded")
        return same

    def _reencodes_to(self, body: bytes, event: dict[str, Any]) -> bool:
        buf = io.BytesIO()
        try:
            fastavro.schemaless_writer(buf, parsed_schema(self.contract), event)
        except (ValueError, TypeError, KeyError, AttributeError):
            return False
        return buf.getvalue() == body
