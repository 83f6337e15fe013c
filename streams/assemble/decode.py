"""Decode one raw Kafka record (value bytes + key) into lines.

Accepted values, tried in this order (cheap first-byte checks keep the hot path short):

- Avro in the Confluent wire format: magic byte 0, 4-byte big-endian schema id, then a
  ``sluice.v1.RawBatch`` body. The schema comes from an injected ``schema_lookup(schema_id)``
  so this module does no registry I/O.
- JSON envelopes: docker json-file / Fluent Bit (``log``), Filebeat (``message`` + ``log.offset``,
  ``log.file.path``, ``host.name``, ``kubernetes.*``), Vector (``message``, ``file``, ``host``).
  A JSON object that is none of these is itself the log line (e.g. ms-swift ``logging.jsonl``).
- CRI lines ``<RFC3339Nano> <stream> <P|F> <text>``.
- Plain text: anything else. Invalid UTF-8 becomes U+FFFD, NUL bytes are removed, never a crash.

``\\r`` progress redraws (tqdm) are collapsed to the final state of the line here, once.
"""

from __future__ import annotations

import io
import json
import re
import struct
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import fastavro

from streams.assemble import jsonlimits
from streams.assemble.lines import RawLine, empty_source
from streams.errors import DecodeError

SchemaLookup = Callable[[int], object]

_CRI_RE = re.compile(r"^(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) ([PF]) ?(.*)\Z", re.S)


def final_redraw(text: str) -> str:
    """Keep only what a terminal would show last: the final non-empty ``\\r`` segment."""
    if "\r" not in text:
        return text
    for seg in reversed(text.split("\r")):
        if seg:
            return seg
    return ""


def rfc3339_ms(value: str | None) -> int | None:
    """RFC 3339 with up to nanoseconds -> epoch ms (None when absent or unreadable)."""
    if not value or not isinstance(value, str):
        return None
    s = value.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    m = re.match(r"^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(\.\d+)?(.*)$", s)
    if not m:
        return None
    frac = (m.group(2) or ".0")[:7]  # Python parses at most microseconds
    try:
        dt = datetime.fromisoformat(m.group(1) + frac + (m.group(3) or "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def _text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "")  # NULs break Elasticsearch and terminals: keep them out
    return text


def _dig(obj: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _kubernetes(src: dict, labels: dict, k8s) -> None:
    if not isinstance(k8s, dict):
        return
    src["namespace"] = k8s.get("namespace_name") or k8s.get("namespace") or src["namespace"]
    pod = k8s.get("pod_name") or k8s.get("pod")
    if isinstance(pod, dict):  # Filebeat: kubernetes.pod.name
        pod = pod.get("name")
    src["pod"] = pod or src["pod"]
    cont = k8s.get("container_name") or k8s.get("container")
    if isinstance(cont, dict):
        cont = cont.get("name")
    src["container"] = cont or src["container"]
    src["host"] = src["host"] or k8s.get("host") or _dig(k8s, "node", "name")
    for k, v in (k8s.get("labels") or {}).items():
        labels[str(k)] = str(v)


def _from_json(obj: dict, raw: bytes) -> list[RawLine]:
    src = empty_source()
    labels: dict = {}
    log = obj.get("log")
    if isinstance(log, str):
        # docker json-file or Fluent Bit: "log" keeps the newline; no newline = partial line
        partial = not log.endswith("\n")
        text = log[:-1] if not partial else log
        if text.endswith("\r"):
            text = text[:-1]
        src["stream"] = obj.get("stream")
        _kubernetes(src, labels, obj.get("kubernetes"))
        src["host"] = src["host"] or obj.get("host") or obj.get("hostname")
        ts = rfc3339_ms(obj.get("time"))
        return [RawLine(final_redraw(text), None, ts, src, labels, partial)]
    msg = obj.get("message")
    if isinstance(msg, str):
        logf: dict[str, Any] = obj["log"] if isinstance(obj.get("log"), dict) else {}
        offset = logf.get("offset") if isinstance(logf.get("offset"), int) else None
        src["file"] = _dig(logf, "file", "path") or (obj.get("file") if isinstance(obj.get("file"), str) else None)
        host = obj.get("host")
        src["host"] = host.get("name") if isinstance(host, dict) else host
        src["stream"] = obj.get("stream")
        _kubernetes(src, labels, obj.get("kubernetes"))
        for k, v in (obj.get("labels") or {}).items() if isinstance(obj.get("labels"), dict) else ():
            labels[str(k)] = str(v)
        ts = rfc3339_ms(obj.get("@timestamp") or obj.get("timestamp") or obj.get("time"))
        return [RawLine(final_redraw(msg.rstrip("\r\n")), offset, ts, src, labels)]
    # a JSON log line written by the application itself (ms-swift logging.jsonl, ...)
    return [RawLine(_text(raw).rstrip("\r\n"), None, None, src, labels)]


def _from_avro(value: bytes, schema_lookup: SchemaLookup | None) -> list[RawLine]:
    (schema_id,) = struct.unpack(">I", value[1:5])
    try:
        schema = schema_lookup(schema_id) if schema_lookup else None
    except Exception as exc:  # the lookup is the caller's I/O: any failure means "not found"
        raise DecodeError(f"schema id {schema_id}: lookup failed: {exc}", "schema_not_found") from exc
    if schema is None:
        raise DecodeError(f"schema id {schema_id} is not in the registry", "schema_not_found")
    buf = io.BytesIO(value[5:])
    try:
        batch = fastavro.schemaless_reader(buf, schema)  # type: ignore[arg-type]
    except Exception as exc:
        raise DecodeError(f"Avro body does not match schema id {schema_id}: {exc}", "corrupt_avro") from exc
    if buf.tell() != len(value) - 5:
        raise DecodeError(f"{len(value) - 5 - buf.tell()} trailing bytes after the Avro body", "corrupt_avro")
    if not isinstance(batch, dict) or "lines" not in batch:
        raise DecodeError(f"schema id {schema_id} is not a sluice.v1.RawBatch", "corrupt_avro")
    src = empty_source()
    src.update(batch.get("source") or {})
    labels = dict(batch.get("labels") or {})
    out = []
    for i, ln in enumerate(batch["lines"]):
        text = ln["line"].replace("\x00", "") if "\x00" in ln["line"] else ln["line"]
        ts = ln.get("ts")
        if ts is not None and not isinstance(ts, int):  # fastavro may return datetimes
            ts = int(ts.timestamp() * 1000)
        out.append(RawLine(final_redraw(text), ln.get("file_offset"), ts, src, labels, False, i))
    return out


def decode_record(value: bytes | None, key: bytes | None = None,  # noqa: PLR0912 - first-byte dispatch, flat
                  schema_lookup: SchemaLookup | None = None) -> list[RawLine]:
    """Turn one record value into lines; raise ``DecodeError`` when it cannot be read at all."""
    if value is None or len(value) == 0:
        raise DecodeError("empty record value (tombstone?)", "empty_record")
    first = value[0]
    if first == 0:
        if len(value) < 5:
            raise DecodeError(f"{len(value)}-byte value starts with the Avro magic byte but has no schema id",
                              "corrupt_avro")
        return _from_avro(value, schema_lookup)
    if first == 0x7B:  # '{'
        too_much = jsonlimits.violation(value)
        if too_much is not None:
            raise DecodeError(f"{too_much}: not parsed (a parser would recurse or balloon on it)", "json_limits")
        try:
            obj = json.loads(value)
        except ValueError:
            obj = None  # a plain line that happens to start with '{'
        if isinstance(obj, dict):
            return _from_json(obj, value)
    text = _text(value)
    if 0x30 <= first <= 0x39:
        m = _CRI_RE.match(text.rstrip("\n"))
        if m:
            src = empty_source()
            src["stream"] = m.group(2)
            body = m.group(4)
            if body.endswith("\r"):
                body = body[:-1]
            return [RawLine(final_redraw(body), None, rfc3339_ms(m.group(1)), src, {}, m.group(3) == "P")]
    if text.endswith("\n"):
        text = text[:-1]
    if "\n" not in text:  # one line per record (Filebeat-style producers): the common case, kept short
        if text.endswith("\r"):
            text = text[:-1]
        return [RawLine(final_redraw(text) if "\r" in text else text, None, None, empty_source(), {}, False, 0)]
    parts = text.split("\n")
    out = []
    for i, part in enumerate(parts):
        out.append(RawLine(final_redraw(part[:-1] if part.endswith("\r") else part), index=i))
    return out

