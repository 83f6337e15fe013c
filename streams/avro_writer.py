"""Avro bodies of our contracts, written by a function generated from the schema.

``fastavro.schemaless_writer`` walks the schema for every record and resolves each ``["null", X]``
union by validating the value against the branches; the assemble stage writes one body per output,
so that walk is paid per line. :func:`body_writer` turns a contract into straight-line Python, one
statement group per field in schema order, for the shapes our contracts use (records, ``["null", X]``
unions, maps, arrays, string, bytes, int/long, double, boolean); ``python -m streams.avro_writer`` times both.

Anything off that path (a value of an unexpected type, a missing field, an out-of-range long) is
handed to fastavro, so the bytes, the defaults and the errors are fastavro's in every case: the fast
path only ever answers where it writes exactly what fastavro writes (unit test: every event of the
corpus, byte for byte).

Where the native engine is built (:mod:`streams.native`), the same walk runs in compiled code
(``streams._native.AvroWriter``), with the same path and the same hand-off to fastavro; the differential
test holds its bytes to these.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable
from functools import cache
from typing import Any

import fastavro

from streams.contracts import parsed_schema, schema_text
from streams.native import NATIVE, load_native

_BOUNDS = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}


class _OffPath(Exception):
    """Raised by the fast path: the value is fastavro's to write."""


class _Source:
    """Python source of a writer function: statement lines, fresh local names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names = 0
        self.named: dict[str, Any] = {}

    def fresh(self) -> str:
        self.names += 1
        return f"v{self.names}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def varint(self, depth: int, zigzagged: str) -> None:
        self.emit(depth, f"n = {zigzagged}")
        self.emit(depth, "while n > 127:")
        self.emit(depth + 1, "ap((n & 127) | 128)")
        self.emit(depth + 1, "n >>= 7")
        self.emit(depth, "ap(n)")

    def sized(self, depth: int, data: str) -> None:
        """Length (zigzag varint) then the bytes."""
        self.varint(depth, f"len({data}) << 1")
        self.emit(depth, f"ext({data})")

    def write(self, depth: int, schema: Any, value: str, namespace: str = "") -> None:
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        if isinstance(schema, list):
            self.union(depth, schema, value, namespace)
            return
        kind = schema if isinstance(schema, str) else schema["type"]
        if kind == "record":
            self.record(depth, schema, value, namespace)
        elif kind == "map":
            self.map(depth, schema, value, namespace)
        elif kind == "array":
            self.array(depth, schema, value, namespace)
        else:
            self.scalar(depth, kind, value)

    def union(self, depth: int, schema: list[Any], value: str, namespace: str) -> None:
        if len(schema) != 2 or schema[0] != "null":
            raise NotImplementedError(f"union {json.dumps(schema)}: only [\"null\", X] is generated")
        self.emit(depth, f"if {value} is None:")
        self.emit(depth + 1, "ap(0)")
        self.emit(depth, "else:")
        self.emit(depth + 1, "ap(2)")  # branch 1, zigzagged
        self.write(depth + 1, schema[1], value, namespace)

    def record(self, depth: int, schema: dict[str, Any], value: str, namespace: str) -> None:
        space = schema.get("namespace", namespace)
        full = schema["name"] if "." in schema["name"] or not space else f"{space}.{schema['name']}"
        self.named[full] = self.named[schema["name"]] = schema
        self.emit(depth, f"if type({value}) is not dict: raise OffPath")
        for field in schema["fields"]:
            item = self.fresh()
            # A missing field raises KeyError, which the function turns into OffPath: fastavro knows the
            # defaults. A subscript costs less than ``.get`` and a test on this per-line path.
            self.emit(depth, f"{item} = {value}[{field['name']!r}]")
            self.write(depth, field["type"], item, space)

    def map(self, depth: int, schema: dict[str, Any], value: str, namespace: str) -> None:
        self.emit(depth, f"if type({value}) is not dict: raise OffPath")
        self.emit(depth, f"if {value}:")  # one block of all entries, then the empty block
        self.varint(depth + 1, f"len({value}) << 1")
        key, item = self.fresh(), self.fresh()
        self.emit(depth + 1, f"for {key}, {item} in {value}.items():")
        self.scalar(depth + 2, "string", key)
        self.write(depth + 2, schema["values"], item, namespace)
        self.emit(depth, "ap(0)")

    def array(self, depth: int, schema: dict[str, Any], value: str, namespace: str) -> None:
        self.emit(depth, f"if type({value}) is not list: raise OffPath")
        self.emit(depth, f"if {value}:")  # one block of all items, then the empty block, as for maps
        self.varint(depth + 1, f"len({value}) << 1")
        item = self.fresh()
        self.emit(depth + 1, f"for {item} in {value}:")
        self.write(depth + 2, schema["items"], item, namespace)
        self.emit(depth, "ap(0)")

    def scalar(self, depth: int, kind: str, value: str) -> None:
        if kind in _BOUNDS:
            low, high = _BOUNDS[kind]
            self.emit(depth, f"if type({value}) is not int or not {low} <= {value} <= {high}: raise OffPath")
            self.varint(depth, f"({value} << 1) ^ ({value} >> 63)")
        elif kind in ("string", "bytes"):
            self.emit(depth, f"if type({value}) is not {'str' if kind == 'string' else 'bytes'}: raise OffPath")
            data = value
            if kind == "string":
                data = self.fresh()
                self.emit(depth, f"{data} = {value}.encode()")
            self.sized(depth, data)
        elif kind == "double":
            self.emit(depth, f"if type({value}) is not float: raise OffPath")
            self.emit(depth, f"ext(pack_double({value}))")
        elif kind == "boolean":
            self.emit(depth, f"if {value} is True: ap(1)")
            self.emit(depth, f"elif {value} is False: ap(0)")
            self.emit(depth, "else: raise OffPath")
        elif kind == "null":
            self.emit(depth, f"if {value} is not None: raise OffPath")
        else:
            raise NotImplementedError(f"Avro type {kind!r}")


def compile_fast_path(schema: dict[str, Any]) -> Callable[[dict[str, Any]], bytes]:
    """The generated writer alone: raises ``_OffPath`` where fastavro must write the value."""
    src = _Source()
    src.write(2, schema, "d")
    text = "def write(d):\n    out = bytearray()\n    ap = out.append\n    ext = out.extend\n    try:\n"
    text += "\n".join(src.lines) + "\n    except KeyError:\n        raise OffPath from None\n    return bytes(out)\n"
    scope: dict[str, Any] = {"OffPath": _OffPath, "pack_double": struct.Struct("<d").pack}
    exec(compile(text, f"<avro writer {schema.get('name')}>", "exec"), scope)  # noqa: S102 - our own generated code
    return scope["write"]


def fastavro_body(parsed: Any, value: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, value)
    return buf.getvalue()


@cache
def body_writer(contract: str, engine: str | None = None) -> Callable[[dict[str, Any]], bytes]:
    """The contract's schemaless Avro body of a value, as ``fastavro.schemaless_writer`` writes it.
    ``engine``: ``"native"`` or ``"python"``; None: the process's engine (:mod:`streams.native`)."""
    parsed = parsed_schema(contract)
    native = NATIVE if engine is None else load_native(engine)
    if native is not None:
        try:
            native_write = native.AvroWriter(schema_text(contract)).write
        except ValueError:  # a type the native writer does not take: the generated Python writer does
            native_write = None
        if native_write is not None:

            def write_native(value: dict[str, Any]) -> bytes:
                body = native_write(value)
                return body if body is not None else fastavro_body(parsed, value)

            return write_native
    fast = compile_fast_path(json.loads(schema_text(contract)))

    def write(value: dict[str, Any]) -> bytes:
        try:
            return fast(value)
        except _OffPath:
            return fastavro_body(parsed, value)

    return write

