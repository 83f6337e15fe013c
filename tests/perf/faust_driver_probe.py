"""A count-only Faust agent over one-line records, on a Faust transport driver chosen by URL scheme.

    python tests/perf/faust_driver_probe.py [--records 50000] [--drivers kafka,confluent,rdkafka] [--timeout 150]

For each driver (``kafka`` is aiokafka, ``confluent`` faust-streaming's own librdkafka driver,
``rdkafka`` this project's; ``rdkafka+batched`` its batch events; ``bare`` no Faust, a librdkafka
consumer's loop alone), a child process runs a Faust app
whose only agent counts the records it is handed (``stream.events()``; batch events count the
records in each), over a fresh topic of one partition. Once the child says it is ready (its first
timer tick, which Faust runs only once the worker is ready), ``N`` one-line records (corpus lines)
are produced; the child exits once it has counted ``N``, or ``--timeout`` seconds after it started.
It reports what it counted and its CPU-seconds (utime + stime) and wall time from ready to the last
record: records per CPU-second of the driver and Faust's per-message path, nothing else. A child
that never gets ready is fed anyway, after ``--ready-wait`` seconds. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any


def cpu_now() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bare_child(bootstrap: str, topic: str, expected: int, timeout_s: float) -> None:
    """The same count with no Faust at all: one librdkafka consumer's ``consume(10000)`` loop (what the
    sinks' own loop and the rdkafka driver's thread both run), for the ratio of Faust's cost to it."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"probe-bare-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    started = time.monotonic()
    while not consumer.assignment() and time.monotonic() - started < timeout_s:
        consumer.poll(0.1)
    first_cpu, first_wall = cpu_now(), time.monotonic()
    print("READY", flush=True)
    n = 0
    while n < expected and time.monotonic() - started < timeout_s:
        n += sum(1 for m in consumer.consume(10_000, 0.5) if m.error() is None)
    cpu = cpu_now() - first_cpu
    print(json.dumps({"driver": "bare", "batched": True, "records": n,
                      "reason": "all read" if n >= expected else "timeout", "cpu_s": round(cpu, 3),
                      "wall_s": round(time.monotonic() - first_wall, 3),
                      "since_start_s": round(time.monotonic() - started, 1),
                      "per_cpu_s": round(n / cpu) if cpu > 0 else None}), flush=True)
    os._exit(0)


def child(scheme: str, bootstrap: str, topic: str, expected: int, timeout_s: float, batched: bool) -> None:
    """Run the count-only agent; print one JSON line with what it counted."""
    import asyncio

    if scheme == "bare":
        bare_child(bootstrap, topic, expected, timeout_s)

    import faust

    if os.environ.get("PROBE_DUMP_S"):  # every thread's stack after this long: where a stalled run waits
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["PROBE_DUMP_S"]), exit=False)
    group = f"probe-{scheme}-{uuid.uuid4().hex[:8]}"
    datadir = Path(tempfile.mkdtemp(prefix="faust-probe-"))
    app = faust.App(group, broker=f"{scheme}://{bootstrap}", store="memory://", datadir=str(datadir),
                    topic_allow_declare=False, topic_disable_leader=True, web_enabled=False,
                    consumer_auto_offset_reset="earliest")
    if batched:
        from streams.rdkafka import batch_topic

        source = batch_topic(app, topic)
    else:
        source = app.topic(topic, key_serializer="raw", value_serializer="raw")
    seen: dict[str, Any] = {"n": 0, "first_cpu": None, "first_wall": None}
    started = time.monotonic()

    def report(reason: str) -> None:
        now_cpu, now_wall = cpu_now(), time.monotonic()
        first_cpu = seen["first_cpu"] if seen["first_cpu"] is not None else now_cpu
        first_wall = seen["first_wall"] if seen["first_wall"] is not None else now_wall
        cpu = now_cpu - first_cpu
        print(json.dumps({"driver": scheme, "batched": batched, "records": seen["n"], "reason": reason,
                          "cpu_s": round(cpu, 3), "wall_s": round(now_wall - first_wall, 3),
                          "since_start_s": round(now_wall - started, 1),
                          "per_cpu_s": round(seen["n"] / cpu) if cpu > 0 else None}), flush=True)
        os._exit(0)

    def saw(n: int) -> None:
        seen["n"] += n
        if seen["n"] >= expected:
            report("all read")

    @app.agent(source)
    async def count(stream: Any) -> None:
        async for event in stream.events():
            saw(len(event.value) if batched else 1)

    @app.timer(interval=0.5)
    async def deadline() -> None:
        if seen["first_cpu"] is None:
            seen["first_cpu"], seen["first_wall"] = cpu_now(), time.monotonic()
            print("READY", flush=True)
        if time.monotonic() - started > timeout_s:
            report("timeout")

    asyncio.get_event_loop_policy()
    from faust.worker import Worker

    worker = Worker(app, loglevel=os.environ.get("PROBE_LOGLEVEL", "warning"), quiet=True, redirect_stdouts=False)
    worker.execute_from_commandline()


def new_topic(bootstrap: str) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"probe-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def produce(bootstrap: str, topic: str, records: int) -> None:
    from confluent_kafka import Producer

    repo = Path(__file__).resolve().parents[2]
    lines: list[bytes] = []
    for path in sorted((repo / "corpus" / "training").rglob("*.log")):
        lines.extend(line for line in path.read_bytes().splitlines() if line.strip())
    if not lines:
        lines = [b"a line of a log"]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "zstd"})
    for i in range(records):
        while True:
            try:
                producer.produce(topic, lines[i % len(lines)], b"probe-source")
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush(60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--drivers", default="kafka,confluent")
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--ready-wait", type=float, default=60.0)
    ap.add_argument("--bootstrap", default=os.environ.get("SLUICE_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:19092"))
    ap.add_argument("--child", nargs=5, metavar=("SCHEME", "BOOTSTRAP", "TOPIC", "N", "TIMEOUT"))
    ap.add_argument("--batched", action="store_true", help="count the rdkafka driver's batch events")
    args = ap.parse_args()
    if args.child:
        scheme, bootstrap, topic, n, timeout = args.child
        child(scheme, bootstrap, topic, int(n), float(timeout), args.batched)
        return
    for entry in args.drivers.split(","):
        print(json.dumps(run_child(entry, args)), flush=True)


def run_child(entry: str, args: argparse.Namespace) -> dict[str, Any]:
    """Start the child, feed its topic once it is ready (or after ``--ready-wait``), return its report."""
    import selectors

    scheme, _, mode = entry.partition("+")
    topic = new_topic(args.bootstrap)
    cmd = [sys.executable, __file__, "--child", scheme, args.bootstrap, topic, str(args.records),
           str(args.timeout)] + (["--batched"] if mode == "batched" else [])
    with tempfile.TemporaryFile() as err:
        child_proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        assert child_proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(child_proc.stdout, selectors.EVENT_READ)
        started = time.monotonic()
        fed = False
        report: dict[str, Any] | None = None
        while report is None and time.monotonic() - started < args.timeout + 30:
            if not fed and time.monotonic() - started > args.ready_wait:
                produce(args.bootstrap, topic, args.records)
                fed = True
            if not sel.select(timeout=1.0):
                if child_proc.poll() is not None:
                    break
                continue
            line = child_proc.stdout.readline()
            if not line:
                break
            if "READY" in line and not fed:
                produce(args.bootstrap, topic, args.records)
                fed = True
            elif '{"driver"' in line:
                report = json.loads(line[line.index('{"driver"'):])
        if child_proc.poll() is None:
            child_proc.kill()
        child_proc.wait()
        err.seek(0)
        tail = err.read()[-int(os.environ.get("PROBE_STDERR", "600")):].decode(errors="replace")
    if report is None:
        return {"driver": scheme, "batched": mode == "batched", "records": 0,
                "reason": f"no report {time.monotonic() - started:.0f} s after start (killed); fed: {fed}",
                "stderr_tail": tail}
    return {**report, "fed_after_ready": fed}


if __name__ == "__main__":
    main()
