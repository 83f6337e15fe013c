"""Cold sink throughput against raw PUTs of the same bytes to the same server, in one run.

    .venv/bin/python tests/perf/cold_sink_bench.py [--events 60000] [--codec deflate] [--concurrency 4] [--rounds 3]
        [--latency-ms 2]

1. The sink: records (real corpus events, repeated with fresh ids) are added to a ColdSink and
   flushed as the runner would (``due`` asked once per poll batch of ``--batch`` records); timed
   from the first add to the last acknowledgement. Each record carries its Kafka value as the
   assemble stage writes it (Confluent wire format, the contract's registered schema id), so the
   sink passes the Avro bodies through; ``--reencode`` drops the values to time the re-encoding
   path instead. This includes encoding, compression, manifests and the PUT rate controller.
   Decoding happens before the sink, in the record source; it is timed apart (both decoders).
2. Raw: the very objects the sink stored are read back (untimed) and PUT to another bucket of the
   same server with the same concurrency, timed.

``--rounds`` (3) repeats both, alternating which goes first (the store server, a JVM, is faster once
warm, and whichever phase ran first used to pay for it); the ratio is the median of the rounds'.

``--latency-ms`` puts the store behind Toxiproxy (latency_proxy.py) with that delay each way, for both
phases: on loopback a PUT costs only CPU, and a real store is a network away.

MB/s are of object bytes. The ratio sink/raw is the goal (>= 0.9). Both phases also report CPU
seconds: this process's (all threads) and the object store server's (/proc/<pid>/stat), because on a
small machine where the server shares the cores, CPU is what the two runs compete for. Results go
to bench-results/cold_sink.md. Needs the local stack (`python -m devtools stack up`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import platform
import statistics
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import fastavro
from latency_proxy import latency_proxy  # the sibling script's helper

from devtools import CORPUS_DIR
from devtools.stack.base import cpu_seconds
from devtools.stack.manager import services
from devtools.testing.objectstore import corpus_events
from streams.clients import registry_client, s3_client
from streams.config import REPO_ROOT, Settings, load_settings
from streams.contracts import parsed_schema, schema_text
from streams.sinks.base import SinkRecord
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.objectstore.store import ObjectStore

CORPUS = CORPUS_DIR
PARTITIONS = 4
TOPIC = "logs.events.bench"


def contract_id(settings: Settings) -> int:
    """The LogEvent contract's schema id, registered under the bench topic's subject as producers do."""
    from confluent_kafka.schema_registry import Schema

    return int(registry_client(settings.registry).register_schema(f"{TOPIC}-value",
                                                                   Schema(schema_text("log_event"), "AVRO")))


def wire_value(schema_id: int, event: dict) -> bytes:
    buf = io.BytesIO()
    buf.write(b"\0" + schema_id.to_bytes(4, "big"))
    fastavro.schemaless_writer(buf, parsed_schema("log_event"), event)
    return buf.getvalue()


def records(n: int, one_group: bool = False, schema_id: int | None = None) -> list[SinkRecord]:
    """``one_group``: a steady single-task stream (one day, one node role), so objects are large;
    otherwise the corpus mix, whose event times span years and roles: many small objects.
    ``schema_id``: give each record its wire-format value (else an empty one: re-encoded)."""
    base = corpus_events(CORPUS, "bench", "run-bench", ingest_step_ms=10)
    out = []
    for i in range(n):
        event = dict(base[i % len(base)])
        event["event_id"] = f"{event['event_id']}#{i // len(base)}"
        event["ingest_ts"] = base[0]["ingest_ts"] + i * 10
        if one_group:
            event["timestamp"] = event["ingest_ts"]
            event["source"] = {**event["source"], "node_role": "trainer"}
        raw = wire_value(schema_id, event) if schema_id is not None else b""
        size = len(raw) if raw else 200 + len(event["message"])
        out.append(SinkRecord(TOPIC, i % PARTITIONS, i // PARTITIONS, None, event, raw, "bench", size))
    return out


def decode_us(settings: Settings, recs: list[SinkRecord]) -> tuple[float, float]:
    """Microseconds per record to decode the values: the record source's decoder, and confluent's."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.sinks.kafka_io import WireDecoder

    registry = registry_client(settings.registry)
    confluent = AvroDeserializer(registry)
    ours = WireDecoder(registry, confluent)
    ctx = SerializationContext(TOPIC, MessageField.VALUE)
    sample = [r.raw for r in recs[:10_000]]
    out = []
    for decode in (ours, confluent):
        decode(sample[0], ctx)  # schema fetched outside the timing
        started = time.perf_counter()
        for raw in sample:
            decode(raw, ctx)
        out.append((time.perf_counter() - started) / len(sample) * 1e6)
    return out[0], out[1]


class CpuMeter:
    """CPU seconds of this process and of the object store server over a ``with`` block."""

    def __init__(self, store_pid: int | None) -> None:
        self.store_pid = store_pid
        self.own = self.store = 0.0

    def _store(self) -> float:
        return cpu_seconds(self.store_pid) if self.store_pid else 0.0

    def __enter__(self) -> CpuMeter:
        self._own0, self._store0 = time.process_time(), self._store()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.own, self.store = time.process_time() - self._own0, self._store() - self._store0

    def cell(self) -> str:
        server = f"{self.store:.2f} s" if self.store_pid else "n/a (not the local stack)"
        return f"{self.own:.2f} s here + {server} in the store server"


def store_pid(settings: Settings) -> int | None:
    return next((s.pid() for s in services(settings, log=lambda _m: None) if s.name == "objectstore"), None)


async def run_sink(sink: ColdSink, recs: list[SinkRecord], batch: int) -> float:
    await sink.start()
    acked = 0
    started = time.perf_counter()
    for i, rec in enumerate(recs, 1):
        sink.add(rec)
        if i % batch == 0:
            if sink.due(time.monotonic()):
                acked += len((await sink.flush(time.monotonic())).acked)
            await asyncio.sleep(0)  # the runner awaits its next poll here: uploads in flight go on
    sink.begin_drain()
    while sink.buffered():
        acked += len((await sink.flush(time.monotonic())).acked)
        await asyncio.sleep(0)
    elapsed = time.perf_counter() - started
    assert acked == len(recs), (acked, len(recs))
    return elapsed


def sink_round(settings: Settings, conf: ColdSinkSettings, recs: list[SinkRecord], batch: int,
               bucket: str) -> tuple[float, CpuMeter]:
    store = settings.object_store.model_copy(update={"default_bucket": bucket})
    sink = ColdSink(settings.model_copy(update={"object_store": store}), conf)
    with CpuMeter(store_pid(settings)) as cpu:
        seconds = asyncio.run(run_sink(sink, recs, batch))
    return seconds, cpu


def raw_round(settings: Settings, bodies: dict[str, bytes], concurrency: int, bucket: str) -> tuple[float, CpuMeter]:
    s3 = s3_client(settings.object_store)
    s3.create_bucket(Bucket=bucket)
    with CpuMeter(store_pid(settings)) as cpu:
        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda kv: s3.put_object(Bucket=bucket, Key=kv[0], Body=kv[1]), bodies.items()))
        seconds = time.perf_counter() - started
    return seconds, cpu


def stored_objects(settings: Settings, bucket: str) -> dict[str, bytes]:
    store = ObjectStore(settings.object_store, ColdSinkSettings())
    return {k: store.get(bucket, k) for k in store.list_keys(bucket, "") if k.endswith(".avro")}


def headline(ratio: float, rounds: int, latency_ms: int) -> str:
    """The report's two rows that `python -m devtools bench` reads (streams/cli/bench.py, ``cold_run``)."""
    network = f"through Toxiproxy, {latency_ms} ms each way" if latency_ms else "loopback (a PUT costs CPU only)"
    return (f"| **ratio sink / raw** (goal >= 0.9), median of {rounds} rounds | **{ratio:.2f}** |\n"
            f"| network to the store | {network} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=60_000)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rotate-records", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3, help="sink and raw alternate which goes first; "
                        "the ratio is the median of the rounds'")
    parser.add_argument("--one-group", action="store_true", help="one task/day/role: large objects")
    parser.add_argument("--batch", type=int, default=2000, help="records added between due() checks "
                        "(the runner's max_poll)")
    parser.add_argument("--reencode", action="store_true", help="records without their Kafka value: "
                        "every event re-encoded (the path before pass-through)")
    parser.add_argument("--latency-ms", type=int, default=0, help="the store behind Toxiproxy with this latency "
                        "each way (0: loopback)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench-results" / "cold_sink.md")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        settings = load_settings()
        if args.latency_ms:
            url = stack.enter_context(latency_proxy(settings.object_store.endpoint_url, args.latency_ms))
            settings = settings.model_copy(update={"object_store": settings.object_store.model_copy(
                update={"endpoint_url": url})})
        bench(args, settings)


def bench(args: argparse.Namespace, settings: Settings) -> None:
    run = uuid.uuid4().hex[:8]
    conf = ColdSinkSettings(codec=args.codec, upload_concurrency=args.concurrency,
                            rotate_records=args.rotate_records, rotate_interval_s=10**6, idle_flush_s=10**6,
                            puts_per_s=10_000, put_bytes_per_s=10**10, lifecycle_enabled=False)
    recs = records(args.events, args.one_group, None if args.reencode else contract_id(settings))
    raw_in = sum(r.size for r in recs)

    # Rounds alternate which phase goes first: the store server (a JVM) is faster once warm, and whichever
    # ran first used to pay for it. Round 1 starts with the sink (the raw PUTs need its objects).
    rows, ratios = [], []
    bodies: dict[str, bytes] = {}
    for r in range(args.rounds):
        got: dict[str, tuple[float, CpuMeter]] = {}
        for phase in (("sink", "raw") if r % 2 == 0 else ("raw", "sink")):
            if phase == "sink":
                got["sink"] = sink_round(settings, conf, recs, args.batch, f"bench-cold-{run}-{r}")
                bodies = bodies or stored_objects(settings, f"bench-cold-{run}-{r}")
            else:
                got["raw"] = raw_round(settings, bodies, args.concurrency, f"bench-raw-{run}-{r}")
        (sink_s, sink_cpu), (raw_s, raw_cpu) = got["sink"], got["raw"]
        ratios.append(raw_s / sink_s)  # MB/s over MB/s of the same bytes
        first = "sink" if r % 2 == 0 else "raw"
        rows.append(f"| {r + 1} ({first} first) | {sink_s:.2f} s ({len(recs) / sink_s:,.0f} events/s) | "
                    f"{raw_s:.2f} s | {raw_s / sink_s:.2f} | {sink_cpu.cell()} | {raw_cpu.cell()} |")
        print(rows[-1])
    decode_cell = "n/a (--reencode)"
    if not args.reencode:
        ours_us, confluent_us = decode_us(settings, recs)
        decode_cell = f"{ours_us:.0f} us/record (confluent AvroDeserializer: {confluent_us:.0f} us/record)"

    mb = sum(len(b) for b in bodies.values()) / 1e6
    ratio = statistics.median(ratios)
    kind = "one task/day/role" if args.one_group else "corpus mix of days and roles"
    extra = "".join([" --one-group" if args.one_group else "", f" --batch {args.batch}" if args.batch != 2000 else "",
                     " --reencode" if args.reencode else "",
                     f" --latency-ms {args.latency_ms}" if args.latency_ms else ""])
    report = f"""# Cold sink benchmark

{datetime.now(UTC).isoformat(timespec="seconds")} on {platform.node()} ({platform.machine()}, Python
{platform.python_version()}), against {settings.object_store.endpoint_url} (S3Proxy, local filesystem).

Command: `.venv/bin/python tests/perf/cold_sink_bench.py --events {args.events} --codec {args.codec}
--concurrency {args.concurrency} --rotate-records {args.rotate_records} --rounds {args.rounds}{extra}`

| | value |
|---|---|
| events (real corpus events, repeated; {kind}) | {len(recs):,} |
| bodies | {"re-encoded from decoded events" if args.reencode else "passed through from the Kafka values"} |
| record bytes in | {raw_in / 1e6:.1f} MB |
| objects stored (each with its manifest as user metadata, same PUT) | {len(bodies)} |
| object bytes ({args.codec}, level {conf.codec_level}) | {mb:.1f} MB |
{headline(ratio, args.rounds, args.latency_ms)}
| decode in the record source, before the sink (not in the sink's time) | {decode_cell} |
| machine | {os.cpu_count()} cores, shared by this process and the store server |

Each round: the sink (add + encode + upload of every record, into a bucket of its own) and raw PUTs of the
objects it stored, same bytes, same concurrency ({args.concurrency}), into another; MB/s of object bytes.

| round | sink | raw PUTs | sink / raw | sink CPU | raw PUTs CPU |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Reading: the sink writes each object in one PUT (its manifest rides as user
metadata), passes the records' Avro bodies through, compresses 64 kB blocks at zlib level 3, builds a
segment's objects one after another and queues each one's PUT as soon as it is built, on
`upload_concurrency` threads of its own. On loopback a PUT costs only CPU, and the sink's own work
(placing records, compressing) runs on the same cores as the store server and the PUTs' client side,
so the ratio is bounded by raw CPU / (raw CPU + the sink's own CPU): compare the CPU columns. Behind a
network (`--latency-ms`) the PUT slots stay full and that work overlaps the waiting; what is left is
the time before the first segment closes (no object exists before it) and PUTs slowed a little by the
sink's other threads.
"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    print(report)


if __name__ == "__main__":
    main()
