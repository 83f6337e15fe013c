"""The per-line path's engine: the native one (:mod:`streams.native`) where it is built, else Python.

What runs natively answers exactly as the Python core does, or hands the record to it: a record the
native decoder is not sure of (an envelope, a corrupt Avro body, a CRI time in other scripts' digits)
is decoded by :func:`streams.assemble.decode.decode_record`, so the outputs never depend on the engine.
A differential test (``tests/unit/native``) runs both over the corpus, the agents' records and
generated hostile input and requires the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from streams.assemble import rules as R
from streams.assemble.decode import SchemaLookup, avro_lines_at_most, decode_record
from streams.assemble.firstchar import first_chars
from streams.assemble.lines import SOURCE_FIELDS, RawLine
from streams.assemble.merger import OLD_MODES, OLD_PANIC_MODES, OLD_TABLE_MODES
from streams.assemble.rust_regex import Untranslatable, translate
from streams.assemble.times import MAX_MS
from streams.native import NATIVE, load_native
from streams.widetext import wide_text

# (value, key, schema lookup, the most lines the record may hold or None: streams.errors.TooManyLines past it)
Decode = Callable[[bytes | None, bytes | None, SchemaLookup | None, int | None], list[RawLine]]


def engine_module(engine: str | None) -> ModuleType | None:
    """``"native"``, ``"python"``, or None for the process's choice (``SLUICE_ASSEMBLE__ENGINE``)."""
    return NATIVE if engine is None else load_native(engine)


def _logical_types(schema: Any, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(schema, dict):
        if "logicalType" in schema:
            found.append(schema)
        for v in schema.values():
            _logical_types(v, found)
    elif isinstance(schema, list):
        for v in schema:
            _logical_types(v, found)
    return found


def raw_batch_mode(native: ModuleType, schema: Any) -> int:
    """How the native decoder may read records of ``schema`` (a lookup's answer): as the RawBatch
    contract with its times as longs, as the contract with timestamp-millis times (which fastavro turns
    into datetimes, and the Python decoder back into ms), or not at all."""
    import fastavro

    from streams.contracts import parsed_schema

    try:
        if fastavro.schema.to_parsing_canonical_form(schema) != fastavro.schema.to_parsing_canonical_form(
                parsed_schema("raw_batch")):
            return int(native.AVRO_OTHER)
        ts = schema["fields"][2]["type"]["items"]["fields"][2]["type"][1]
        sent = schema["fields"][3]["type"][1]
    except (TypeError, KeyError, IndexError, ValueError, AttributeError):
        return int(native.AVRO_OTHER)
    logical = _logical_types(schema, [])
    if not logical:
        return int(native.AVRO_PLAIN)
    if (len(logical) == 2 and logical[0] is ts and logical[1] is sent
            and all(t.get("logicalType") == "timestamp-millis" and t.get("type") == "long" for t in logical)):
        return int(native.AVRO_LOGICAL)
    return int(native.AVRO_OTHER)


class NativeDecode:
    """``decode_record`` with the native decoder in front (one per assembler: schema ids are cached)."""

    def __init__(self, native: ModuleType) -> None:
        self.native = native
        self.decoder = native.LineDecoder(RawLine, list(SOURCE_FIELDS), MAX_MS)
        self._modes: dict[int, int] = {}

    def __call__(self, value: bytes | None, key: bytes | None = None,
                 schema_lookup: SchemaLookup | None = None, max_lines: int | None = None) -> list[RawLine]:
        if value:
            mode = 0
            if value[0] == 0 and len(value) >= 5 and schema_lookup is not None:
                schema_id = int.from_bytes(value[1:5], "big")
                mode = self._modes.get(schema_id, -1)
                if mode < 0:
                    # Asked once for the record, as the Python decoder asks; should the record go to it,
                    # it gets the same answer (a schema, None, or the failure: a registry outage included).
                    schema_lookup = _answered(schema_lookup, schema_id)
                    mode = self._mode(schema_id, schema_lookup)
                if mode and max_lines is not None and len(value) - 5 > max_lines:
                    # counted before the extension builds every line (the Python decoder counts the same)
                    avro_lines_at_most(value, schema_lookup(schema_id), max_lines)
            # (UTF-16 and UTF-32 are decoded to text by the Python decoder alone)
            lines = self.decoder.decode(value, mode) if wide_text(value) is None else None
            if lines is not None:
                return lines
        return decode_record(value, key, schema_lookup, max_lines)

    def _mode(self, schema_id: int, schema_lookup: SchemaLookup) -> int:
        try:
            schema = schema_lookup(schema_id)
        except Exception:  # noqa: BLE001 - the Python decoder gets the same failure and answers it
            return 0
        if schema is None:
            return 0
        mode = raw_batch_mode(self.native, schema)
        self._modes[schema_id] = mode
        return mode


def _answered(schema_lookup: SchemaLookup, schema_id: int) -> SchemaLookup:
    """``schema_lookup`` asked now for ``schema_id``; its answer, given again on every call."""
    try:
        schema = schema_lookup(schema_id)
    except Exception as exc:  # noqa: BLE001 - replayed to whoever asks, as the lookup gave it
        error = exc

        def failed(_schema_id: int) -> object:
            raise error

        return failed
    return lambda _schema_id: schema


def decoder(engine: str | None = None) -> Decode:
    """The record decoder of ``engine``."""
    native = engine_module(engine)
    return decode_record if native is None else NativeDecode(native)


def merger_state(native: ModuleType) -> Any:
    """The native reader and writer of the merger's saved state, given the modes of ``rules.MODES`` and the
    names older states used (the Python core's own tables: nothing about them is written in Rust)."""
    return native.MergerState(list(R.MODES), OLD_MODES, OLD_TABLE_MODES, OLD_PANIC_MODES, list(SOURCE_FIELDS))


def tried_on(pattern: str, ascii_only: bool) -> str | None:
    """The first characters the Python core tries ``pattern`` on (``firstchar.Dispatch``; "\\x80": any
    non-ASCII one; None: any). ``ascii_only``: a table the merger never tries on a non-ASCII character."""
    firsts = first_chars(pattern)
    if firsts is None:
        return "".join(map(chr, range(128))) if ascii_only else None
    return "".join(sorted(c for c in firsts if not (ascii_only and c == "\x80")))


def line_reader(native: ModuleType) -> Any:
    """The native reader of a line's record heads and grammar token (the merger's ``_split_head`` and
    ``_token``), built from ``rules.py``'s tables; None when a pattern has no Rust equivalent (the
    Python core then reads every line)."""
    try:
        heads = [(f"h_{n}", translate(p), tried_on(p, True)) for n, p, _r in R.HEADS]
        common = [t for t in R.TOKENS if t[0] in R.COMMON_TOKENS]
        tokens = [(t[0], translate(t[1], ends_matter=False), tried_on(t[1], False)) for t in common if len(t) == 2]
        gated = [(t[2], R.TOKEN_ORDER[t[0]], t[0], translate(t[1], ends_matter=False)) for t in common if len(t) > 2]
    except Untranslatable:
        return None
    return native.LineReader(heads, [bool(r) for _n, _p, r in R.HEADS], set(R.EVERY_LINE), tokens,
                             [R.TOKEN_ORDER[n] for n, _p, _f in tokens], gated)
