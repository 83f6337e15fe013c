"""What GPU sampling costs a node: a real `sluice ship` process with the sampler on and off.

    python -m devtools.gpu_ship_bench [--seconds 120] [--rounds 2] [--rate 20] [--interval-s 10]

Both processes tail the same kind of training log (real corpus lines at ``--rate`` lines/s) to the
real Kafka. The "on" process also samples GPUs every ``--interval-s`` seconds into a metrics topic:
no GPU is needed, it scrapes a local DCGM-exporter endpoint that serves the recording of an 8 x H100
node (tests/fixtures/gpu/dcgm.h100x8-k8s.metrics), so every sample goes the production path (HTTP
scrape, parse, attribution, MetricPoint, Avro through the registry, Kafka). Rounds alternate off/on;
CPU is user+system from /proc/<pid>/stat over each window, after a warm-up. Also reported: the
in-process cost of parsing a larger exposition (the 8 x A800 recording) per KB, for exporters that
serve more fields than the recording holds.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from devtools import CORPUS_DIR
from devtools.stack.base import cpu_seconds, memory_mb
from streams.config import REPO_ROOT, Settings, load_settings

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "gpu"
WARMUP_S = 8.0


def make_topics(settings: Settings) -> tuple[str, str]:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from streams.contracts import schema_text
    from streams.topics import TopicSpec, create_topics

    tag = uuid.uuid4().hex[:8]
    raw, metrics = f"bench-gpu-raw-{tag}", f"bench-gpu-metrics-{tag}"
    create_topics(settings, [TopicSpec(raw, 1, {}), TopicSpec(metrics, 1, {})])
    registry = SchemaRegistryClient({"url": settings.registry.url})
    registry.register_schema(f"{raw}-value", Schema(schema_text("raw_batch"), "AVRO"))
    registry.register_schema(f"{metrics}-value", Schema(schema_text("metric_point"), "AVRO"))
    return raw, metrics


def serve(text: str) -> tuple[ThreadingHTTPServer, list[int]]:
    body, scrapes = text.encode(), [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            scrapes[0] += 1
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, scrapes


def writer(path: Path, rate: int, stop: threading.Event) -> None:
    lines = [ln + b"\n" for p in sorted((CORPUS_DIR / "training").glob("*.log"))
             for ln in p.read_bytes().split(b"\n") if ln and len(ln) < 4000]
    i = 0
    with path.open("ab", buffering=0) as fh:
        while not stop.is_set():
            fh.write(b"".join(lines[(i + k) % len(lines)] for k in range(rate)))
            i += rate
            stop.wait(1.0)


def one_run(gpu: bool, seconds: float, rate: int, interval_s: float, topics: tuple[str, str],
            dcgm_url: str) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="sluice-gpu-bench-"))
    (work / "logs").mkdir()
    log = work / "logs" / "rank0.log"
    log.touch()
    env = {**os.environ, "SLUICE_SHIP__PODINFO_LABELS_PATH": str(work / "none"),
           "SLUICE_TOPICS__METRICS": topics[1], "SLUICE_SHIP__GPU__DCGM_URL": dcgm_url,
           "SLUICE_SHIP__GPU__INTERVAL_S": str(interval_s), "SLUICE_SHIP__LABELS__TASK_ID": "bench-task"}
    stop = threading.Event()
    feed = threading.Thread(target=writer, args=(log, rate, stop), daemon=True)
    feed.start()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streams.ship", "--path", str(work / "logs" / "*.log"),
         "--checkpoint", str(work / "checkpoint.json"), "--topic", topics[0], "--interval", "30",
         "--stagger-window", "0", "--node-name", "bench-node", "--gpu", "on" if gpu else "off"],
        env=env, cwd=REPO_ROOT, stderr=subprocess.DEVNULL)
    try:
        time.sleep(WARMUP_S)
        cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu1, t1 = cpu_seconds(proc.pid), time.monotonic()
        rss = memory_mb(proc.pid, "VmHWM")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        stop.set()
    return {"cores": (cpu1 - cpu0) / (t1 - t0), "peak_rss_mb": rss}


def parse_cost_us_per_kb(rounds: int = 200) -> float:
    from streams.gpu.dcgm import readings_from_exposition

    text = (FIXTURES / "dcgm.a800x8-mig.metrics").read_text()
    start = time.process_time()
    for _ in range(rounds):
        readings_from_exposition(text)
    return (time.process_time() - start) / rounds / (len(text) / 1024) * 1e6


def count_points(settings: Settings, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"bench-{uuid.uuid4().hex[:8]}"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        return int(high - low)
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0, help="measured window of each run")
    parser.add_argument("--rounds", type=int, default=2, help="off/on pairs")
    parser.add_argument("--rate", type=int, default=20, help="log lines per second the job writes")
    parser.add_argument("--interval-s", type=float, default=10.0, help="GPU sample interval")
    args = parser.parse_args()
    settings = load_settings()
    topics = make_topics(settings)
    recording = (FIXTURES / "dcgm.h100x8-k8s.metrics").read_text()
    server, scrapes = serve(recording)
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    off, on = [], []
    for _ in range(args.rounds):
        off.append(one_run(False, args.seconds, args.rate, args.interval_s, topics, url))
        on.append(one_run(True, args.seconds, args.rate, args.interval_s, topics, url))
    server.shutdown()
    points = count_points(settings, topics[1])
    mean_off = statistics.mean(r["cores"] for r in off)
    mean_on = statistics.mean(r["cores"] for r in on)
    per_kb = parse_cost_us_per_kb()
    print(f"sluice ship, {args.rate} lines/s, {args.seconds:g}s windows x {args.rounds} rounds; sampler: DCGM "
          f"recording of 8 x H100 ({len(recording) / 1024:.1f} KB) every {args.interval_s:g}s")
    for name, runs, mean in (("off", off, mean_off), ("on ", on, mean_on)):
        cores = ", ".join(f"{r['cores']:.4f}" for r in runs)
        rss = max(r["peak_rss_mb"] for r in runs)
        print(f"  sampler {name}: {cores} cores (mean {mean:.4f}), peak RSS {rss:.0f} MB")
    print(f"  difference: {mean_on - mean_off:+.4f} cores; {scrapes[0]} scrapes, {points} GPU samples in Kafka")
    print(f"  exposition parsing: {per_kb:.0f} us of CPU per KB (a 70 KB exporter page every "
          f"{args.interval_s:g}s: {per_kb * 70 / 1e6 / args.interval_s:.5f} cores)")


if __name__ == "__main__":
    main()
