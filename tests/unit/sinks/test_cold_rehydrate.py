"""Rehydration reads each cold object as far as it can: a damaged object costs only its damaged part.

The objects are written as the cold tier keeps them (gzip NDJSON, an Avro container); each is then cut
short or spoiled, and ``object_actions`` (what ``sluice rehydrate`` indexes of one object) must give the
events before the damage and say, naming the object, what could not be read.
"""

from __future__ import annotations

import gzip
import io
import json

import fastavro

from streams.config import RoutingSettings
from streams.sinks.elasticsearch.request import IndexNamer
from streams.sinks.objectstore.rehydrate import object_actions

NAMER = IndexNamer(RoutingSettings())
T0 = 1_700_000_000_000
EVENTS = [{"event_id": f"logs.raw/0/{i}", "timestamp": T0 + i, "project": "default", "message": f"line {i}"}
          for i in range(200)]
SCHEMA = fastavro.parse_schema({"type": "record", "name": "E", "fields": [
    {"name": "event_id", "type": "string"}, {"name": "timestamp", "type": "long"},
    {"name": "project", "type": "string"}, {"name": "message", "type": "string"}]})


def _actions(key: str, body: bytes) -> tuple[list[str], list[str]]:
    actions, errors = object_actions("cold", key, body, NAMER, None, 0, T0 * 2)
    return [a["_id"] for a in actions], errors


def _ndjson(lines: list[bytes]) -> bytes:
    return gzip.compress(b"\n".join(lines) + b"\n")


def test_a_cut_gzip_object_gives_the_events_before_the_cut() -> None:
    body = _ndjson([json.dumps(e).encode() for e in EVENTS])
    ids, errors = _actions("p/t/a.ndjson.gz", body[: len(body) * 2 // 3])
    assert ids and ids == [e["event_id"] for e in EVENTS[:len(ids)]]
    assert len(errors) >= 1 and all(e.startswith("s3://cold/p/t/a.ndjson.gz: ") for e in errors)
    assert any("cut short" in e for e in errors)


def test_a_bad_line_in_a_gzip_object_costs_that_line() -> None:
    lines = [json.dumps(e).encode() for e in EVENTS[:3]]
    body = _ndjson([lines[0], b"{not json", b"[1, 2]", b'{"event_id": "x"}', lines[1],
                    b'{"event_id": "y", "timestamp": "no time"}', lines[2]])
    ids, errors = _actions("p/t/b.ndjson.gz", body)
    assert ids == [e["event_id"] for e in EVENTS[:3]]
    assert len(errors) == 4, errors  # the garbage, the list, the event with no time, the unreadable time


def test_a_damaged_gzip_stream_is_reported_not_raised() -> None:
    body = bytearray(_ndjson([json.dumps(e).encode() for e in EVENTS]))
    body[len(body) // 2] ^= 0xFF
    ids, errors = _actions("p/t/c.ndjson.gz", bytes(body))
    assert errors and ids == [e["event_id"] for e in EVENTS[:len(ids)]]
    assert _actions("p/t/d.ndjson.gz", b"not gzip at all")[1]


def test_a_cut_avro_object_gives_the_events_before_the_cut() -> None:
    buf = io.BytesIO()
    fastavro.writer(buf, SCHEMA, EVENTS, sync_interval=512)
    body = buf.getvalue()
    ids, errors = _actions("p/t/e.avro", body[: len(body) * 2 // 3])
    assert ids and ids == [e["event_id"] for e in EVENTS[:len(ids)]]
    assert len(errors) == 1 and "unreadable after" in errors[0]
    assert _actions("p/t/f.avro", b"Obj\x01garbage")[1]
