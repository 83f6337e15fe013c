"""Decode one raw Kafka record (value bytes + key) into lines.

Accepted values, told apart by their first byte, then by their shape:

- Avro in the Confluent wire format: magic byte 0, 4-byte big-endian schema id, then a
  ``sluice.v1.RawBatch`` body. The schema comes from an injected ``schema_lookup(schema_id)``
  so this module does no registry I/O.
- ``{``: a JSON object: an agent's envelope (docker json-file, Fluent Bit, Filebeat, Vector,
  rsyslog's JSON templates: ``envelopes.py``), OTLP JSON (``otlp.py``), else the log line itself
  (e.g. ms-swift ``logging.jsonl``).
- ``"``: a JSON string, the OpenTelemetry Collector's ``raw`` log encoding of a string body.
- ``\\n``: OTLP protobuf (``otlp_proto``), when the bytes frame as one.
- ``<``: RFC 5424 syslog (rsyslog's protocol-23 template).
- a digit: a CRI line ``<RFC3339Nano> <stream> <P|F> <text>``.
- Plain text: anything else. Invalid UTF-8 becomes U+FFFD, NUL bytes are removed, never a crash.

Any of them in UTF-16 or UTF-32, told by a byte-order mark or the NULs of ASCII text (``widetext.py``),
is first decoded to text.

What each agent really sends is recorded in ``tests/fixtures/agents``; the unit tests hold that
decoding those records gives the same events as ``sluice parse`` of the file the agent tailed.
``\\r`` progress redraws (tqdm) are collapsed to the final state of the line here, once.
"""

from __future__ import annotations

import codecs
import datetime
import io
import json
import re
import struct
from collections.abc import Callable

import fastavro

from streams.assemble import jsonlimits, jsontext, msgpack_records, otlp
from streams.assemble.envelopes import json_envelope, with_inner
from streams.assemble.lift import LONG_MAX
from streams.assemble.lines import SOURCE_FIELDS, RawLine, empty_source
from streams.assemble.merger import split_prefix, terminal_text
from streams.assemble.syslog import rfc5424_line
from streams.assemble.timefmt import agent_ms, rfc3339_ms
from streams.errors import DecodeError, DependencyFailure, TooManyLines
from streams.widetext import wide_text

__all__ = ["SchemaLookup", "decode_record", "final_redraw", "rfc3339_ms"]

SchemaLookup = Callable[[int], object]

_CRI_RE = re.compile(r"^(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) ([PF]) ?(.*)\Z", re.S)


def final_redraw(text: str) -> str:
    """Keep only what a terminal would show last: the final non-empty ``\\r`` segment, after the
    per-line prefix a relay wrote before the whole line (torchrun's ``[rank3]:``, Ray's, a collector's
    time): it is the relay's, not a redraw of the program's (a record that ``tqdm.write`` wrote over
    a bar stays under its process's prefix)."""
    if "\r" not in text:
        return text
    segs = text.split("\r")
    for seg in reversed(segs):
        if seg:
            break
    else:
        return ""
    first = segs[0]
    if first and seg is not first:
        plain = terminal_text(first)  # a relay that colours its prefix (Ray): the colours stay with it
        body = split_prefix(plain)[1]
        if not body.strip():
            return first + seg
        if len(body) < len(plain):
            return plain[:len(plain) - len(body)] + seg
    return seg


def _text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "")  # NULs break Elasticsearch and terminals: keep them out
    return text


def _clean(line: RawLine) -> RawLine:
    """NULs out and ``\\r`` redraws collapsed, in a line an envelope carried."""
    text = line.text
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = final_redraw(text)
    # An agent's numbers past what the contract holds (a time no date holds, an offset past a long, a
    # boolean or a float where an integer belongs) are not believed: the record's own time is used, and
    # the line has no file offset.
    ts = agent_ms(line.ts_ms)
    offset = line.file_offset
    if offset is not None and (offset.__class__ is not int or not 0 <= offset <= LONG_MAX):
        offset = None
    if text is line.text and ts is line.ts_ms and offset is line.file_offset:
        return line
    return RawLine(text, offset, ts, line.source, line.labels, line.partial, line.index, line.level, line.fields)


def _finish(lines: list[RawLine], max_lines: int | None = None) -> list[RawLine]:
    """One RawLine per line, cleaned. An agent that merged lines itself (Fluent Bit's multiline
    parsers, a collector recombine with a newline, Filebeat's multiline) sends them in one field:
    Sluice's merger gets the lines again, so the events follow Sluice's rules and match the file's.
    Only the last piece can be partial. More lines than ``max_lines`` are counted, not built: a JSON
    string of a million ``\\n`` escapes is a million lines, and its record's bytes hold no newline."""
    if len(lines) == 1 and "\n" not in lines[0].text:  # one line per record: the common case
        return [_clean(lines[0])]
    if all("\n" not in ln.text for ln in lines):
        return [_clean(ln) for ln in lines]
    _at_most(len(lines) + sum(ln.text.count("\n") for ln in lines), max_lines)
    out: list[RawLine] = []
    for ln in lines:
        parts = ln.text.split("\n")
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            out.append(_clean(RawLine(part[:-1] if part.endswith("\r") else part, ln.file_offset, ln.ts_ms,
                                      ln.source, ln.labels, ln.partial and last, len(out), ln.level,
                                      ln.fields)))
    return out


def _at_most(lines: int, max_lines: int | None) -> None:
    if max_lines is not None and lines > max_lines:
        raise TooManyLines(lines, max_lines)


def _inner_line(text: str) -> RawLine | None:
    """A docker/CRI line inside an agent's envelope (its tail ran without the container parser)."""
    first = text[0]
    if first == "{":
        if jsonlimits.violation(text) is not None:
            return None  # not parsed: past the limits a parser recurses or balloons (the line is text)
        try:
            obj = jsontext.loads(text)
        except ValueError:
            return None
        return json_envelope(obj, None) if isinstance(obj, dict) else None
    return _cri(text)


def _cri(text: str) -> RawLine | None:
    m = _CRI_RE.match(text[:-1] if text.endswith("\n") else text)
    if not m:
        return None
    src = empty_source()
    src["stream"] = m.group(2)
    body = m.group(4)
    if body.endswith("\r"):
        body = body[:-1]
    return RawLine(final_redraw(body), None, rfc3339_ms(m.group(1)), src, {}, m.group(3) == "P")


def _escaped(raw: bytes) -> str:
    return "".join(chr(0xDC00 + b) for b in raw)


def split_char_edges(line: RawLine, value: bytes) -> RawLine:
    """A CRI line whose body starts with stray UTF-8 continuation bytes, or a ``P`` fragment whose body
    ends in the first bytes of a character: the runtime cut a line inside a character. Those bytes are
    kept as surrogate escapes (U+DC80..U+DCFF, which no decoded text holds otherwise: JSON's lone
    surrogates are replaced) for :mod:`streams.assemble.partials` to decode once the fragments are
    joined; a line that is not joined gets U+FFFD for them, as it did before."""
    if b"\x00" in value or b"\r" in value:  # NULs removed or a redraw collapsed: the text is not the bytes
        return line
    fields = (value[:-1] if value.endswith(b"\n") else value).split(b" ", 3)
    if len(fields) < 3 or fields[2] not in (b"P", b"F"):  # a tag with no space after it: not the bytes' shape
        return line
    body = fields[3] if len(fields) == 4 else b""
    lead = 0
    while lead < min(3, len(body)) and 0x80 <= body[lead] <= 0xBF:
        lead += 1
    tail = b""
    if line.partial:
        for k in range(1, min(3, len(body) - lead) + 1):
            b = body[-k]
            if b >= 0xC0:  # a lead byte: a character's start, whole or cut short
                if codecs.getincrementaldecoder("utf-8")("replace").decode(body[-k:]) == "":
                    tail = body[-k:]
                break
            if b < 0x80:
                break
    text = line.text
    end = len(text) - (1 if tail else 0)
    if not (lead or tail) or text[:lead] != "\ufffd" * lead or end < lead or text[end:] != "\ufffd" * (len(text) - end):
        return line
    return RawLine(_escaped(body[:lead]) + text[lead:end] + _escaped(tail), line.file_offset, line.ts_ms,
                   line.source, line.labels, line.partial, line.index, line.level, line.fields)


def _some(lines: list[RawLine], what: str) -> list[RawLine]:
    """A batch record with no log record in it is a dead letter, not a record that vanishes."""
    if not lines:
        raise DecodeError(f"{what} record holds no log record (resourceLogs[].scopeLogs[].logRecords[])",
                          "corrupt_otlp")
    return lines


def _from_json(obj: dict, raw: bytes, max_lines: int | None) -> list[RawLine]:
    if isinstance(obj.get("resourceLogs"), list):
        return _finish(_some(otlp.json_lines(obj, _inner_line, max_lines), "OTLP JSON"), max_lines)
    line = json_envelope(obj, _inner_line)
    if line is not None:
        return _finish([line], max_lines)
    # a JSON log line written by the application itself (ms-swift logging.jsonl, ...)
    return [RawLine(_text(raw).rstrip("\r\n"), None, None, empty_source(), {})]


def _from_msgpack(obj: dict, max_lines: int | None) -> list[RawLine]:
    line = json_envelope(obj, _inner_line)
    if line is not None:
        return _finish([line], max_lines)
    # the application's own record, packed: its JSON is the line, as the json format would have sent it
    return _finish([RawLine(json.dumps(obj, ensure_ascii=False, separators=(",", ":")), None, None,
                            empty_source(), {})])


def _nul_hole(value: bytes) -> str:
    """What a value that opens with NULs, Avro's magic byte and a schema id of 0, may be instead: a file's
    NUL-filled hole (space a crash left allocated before the data reached the disk: moby/moby#53631,
    fluent/fluent-bit#9771) read by an agent, with or without the line after it."""
    rest = value.lstrip(b"\x00")
    nuls = len(value) - len(rest)
    if nuls < 5:
        return ""
    what = f"{nuls:,} NUL bytes" + (f" and then {len(rest):,} bytes of text" if rest else "")
    return (f": the value is {what}, no Avro: a file's NUL-filled hole (a crash before its data reached the disk) "
            "read by the agent; the bytes are this letter's original")


_HEADS: dict[int, tuple[object, object]] = {}  # id(schema) -> (schema, the reader of its fields before ``lines``)


def _lines_head(schema: object) -> object:
    """A reader schema of the RawBatch's fields before ``lines`` (its source and labels), or None."""
    got = _HEADS.get(id(schema))
    if got is not None and got[0] is schema:
        return got[1]
    head = None
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not (isinstance(fields, list) and all(isinstance(f, dict) for f in fields)):
        fields = []
    names = [f.get("name") for f in fields]
    lines = fields[names.index("lines")].get("type") if "lines" in names else None
    # (only an array's count is where its bytes start: a string's length is no count of lines)
    if isinstance(lines, dict) and lines.get("type") == "array":
        try:
            head = fastavro.parse_schema({"type": "record", "name": "sluice.v1.RawBatchHead",
                                          "fields": fields[:names.index("lines")]})
        except Exception:  # noqa: BLE001 - a schema whose fields do not stand alone: not counted ahead
            head = None
    if len(_HEADS) >= 64:
        _HEADS.clear()
    _HEADS[id(schema)] = (schema, head)
    return head


def avro_lines_at_most(value: bytes, schema: object, max_lines: int | None) -> None:
    """TooManyLines when a RawBatch's ``lines`` array opens with a block of more items than ``max_lines``,
    read from the block's count before any item is: Avro spends 3 bytes on an empty line, and 4 MB of
    them were over a million lines decoded (seconds, hundreds of MB) before the limit was checked."""
    if max_lines is None or len(value) - 5 <= max_lines:  # every line takes a byte at least
        return
    head = _lines_head(schema)
    if head is None:
        return
    buf = io.BytesIO(value)
    buf.seek(5)
    try:
        fastavro.schemaless_reader(buf, head)  # type: ignore[arg-type]
        count, _ = otlp.varint(value, buf.tell(), len(value))
    except Exception:  # noqa: BLE001 - the full read reports what is wrong with the record
        return
    items = abs((count >> 1) ^ -(count & 1))  # zigzag; a negative count is a block with its size in bytes
    _at_most(items, max_lines)


def _off(name: str, value: object, types: tuple[type, ...], want: str, null: bool = True) -> str | None:
    """What is wrong with ``value`` when it is of none of ``types`` (exactly: a bool is no int), nor null where
    ``null`` allows it."""
    if (null and value is None) or value.__class__ in types:
        return None
    return f"{name} is {'null' if value is None else type(value).__name__}, not {want}"


_LONG_TIME = (int, datetime.datetime)  # fastavro gives a timestamp-millis (or -micros) long as a datetime


def _unlike_raw_batch(batch: dict) -> str | None:
    """Where a record read with its registry schema differs from the RawBatch contract's types, or None. A
    registry serves every subject's schemas: an id of another subject's record with a ``lines`` field, or a
    producer's own RawBatch with ``line`` as bytes or ``ts`` as a double, reads without error into values
    that no later step expects (a TypeError there was an ``internal`` letter that named no field). Its lines are
    checked as they are read (:func:`_unlike_line`)."""
    lines, source, labels = batch["lines"], batch.get("source") or {}, batch.get("labels") or {}
    found = (_off("lines", lines, (list,), "an array", null=False)
             or _off("source", source, (dict,), "a record") or _off("labels", labels, (dict,), "a map"))
    for name in SOURCE_FIELDS if not found else ():
        found = found or _off(f"source.{name}", source.get(name), (int,) if name == "rank" else (str,),
                              "an int" if name == "rank" else "a string")
    for v in labels.values() if not found else ():
        found = found or _off("a label's value", v, (str,), "a string", null=False)
    return found


def _unlike_line(i: int, ln: object) -> str:
    """What makes the RawBatch's line ``i`` none of the contract's (its checks are made where each line is read)."""
    if not isinstance(ln, dict):
        return f"lines[{i}] is {'null' if ln is None else type(ln).__name__}, not a record"
    get = ln.get
    return (_off(f"lines[{i}].line", get("line"), (str,), "a string", null=False)
            or _off(f"lines[{i}].file_offset", get("file_offset"), (int,), "a long")
            or _off(f"lines[{i}].ts", get("ts"), _LONG_TIME, "a long (timestamp-millis)") or f"lines[{i}]")


def _not_raw_batch(schema_id: int, unlike: str) -> DecodeError:
    return DecodeError(f"schema id {schema_id} is not a sluice.v1.RawBatch: {unlike} (the producer's schema must "
                       "read as schemas/raw_batch.avsc)", "corrupt_avro")


def _batch_lines(batch: dict, schema_id: int) -> list[RawLine]:
    src = empty_source()
    src.update(batch.get("source") or {})
    labels = dict(batch.get("labels") or {})
    out = []
    for i, ln in enumerate(batch["lines"]):
        text = ln.get("line") if ln.__class__ is dict else None
        if text.__class__ is not str:
            raise _not_raw_batch(schema_id, _unlike_line(i, ln))
        if "\x00" in text:
            text = text.replace("\x00", "")
        ts, offset = ln.get("ts"), ln.get("file_offset")
        if ts is not None and ts.__class__ is not int:
            if ts.__class__ is not datetime.datetime:  # fastavro returns a timestamp-millis long as a datetime
                raise _not_raw_batch(schema_id, _unlike_line(i, ln))
            ts = int(ts.timestamp() * 1000)
        if offset is not None and offset.__class__ is not int:
            raise _not_raw_batch(schema_id, _unlike_line(i, ln))
        out.append(RawLine(final_redraw(text), offset, agent_ms(ts), src, labels, False, i))
    return out


def _from_avro(value: bytes, schema_lookup: SchemaLookup | None, max_lines: int | None) -> list[RawLine]:
    (schema_id,) = struct.unpack(">I", value[1:5])
    try:
        schema = schema_lookup(schema_id) if schema_lookup else None
    except DependencyFailure:  # the registry down or refusing us: no fault of the record's (streams/registry.py)
        raise
    except Exception as exc:  # any other failure of the lookup: the id is not one we can read
        raise DecodeError(f"schema id {schema_id}: lookup failed: {exc}", "schema_not_found") from exc
    if schema is None:
        raise DecodeError(f"schema id {schema_id} is not in the registry{_nul_hole(value)}", "schema_not_found")
    avro_lines_at_most(value, schema, max_lines)
    buf = io.BytesIO(value[5:])
    try:
        batch = fastavro.schemaless_reader(buf, schema)  # type: ignore[arg-type]
    except Exception as exc:
        # fastavro's EOFError says nothing: an array or map count past the bytes left, or a body cut short
        why = str(exc) or ("it ends before the data it announces (an array, map or string longer than the bytes "
                           "left: a body cut short or a corrupt count)" if isinstance(exc, EOFError)
                           else type(exc).__name__)
        raise DecodeError(f"Avro body does not match schema id {schema_id}: {why}", "corrupt_avro") from exc
    if buf.tell() != len(value) - 5:
        raise DecodeError(f"{len(value) - 5 - buf.tell()} trailing bytes after the Avro body", "corrupt_avro")
    if not isinstance(batch, dict) or "lines" not in batch:
        raise DecodeError(f"schema id {schema_id} is not a sluice.v1.RawBatch", "corrupt_avro")
    if batch["lines"].__class__ is list:
        _at_most(len(batch["lines"]), max_lines)
    unlike = _unlike_raw_batch(batch)
    if unlike is not None:
        raise _not_raw_batch(schema_id, unlike)
    return _batch_lines(batch, schema_id)


def decode_record(value: bytes | None, key: bytes | None = None,  # noqa: PLR0911, PLR0912 - first-byte dispatch, flat
                  schema_lookup: SchemaLookup | None = None, max_lines: int | None = None) -> list[RawLine]:
    """Turn one record value into lines; raise ``DecodeError`` when it cannot be read at all, and
    ``TooManyLines`` when it holds more than ``max_lines`` (None: any number)."""
    if value is None or len(value) == 0:
        raise DecodeError("empty record value (tombstone?)", "empty_record")
    wide = wide_text(value)
    if wide is not None:  # UTF-16 or UTF-32 (streams/widetext.py): read on as the UTF-8 of its text
        if not wide:
            return [RawLine("", None, None, empty_source(), {})]
        value = wide.encode("utf-8", "surrogatepass")
    first = value[0]
    if first == 0:
        if len(value) < 5:
            raise DecodeError(f"{len(value)}-byte value starts with the Avro magic byte but has no schema id",
                              "corrupt_avro")
        return _from_avro(value, schema_lookup, max_lines)
    if first == 0x7B:  # '{'
        too_much = jsonlimits.violation(value)
        if too_much is not None:
            raise DecodeError(f"{too_much}: not parsed (a parser would recurse or balloon on it)", "json_limits")
        try:
            obj = jsontext.loads(value)
        except ValueError:
            obj = None  # a plain line that happens to start with '{'
        if isinstance(obj, dict):
            return _from_json(obj, value, max_lines)
    elif first == 0x22:  # '"': the collector's raw encoding JSON-quotes a string body
        try:
            body = jsontext.loads(value)
        except ValueError:
            body = None
        if isinstance(body, str):
            text = body[:-1] if body.endswith("\n") else body
            return _finish([with_inner(RawLine(text[:-1] if text.endswith("\r") else text), _inner_line)], max_lines)
    elif msgpack_records.opens_map(first):
        packed = msgpack_records.record_map(value)
        if packed is not None:
            return _from_msgpack(packed, max_lines)
    elif first == 0x0A and otlp.looks_like_proto(value):
        return _finish(_some(otlp.proto_lines(value, _inner_line, max_lines), "OTLP protobuf"), max_lines)
    elif first == 0x3C:  # '<'
        line = rfc5424_line(_text(value))
        if line is not None:
            return _finish([with_inner(line, _inner_line)], max_lines)
    text = _text(value)
    if 0x30 <= first <= 0x39:
        cri = _cri(text)
        if cri is not None:
            return [split_char_edges(cri, value) if "\ufffd" in cri.text else cri]
    if text.endswith("\n"):
        text = text[:-1]
    if "\n" not in text:  # one line per record (Filebeat-style producers): the common case, kept short
        if text.endswith("\r"):
            text = text[:-1]
        return [RawLine(final_redraw(text) if "\r" in text else text, None, None, empty_source(), {}, False, 0)]
    _at_most(text.count("\n") + 1, max_lines)
    parts = text.split("\n")
    out = []
    for i, part in enumerate(parts):
        out.append(RawLine(final_redraw(part[:-1] if part.endswith("\r") else part), index=i))
    return out

