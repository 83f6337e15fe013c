"""Cold sink throughput against raw PUTs of the same bytes to the same server, in one run.

    .venv/bin/python tests/perf/cold_sink_bench.py [--events 60000] [--codec deflate] [--concurrency 4]

1. The sink: records (real corpus events, repeated with fresh ids) are added to a ColdSink and
   flushed as the runner would; timed from the first add to the last acknowledgement. This
   includes Avro encoding, compression, manifests and the PUT rate controller.
2. Raw: the very objects the sink stored are read back (untimed) and PUT to another bucket of the
   same server with the same concurrency, timed.

MB/s are of object bytes. The ratio sink/raw is the goal (>= 0.9). Results go to
bench-results/cold_sink.md. Needs the local stack (`sluice stack up`).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from streams.clients import s3_client
from streams.config import REPO_ROOT, load_settings
from streams.sinks.base import SinkRecord
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.objectstore.testing import corpus_events

CORPUS = REPO_ROOT.parent / "shared" / "corpus"
PARTITIONS = 4


def records(n: int, one_group: bool = False) -> list[SinkRecord]:
    """``one_group``: a steady single-task stream (one day, one node role), so objects are large;
    otherwise the corpus mix, whose event times span years and roles: many small objects."""
    base = corpus_events(CORPUS, "bench", "run-bench", ingest_step_ms=10)
    out = []
    for i in range(n):
        event = dict(base[i % len(base)])
        event["event_id"] = f"{event['event_id']}#{i // len(base)}"
        event["ingest_ts"] = base[0]["ingest_ts"] + i * 10
        if one_group:
            event["timestamp"] = event["ingest_ts"]
            event["source"] = {**event["source"], "node_role": "trainer"}
        size = 200 + len(event["message"])
        out.append(SinkRecord("logs.events.bench", i % PARTITIONS, i // PARTITIONS, None, event, b"", "bench", size))
    return out


async def run_sink(sink: ColdSink, recs: list[SinkRecord]) -> float:
    await sink.start()
    acked = 0
    started = time.perf_counter()
    for rec in recs:
        sink.add(rec)
        if sink.due(time.monotonic()):
            acked += len((await sink.flush(time.monotonic())).acked)
    sink.begin_drain()
    while sink.buffered():
        acked += len((await sink.flush(time.monotonic())).acked)
        await asyncio.sleep(0)
    elapsed = time.perf_counter() - started
    assert acked == len(recs), (acked, len(recs))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=60_000)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rotate-records", type=int, default=5_000)
    parser.add_argument("--one-group", action="store_true", help="one task/day/role: large objects")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench-results" / "cold_sink.md")
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    settings = load_settings()
    settings = settings.model_copy(update={"object_store": settings.object_store.model_copy(
        update={"default_bucket": f"bench-cold-{run}"})})
    conf = ColdSinkSettings(codec=args.codec, upload_concurrency=args.concurrency,  # type: ignore[arg-type]
                            rotate_records=args.rotate_records, rotate_interval_s=10**6, idle_flush_s=10**6,
                            puts_per_s=10_000, put_bytes_per_s=10**10, lifecycle_enabled=False)
    recs = records(args.events, args.one_group)
    raw_in = sum(r.size for r in recs)

    sink = ColdSink(settings, conf)
    sink_s = asyncio.run(run_sink(sink, recs))
    s3 = s3_client(settings.object_store)
    bucket = settings.object_store.default_bucket
    keys = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", []) if o["Key"].endswith(".avro")]
    bodies = {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}
    object_bytes = sum(len(b) for b in bodies.values())

    raw_bucket = f"bench-raw-{run}"
    s3.create_bucket(Bucket=raw_bucket)
    started = time.perf_counter()
    with ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(lambda kv: s3.put_object(Bucket=raw_bucket, Key=kv[0], Body=kv[1]), bodies.items()))
    raw_s = time.perf_counter() - started

    mb = object_bytes / 1e6
    sink_mbps, raw_mbps = mb / sink_s, mb / raw_s
    ratio = sink_mbps / raw_mbps
    kind = "one task/day/role" if args.one_group else "corpus mix of days and roles"
    sink_cell = f"{sink_s:.2f} s, **{sink_mbps:.1f} MB/s** ({len(recs) / sink_s:,.0f} events/s)"
    report = f"""# Cold sink benchmark

{datetime.now(UTC).isoformat(timespec="seconds")} on {platform.node()} ({platform.machine()}, Python
{platform.python_version()}), against {settings.object_store.endpoint_url} (S3Proxy, local filesystem).

Command: `.venv/bin/python tests/perf/cold_sink_bench.py --events {args.events} --codec {args.codec}
--concurrency {args.concurrency} --rotate-records {args.rotate_records}{" --one-group" if args.one_group else ""}`

| | value |
|---|---|
| events (real corpus events, repeated; {kind}) | {len(recs):,} |
| record bytes in | {raw_in / 1e6:.1f} MB |
| objects stored (+ as many manifests) | {len(bodies)} |
| object bytes ({args.codec}) | {mb:.1f} MB |
| sink: add + encode + upload + manifests | {sink_cell} |
| raw PUTs of the same bytes, same concurrency ({args.concurrency}) | {raw_s:.2f} s, **{raw_mbps:.1f} MB/s** |
| **ratio sink / raw** (goal >= 0.9) | **{ratio:.2f}** |

Reading (as of the first measurement, 2026-11-29): the goal is NOT met. The sink is CPU-bound,
not store-bound: re-encoding decoded LogEvent dicts with fastavro costs ~20 us per event (about
0.6 s per 30,000 events with codec null, 0.86 s with deflate), while the local S3Proxy takes the
resulting bytes at 10-200 MB/s. With the corpus mix (event times over years, three node roles)
segments split into many small objects, and each carries a manifest PUT. The next step is to skip
the re-encode: the record's Kafka value already holds the Avro binary body (after the 5-byte
Confluent header); when its schema id is the contract's, blocks can be built by concatenation and
compression alone.
"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    print(report)


if __name__ == "__main__":
    main()
