"""OTLP logs (the OpenTelemetry Collector's kafka exporter, ``otlp_proto`` and ``otlp_json``) to lines.

One record carries a batch: ``resourceLogs[].scopeLogs[].logRecords[]``. Each log record becomes
one line, in order, numbered by ``index``. Only the fields Sluice uses are read (body, time,
attributes, resource attributes); the protobuf wire format is read directly for those few fields
of ``opentelemetry/proto/logs/v1/logs.proto`` rather than through generated classes.

What the filelog receiver puts there, as recorded: the body is the line without its newline, except
after the ``container`` operator's docker format, which keeps docker's ``\\n`` (and leaves lines
docker split at 16 KiB unjoined: a body without it is partial). CRI lines come out joined, but
``logtag`` keeps the first piece's tag, so ``logtag: P`` does not mark a partial line.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from streams.assemble.envelopes import Inner, put_meta, with_inner
from streams.assemble.jsonlimits import MAX_DEPTH
from streams.assemble.lines import RawLine, empty_source
from streams.assemble.timefmt import unix_nano_ms
from streams.errors import DecodeError, TooManyLines

# Source fields: log record attribute first, then resource attribute, first name that is set wins.
SOURCE_ATTRS: dict[str, tuple[str, ...]] = {
    "host": ("host.name", "k8s.node.name"),
    "namespace": ("k8s.namespace.name",),
    "pod": ("k8s.pod.name",),
    "container": ("k8s.container.name",),
    "file": ("log.file.path", "log.file.name"),
    "stream": ("log.iostream",),
}
# Kept as labels under the same names (the k8sattributes processor and the container operator's).
LABEL_ATTRS = ("k8s.pod.uid", "k8s.node.name", "k8s.container.restart_count", "container.image.name")
POD_LABEL_PREFIX = "k8s.pod.labels."  # the k8sattributes processor's names for pod labels
ANNOTATION_PREFIX = "k8s.pod.annotations."
OFFSET_ATTR = "log.file.record_offset"


class _Bad(Exception):
    """The bytes are not a well-formed protobuf message."""


# -- OTLP JSON ------------------------------------------------------------------------------
# OTLP JSON's AnyValue members and how each becomes a Python value. A member of another JSON type
# than the protocol's is read as the protocol's if it can be, else kept as it came (the record is
# a producer's, and its line must not be lost for a field's type).
_JSON_VALUE: dict[str, Any] = {
    "stringValue": lambda v: v,
    "boolValue": lambda v: v,
    "intValue": int,  # a decimal string: int64 does not fit a JSON number
    "doubleValue": lambda v: v,
    "bytesValue": base64.b64decode,
    "arrayValue": lambda v: [_json_value(x) for x in _list(_dict(v).get("values"))],
    "kvlistValue": lambda v: _json_attrs(_dict(v).get("values")),
}
_NO_DICT: dict = {}


def _dict(v: Any) -> dict:
    return v if isinstance(v, dict) else _NO_DICT


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _json_value(v: Any) -> Any:
    if isinstance(v, dict):
        for member, convert in _JSON_VALUE.items():
            if member in v:
                try:
                    return convert(v[member])
                except (ValueError, TypeError, OverflowError):
                    return v[member]
    return None


def _json_attrs(kvs: Any) -> dict:
    return {kv["key"]: _json_value(kv.get("value")) for kv in _list(kvs)
            if isinstance(kv, dict) and isinstance(kv.get("key"), str)}


def json_lines(obj: dict, inner: Inner | None, max_lines: int | None = None) -> list[RawLine]:
    """The record's log records as lines; past ``max_lines`` of them, TooManyLines (counted, not built)."""
    out: list[RawLine] = []
    for rl in _list(obj.get("resourceLogs")):
        res = _json_attrs(_dict(_dict(rl).get("resource")).get("attributes"))
        res_src, res_labels = resource_source(res), resource_labels(res)
        for sl in _list(_dict(rl).get("scopeLogs")):
            for lr in _list(_dict(sl).get("logRecords")):
                if not isinstance(lr, dict):
                    continue
                if max_lines is not None and len(out) >= max_lines:
                    raise TooManyLines(len(out) + 1, max_lines)
                t = unix_nano_ms(lr.get("timeUnixNano")) or unix_nano_ms(lr.get("observedTimeUnixNano"))
                out.append(_line(_json_value(lr.get("body")), _json_attrs(lr.get("attributes")), res, res_src,
                                 res_labels, t, len(out), inner))
    return out


# -- OTLP protobuf --------------------------------------------------------------------------
def varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A base-128 varint (protobuf's, and Avro's before its zigzag) at ``pos``: (value, the position after)."""
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Bad("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes, pos: int, end: int):
    """(field number, wire type, value): an int for varint/fixed, a (start, end) span for bytes."""
    while pos < end:
        tag, pos = varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = varint(buf, pos, end)
            yield field, wire, value
        elif wire == 1:
            if pos + 8 > end:
                raise _Bad("truncated fixed64")
            yield field, wire, struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire == 2:
            size, pos = varint(buf, pos, end)
            if pos + size > end:
                raise _Bad("length past the end")
            yield field, wire, (pos, pos + size)
            pos += size
        elif wire == 5:
            if pos + 4 > end:
                raise _Bad("truncated fixed32")
            yield field, wire, struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise _Bad(f"wire type {wire}")
    if pos != end:
        raise _Bad("message runs past its length")


def _text(buf: bytes, span: tuple[int, int]) -> str:
    return buf[span[0]:span[1]].decode("utf-8", "replace")


def _any_value(buf: bytes, span: tuple[int, int], depth: int = 0) -> Any:  # noqa: PLR0911 - one case per member
    # Arrays and key-value lists nest: a few bytes a level, so one record can hold more levels than Python's
    # stack. Past JSON's limit (jsonlimits.MAX_DEPTH) the record is not read, as a JSON one would not be.
    if depth > MAX_DEPTH:
        raise _Bad(f"AnyValue nested more than {MAX_DEPTH} levels deep")
    for field, wire, v in _fields(buf, *span):
        if field == 1 and wire == 2:
            return _text(buf, v)
        if field == 2 and wire == 0:
            return bool(v)
        if field == 3 and wire == 0:
            return v - (1 << 64) if v >= 1 << 63 else v
        if field == 4 and wire == 1:
            return struct.unpack("<d", struct.pack("<Q", v))[0]
        if field == 5 and wire == 2:
            return [_any_value(buf, s, depth + 1) for f, w, s in _fields(buf, *v) if f == 1 and w == 2]
        if field == 6 and wire == 2:
            return _kv_list(buf, v, depth + 1)
        if field == 7 and wire == 2:
            return bytes(buf[v[0]:v[1]])
    return None


def _key_value(buf: bytes, span: tuple[int, int], depth: int = 0) -> tuple[str, Any]:
    key, value = "", None
    for field, wire, v in _fields(buf, *span):
        if field == 1 and wire == 2:
            key = _text(buf, v)
        elif field == 2 and wire == 2:
            value = _any_value(buf, v, depth)
    return key, value


def _kv_list(buf: bytes, span: tuple[int, int], depth: int) -> dict:
    return dict(_key_value(buf, s, depth) for f, w, s in _fields(buf, *span) if f == 1 and w == 2)


def _resource_attrs(buf: bytes, span: tuple[int, int]) -> dict:
    return dict(_key_value(buf, s) for f, w, s in _fields(buf, *span) if f == 1 and w == 2)


def _log_record(buf: bytes, span: tuple[int, int]) -> tuple[Any, dict, int | None]:
    body: Any = None
    attrs: dict = {}
    t = observed = 0
    for field, wire, v in _fields(buf, *span):
        if field == 1 and wire == 1:
            t = v
        elif field == 11 and wire == 1:
            observed = v
        elif field == 5 and wire == 2:
            body = _any_value(buf, v)
        elif field == 6 and wire == 2:
            k, val = _key_value(buf, v)
            attrs[k] = val
    return body, attrs, unix_nano_ms(t) or unix_nano_ms(observed)


def looks_like_proto(value: bytes) -> bool:
    """Field 1 (resource_logs) as bytes whose length fits the record: worth a full parse."""
    try:
        size, pos = varint(value, 1, len(value))
    except _Bad:
        return False
    return value[0] == 0x0A and pos + size <= len(value)


def proto_lines(value: bytes, inner: Inner | None, max_lines: int | None = None) -> list[RawLine]:
    """An ``ExportLogsServiceRequest`` / ``LogsData`` message (same field 1) to lines (as json_lines)."""
    out: list[RawLine] = []
    try:
        for f, w, rl in _fields(value, 0, len(value)):
            if f != 1 or w != 2:
                continue
            res: dict = {}
            scopes = []
            for f2, w2, v2 in _fields(value, *rl):
                if f2 == 1 and w2 == 2:
                    res = _resource_attrs(value, v2)
                elif f2 == 2 and w2 == 2:
                    scopes.append(v2)
            res_src, res_labels = resource_source(res), resource_labels(res)
            for sl in scopes:
                for f3, w3, v3 in _fields(value, *sl):
                    if f3 == 2 and w3 == 2:
                        if max_lines is not None and len(out) >= max_lines:
                            raise TooManyLines(len(out) + 1, max_lines)
                        body, attrs, t = _log_record(value, v3)
                        out.append(_line(body, attrs, res, res_src, res_labels, t, len(out), inner))
    except (_Bad, struct.error, ValueError) as exc:
        raise DecodeError(f"OTLP protobuf record is malformed: {exc}", "corrupt_otlp") from exc
    return out


# -- one log record to one line ---------------------------------------------------------------
def _body_text(body: Any) -> str:
    if isinstance(body, str):
        return body
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    if body is None:
        return ""
    return json.dumps(body, ensure_ascii=False, default=lambda b: b.decode("utf-8", "replace"))


def resource_source(res: dict, attrs: dict | None = None) -> dict:
    """The source fields of a resource's log records (of one whose own attributes name one, with ``attrs``),
    made once a resource, as its labels are: a field of megabytes was cut and hashed again for each record."""
    src = empty_source()
    for field, names in SOURCE_ATTRS.items():
        for name in names:
            v = attrs.get(name, res.get(name)) if attrs else res.get(name)
            if v is not None and v != "":
                src[field] = str(v)
                break
    return src


def resource_labels(res: dict, attrs: dict | None = None) -> dict:
    """The labels of a resource's log records (of one whose own attributes name a label of LABEL_ATTRS,
    with ``attrs``). Made once a resource: its records share the dict (one resource of 60,000 pod labels
    read again for each of its records cost seconds)."""
    labels: dict = {}
    for name in LABEL_ATTRS:
        v = attrs.get(name, res.get(name)) if attrs else res.get(name)
        if v is not None:
            labels[name] = str(v)
    for prefix in (POD_LABEL_PREFIX, ANNOTATION_PREFIX):  # labels first: a label wins over an annotation
        for k, v in res.items():
            if k.startswith(prefix):
                put_meta(labels, k[len(prefix):], v)
    return labels


_SOURCE_NAMES = frozenset(name for names in SOURCE_ATTRS.values() for name in names)


def _line(body: Any, attrs: dict, res: dict, res_src: dict, res_labels: dict, ts_ms: int | None, index: int,
          inner: Inner | None) -> RawLine:
    src = resource_source(res, attrs) if attrs and not attrs.keys().isdisjoint(_SOURCE_NAMES) else res_src
    labels = resource_labels(res, attrs) if attrs and not attrs.keys().isdisjoint(LABEL_ATTRS) else res_labels
    text = _body_text(body)
    had_newline = text.endswith("\n")
    if had_newline:
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    # the container operator's docker format: stream set, no CRI logtag, docker's newline kept;
    # a body without the newline is a line docker split and the operator did not join
    partial = "log.iostream" in attrs and "logtag" not in attrs and not had_newline
    offset = attrs.get(OFFSET_ATTR)
    line = RawLine(text, offset if isinstance(offset, int) else None, ts_ms, src, labels, partial, index)
    return line if partial else with_inner(line, inner)
