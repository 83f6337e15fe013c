"""The object builder: events in, object bytes and manifest out. Pure: no I/O, no clock.

Same events, same key, same settings -> the same bytes. fastavro's container writer is
deterministic except for its sync marker, which it draws at random; we derive the marker from the
object key instead. The header holds only the schema and the codec (no write time), and gzip's
header time is pinned to zero, so a replay after a crash rewrites an object byte for byte.

The header's schema is the contract file's JSON as written, not fastavro's parsed form: the parsed
form orders some keys by set iteration, which changes with each process's string-hash seed, and a
restarted worker must write the very same header as the one that died.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import fastavro
from fastavro.schema import to_parsing_canonical_form

from streams.avro_writer import body_writer
from streams.contracts import parsed_schema, schema_text
from streams.errors import ConfigError
from streams.sinks.objectstore.container import BLOCK_CODECS, SYNC_INTERVAL, container_file
from streams.sinks.objectstore.partition import epoch_ms

SCHEMA_NAME = "log_event"  # the default contract; metric points are archived with "metric_point"


# The object's user metadata entry that holds its manifest (S3 sends it as x-amz-meta-sluice-manifest).
MANIFEST_METADATA = "sluice-manifest"


@dataclass(frozen=True, slots=True)
class BuiltObject:
    key: str
    body: bytes
    manifest: dict[str, Any]

    def manifest_bytes(self) -> bytes:
        # ASCII only (non-ASCII escaped): S3 user metadata must be US-ASCII.
        return json.dumps(self.manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()

    def metadata(self) -> dict[str, str]:
        """The object's user metadata: its manifest, stored with the object in the same PUT."""
        return {MANIFEST_METADATA: self.manifest_bytes().decode("ascii")}


def manifest_from_metadata(metadata: dict[str, str]) -> dict[str, Any] | None:
    """The manifest in an object's user metadata (as HEAD returns it), None if it has none."""
    text = metadata.get(MANIFEST_METADATA)
    return json.loads(text) if text else None


@cache
def schema_fingerprint(contract: str = SCHEMA_NAME) -> str:
    """SHA-256 of the schema's Parsing Canonical Form (the Avro spec's fingerprint)."""
    return hashlib.sha256(to_parsing_canonical_form(parsed_schema(contract)).encode()).hexdigest()


@cache
def schema_full_name(contract: str) -> str:
    schema = json.loads(schema_text(contract))
    return f"{schema['namespace']}.{schema['name']}"


def sync_marker(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()[:16]


@cache
def codec_available(codec: str) -> bool:
    """Can fastavro write this codec here (zstandard and snappy need optional packages)?"""
    try:
        fastavro.writer(io.BytesIO(), {"type": "record", "name": "probe", "fields": []}, [{}], codec=codec)
    except (ValueError, ImportError):
        return False
    return True


def check_codec(fmt: str, codec: str) -> None:
    if fmt == "avro" and not codec_available(codec):
        raise ConfigError(
            f"the Avro codec {codec!r} cannot be written here (install its package: zstandard for "
            "'zstandard', cramjam for 'snappy') or set SLUICE_COLD__CODEC=deflate"
        )


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return _iso(epoch_ms(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def encode_body(events: Sequence[dict[str, Any]], key: str, fmt: str = "avro", codec: str = "deflate",
                codec_level: int | None = None, bodies: Sequence[bytes | None] | None = None,
                contract: str = SCHEMA_NAME) -> bytes:
    """The object's bytes. ``bodies`` (parallel to ``events``): each record's Avro body when it is known
    to be the contract's encoding of the event, else None."""
    if fmt == "ndjson.gz":
        text = "".join(json.dumps(e, default=_json_default, separators=(",", ":")) + "\n" for e in events)
        return gzip.compress(text.encode(), mtime=0)
    if bodies is not None and codec in BLOCK_CODECS and any(b is not None for b in bodies):
        return container_file(contract, _avro_bodies(events, bodies, contract), sync_marker(key), codec, codec_level)
    buf = io.BytesIO()
    fastavro.writer(buf, json.loads(schema_text(contract)), events, codec=codec, sync_marker=sync_marker(key),
                    codec_compression_level=codec_level, sync_interval=SYNC_INTERVAL)
    return buf.getvalue()


def _avro_bodies(events: Sequence[dict[str, Any]], bodies: Sequence[bytes | None],
                 contract: str = SCHEMA_NAME) -> list[bytes]:
    """The given bodies, with the missing ones encoded as fastavro.writer would encode them."""
    if len(bodies) != len(events):
        raise ValueError("bodies and events must be parallel")
    write = body_writer(contract)
    return [body if body is not None else write(event) for event, body in zip(events, bodies, strict=True)]


def build_object(key: str, topic: str, partition: int, offsets: Sequence[int], events: Sequence[dict[str, Any]],
                 fmt: str = "avro", codec: str = "deflate", codec_level: int | None = None,
                 bodies: Sequence[bytes | None] | None = None, contract: str = SCHEMA_NAME) -> BuiltObject:
    """One object and its manifest. ``offsets``, ``events`` (and ``bodies``) are parallel, in offset order."""
    if not events or len(offsets) != len(events):
        raise ValueError("an object needs events, one offset each")
    body = encode_body(events, key, fmt, codec, codec_level, bodies, contract)
    times = [epoch_ms(e["timestamp"]) for e in events]
    # Stored as the object's user metadata (under 2 KB, S3's limit): the key is the object's own name.
    manifest = {
        "format": fmt,
        "codec": codec if fmt == "avro" else "gzip",
        "schema": schema_full_name(contract),
        "schema_fingerprint": schema_fingerprint(contract),
        "topic": topic,
        "partition": partition,
        "count": len(events),
        "first_offset": offsets[0],
        "last_offset": offsets[-1],
        # Earliest and latest event time in the object (events are in offset order, not time order).
        "first_event_time": _iso(min(times)),
        "last_event_time": _iso(max(times)),
        "first_event_ms": min(times),
        "last_event_ms": max(times),
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    return BuiltObject(key, body, manifest)


def invalid_events(events: Sequence[dict[str, Any]], contract: str = SCHEMA_NAME) -> list[tuple[int, str]]:
    """Indexes of events the contract cannot encode, with the reason (to dead-letter them)."""
    schema = parsed_schema(contract)
    bad = []
    for i, event in enumerate(events):
        try:
            fastavro.schemaless_writer(io.BytesIO(), schema, event, strict=False)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            bad.append((i, f"{type(exc).__name__}: {exc}"))
    return bad
