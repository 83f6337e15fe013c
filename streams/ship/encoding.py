"""The ``sluice.v1.RawBatch`` contract checked locally, and what to send when a line breaks it (pure).

The producer's serializer fails alike for an unreachable registry (worth a retry) and for a value
the contract refuses (never worth one). ``RawBatchContract.problem`` tells them apart without I/O:
it encodes the value with the contract itself. A line that fits in no message on its own is
quarantined: sent as escaped text, cut to fit if it must be, with a flag, so it is never put back
forever and never silently lost.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from streams.contracts import schema_text
from streams.errors import SluiceError
from streams.ship.bounds import LONG_MAX, SOURCE_TEXT_FIELDS, add_flag, avro_text

RawBatchValue = dict[str, Any]
CONFLUENT_FRAMING_BYTES = 5  # magic byte and schema id in front of every Avro value


class EncodeError(SluiceError):
    """A value the RawBatch contract refuses: retrying cannot help; split it or quarantine it."""


class RawBatchContract:
    def __init__(self) -> None:
        self.schema = fastavro.parse_schema(json.loads(schema_text("raw_batch")))

    def encode(self, value: RawBatchValue) -> bytes:
        """The Avro body (without the Confluent framing); raises EncodeError when the contract refuses it."""
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, self.schema, value)
        except Exception as exc:
            raise EncodeError(f"{type(exc).__name__}: {exc}") from exc
        return out.getvalue()

    def problem(self, value: RawBatchValue) -> str | None:
        try:
            self.encode(value)
        except EncodeError as exc:
            return str(exc)
        return None

    def decode(self, body: bytes) -> RawBatchValue:
        return fastavro.schemaless_reader(io.BytesIO(body), self.schema, None)  # type: ignore[return-value]


def safe_envelope(value: RawBatchValue, flag: str) -> RawBatchValue:
    """A batch's source and labels reduced to what always encodes: host and file as text, labels as text."""
    source = value.get("source") if isinstance(value.get("source"), dict) else {}
    labels_in = value.get("labels") if isinstance(value.get("labels"), dict) else {}
    labels = {avro_text(str(k)): avro_text(str(v)) for k, v in labels_in.items()}  # type: ignore[union-attr]
    add_flag(labels, flag)
    safe_source: dict[str, Any] = dict.fromkeys((*SOURCE_TEXT_FIELDS, "rank"))
    for name in ("host", "file"):
        if source.get(name) is not None:  # type: ignore[union-attr]
            safe_source[name] = avro_text(str(source[name]))  # type: ignore[index]
    return {"source": safe_source, "labels": labels, "lines": [], "sent_ts": _long(value.get("sent_ts"))}


def quarantined_line(record: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """A line that fits: its text escaped where it is not UTF-8, cut to ``max_chars``; offset and time kept if longs."""
    line = record.get("line")
    text = avro_text(line if isinstance(line, str) else repr(line))
    return {"line": text[:max_chars], "file_offset": _long(record.get("file_offset")), "ts": _long(record.get("ts"))}


def _long(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LONG_MAX else None
