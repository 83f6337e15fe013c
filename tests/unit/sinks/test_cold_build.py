"""The object builder: stock-readable Avro, deterministic bytes, manifests."""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime

import fastavro
import pytest

from devtools.testing.objectstore import corpus_events
from streams.errors import ConfigError
from streams.sinks.objectstore.build import (
    build_object,
    check_codec,
    codec_available,
    invalid_events,
    manifest_from_metadata,
    sync_marker,
)

KEY = "p/t/2025-11-29/trainer/logs.events.p+0+00000000000000000000.avro"


@pytest.fixture
def events(corpus) -> list[dict]:
    return corpus_events(corpus, "p", "t", limit=300)


def test_same_events_same_key_same_bytes(events) -> None:
    offsets = list(range(len(events)))
    a = build_object(KEY, "logs.events.p", 0, offsets, events)
    b = build_object(KEY, "logs.events.p", 0, offsets, [dict(e) for e in events])
    assert a.body == b.body
    assert a.manifest_bytes() == b.manifest_bytes()
    other = build_object(KEY.replace("+0+", "+1+"), "logs.events.p", 1, offsets, events)
    assert other.body != a.body, "the sync marker comes from the key"
    assert sync_marker(KEY) in a.body


def test_stock_fastavro_reads_the_events_back(events) -> None:
    obj = build_object(KEY, "logs.events.p", 0, list(range(100, 100 + len(events))), events)
    reader = fastavro.reader(io.BytesIO(obj.body))
    assert reader.metadata["avro.codec"] == "deflate"
    back = list(reader)
    assert [e["event_id"] for e in back] == [e["event_id"] for e in events]
    assert back[0]["message"] == events[0]["message"]
    m = obj.manifest
    assert (m["count"], m["first_offset"], m["last_offset"]) == (len(events), 100, 99 + len(events))
    assert m["first_event_ms"] == min(e["timestamp"] for e in events)
    assert m["codec"] == "deflate" and len(m["schema_fingerprint"]) == 64


def test_the_manifest_rides_as_ascii_user_metadata_under_s3s_2kb(events) -> None:
    event = dict(events[0], message="Fehler: Gerät nicht gefunden ✗")
    obj = build_object(KEY, "logs.events.p", 7, [10**15], [event])
    metadata = obj.metadata()
    text = "".join(metadata) + "".join(metadata.values())
    assert text.isascii(), "S3 user metadata is US-ASCII"
    assert len(text.encode()) < 2048, "S3 caps user metadata at 2 KB"
    assert manifest_from_metadata(metadata) == obj.manifest
    assert manifest_from_metadata({}) is None


def test_datetimes_from_the_registry_decoder_are_written(events) -> None:
    event = dict(events[0])
    event["timestamp"] = datetime(2026, 11, 29, 12, tzinfo=UTC)
    event["ingest_ts"] = datetime(2026, 11, 29, 12, 0, 1, tzinfo=UTC)
    obj = build_object(KEY, "logs.events.p", 0, [0], [event])
    assert obj.manifest["first_event_time"] == "2026-11-29T12:00:00.000Z"
    assert next(fastavro.reader(io.BytesIO(obj.body)))["timestamp"] == event["timestamp"]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_codecs_where_available(events, codec) -> None:
    if not codec_available(codec):
        with pytest.raises(ConfigError, match=codec):  # refused at start, never a surprise mid-stream
            check_codec("avro", codec)
        return
    obj = build_object(KEY, "logs.events.p", 0, list(range(50)), events[:50], codec=codec)
    assert len(list(fastavro.reader(io.BytesIO(obj.body)))) == 50


def test_ndjson_gzip_is_deterministic_and_plain(events) -> None:
    a = build_object(KEY, "logs.events.p", 0, list(range(20)), events[:20], fmt="ndjson.gz")
    b = build_object(KEY, "logs.events.p", 0, list(range(20)), events[:20], fmt="ndjson.gz")
    assert a.body == b.body
    lines = gzip.decompress(a.body).decode().splitlines()
    assert [json.loads(line)["event_id"] for line in lines] == [e["event_id"] for e in events[:20]]


def test_invalid_events_are_named(events) -> None:
    bad = dict(events[1])
    bad["line_count"] = "many"
    assert [i for i, _ in invalid_events([events[0], bad])] == [1]


def test_bytes_do_not_depend_on_the_process_hash_seed(corpus) -> None:
    """A restarted worker is a new process: fastavro's parsed schema once leaked set order into the header."""
    import subprocess
    import sys

    script = (
        "import hashlib, pathlib\n"
        "from devtools.testing.objectstore import corpus_events\n"
        "from streams.sinks.objectstore.build import build_object\n"
        f"ev = corpus_events(pathlib.Path({str(corpus)!r}), 'p', 't', limit=40)\n"
        "print(hashlib.sha256(build_object('k', 't', 0, list(range(40)), ev).body).hexdigest())\n"
    )
    digests = {
        subprocess.run([sys.executable, "-c", script], env={**__import__("os").environ, "PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1
