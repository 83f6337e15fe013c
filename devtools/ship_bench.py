"""Measure a real `sluice ship` process: CPU, memory and write-to-Kafka delay at a given line rate.

    python -m devtools.ship_bench [--rate 10000] [--seconds 20] [--interval 0.5]

Writes real corpus lines into a file at ``--rate`` lines/s while a shipper subprocess ships it to
the real Kafka (a fresh topic whose record timestamps are the broker's LogAppendTime, i.e. when
Kafka accepted the batch). Reports the shipper's CPU in cores (utime+stime from /proc/<pid>/stat
over the writing window), its peak RSS, and the delay from each line's write to its record's
append time (p50 / p95 / max).
"""

from __future__ import annotations

import argparse
import bisect
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from devtools import CORPUS_DIR
from devtools.stack.base import cpu_seconds, free_port, memory_mb
from streams.config import REPO_ROOT, Settings, load_settings

CORPUS = CORPUS_DIR / "training"


def make_topic(settings: Settings) -> str:
    from confluent_kafka.schema_registry import Schema

    from streams.clients import registry_client
    from streams.contracts import schema_text
    from streams.topics import TopicSpec, create_topics

    topic = f"bench-ship-{uuid.uuid4().hex[:8]}"
    create_topics(settings, [TopicSpec(topic, 1, {"message.timestamp.type": "LogAppendTime"})])
    registry_client(settings.registry).register_schema(
        f"{topic}-value", Schema(schema_text("raw_batch"), "AVRO"))
    return topic


def corpus_lines() -> list[bytes]:
    lines: list[bytes] = []
    for path in sorted(CORPUS.glob("*.log")):
        lines += [ln + b"\n" for ln in path.read_bytes().split(b"\n") if ln and len(ln) < 8000]
    return lines


class Reader(threading.Thread):
    """Consumes the topic; for each line, the record's append time in ms."""

    def __init__(self, settings: Settings, topic: str) -> None:
        super().__init__(daemon=True)
        self.settings, self.topic = settings, topic
        self.appended: dict[int, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Consumer
        from confluent_kafka.serialization import MessageField, SerializationContext

        from streams.avro_io import avro_deserializer

        deser = avro_deserializer(self.settings)
        ctx = SerializationContext(self.topic, MessageField.VALUE)
        consumer = Consumer({**self.settings.kafka.client_config(), "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([self.topic])
        while not self.stop.is_set():
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            _kind, ts = msg.timestamp()
            for line in deser(msg.value(), ctx)["lines"]:
                self.appended[line["file_offset"]] = ts
        consumer.close()


def run(rate: int, seconds: float, interval: float) -> dict[str, float]:
    settings = load_settings()
    topic = make_topic(settings)
    lines = corpus_lines()
    work = Path(tempfile.mkdtemp(prefix="sluice-ship-bench-"))
    (work / "logs").mkdir()
    log = work / "logs" / "rank0.log"
    log.touch()
    env = {**os.environ, "SLUICE_SHIP__PODINFO_LABELS_PATH": str(work / "none"),
           "SLUICE_SHIP__METRICS_PORT": str(free_port())}  # served, as on a node: its cost is measured too
    proc = subprocess.Popen(
        [sys.executable, "-m", "streams.ship", "--path", str(work / "logs" / "*.log"),
         "--checkpoint", str(work / "checkpoint.json"), "--topic", topic, "--interval", str(interval),
         "--stagger-window", "0", "--node-name", "bench-node"], env=env, cwd=REPO_ROOT)
    reader = Reader(settings, topic)
    reader.start()
    time.sleep(3.0)  # imports, registry lookup, first metadata
    ends: list[int] = []
    written_at: list[float] = []
    pos, i, peak_rss = 0, 0, 0.0
    tick = 0.01
    per_tick = max(1, int(rate * tick))
    cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
    with log.open("ab", buffering=0) as fh:
        next_t = time.monotonic()
        while time.monotonic() - t0 < seconds:
            chunk = b"".join(lines[(i + k) % len(lines)] for k in range(per_tick))
            i += per_tick
            fh.write(chunk)
            pos += len(chunk)
            ends.append(pos)
            written_at.append(time.time())
            if len(ends) % 100 == 0:
                peak_rss = max(peak_rss, memory_mb(proc.pid))
            next_t += tick
            time.sleep(max(0.0, next_t - time.monotonic()))
    cpu1, t1 = cpu_seconds(proc.pid), time.monotonic()
    written_lines = i
    deadline = time.monotonic() + max(10.0, 2 * interval + 5)
    while len(reader.appended) < written_lines and time.monotonic() < deadline:
        time.sleep(0.2)
    peak_rss = max(peak_rss, memory_mb(proc.pid))
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    reader.stop.set()
    reader.join(5)
    delays = []
    for offset, ts_ms in reader.appended.items():
        k = bisect.bisect_right(ends, offset)  # the write that contained this line's first byte
        if k < len(written_at):
            delays.append(ts_ms / 1000 - written_at[k])
    delays.sort()

    def pct(p: float) -> float:
        return delays[min(len(delays) - 1, int(p * len(delays)))] if delays else float("nan")

    return {"rate_lines_s": written_lines / (t1 - t0), "lines_written": written_lines,
            "lines_in_kafka": len(reader.appended), "cpu_cores": (cpu1 - cpu0) / (t1 - t0),
            "peak_rss_mb": peak_rss, "delay_p50_s": pct(0.5), "delay_p95_s": pct(0.95), "delay_max_s": pct(1.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=10_000, help="lines per second written")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to write")
    parser.add_argument("--interval", type=float, default=0.5, help="the shipper's send interval (s)")
    args = parser.parse_args()
    result = run(args.rate, args.seconds, args.interval)
    print(f"interval {args.interval:g}s, {result['rate_lines_s']:.0f} lines/s written for {args.seconds:g}s: "
          f"{result['lines_in_kafka']}/{result['lines_written']} lines in Kafka")
    print(f"  shipper CPU {result['cpu_cores']:.3f} cores, peak RSS {result['peak_rss_mb']:.0f} MB")
    print(f"  write -> Kafka append delay: p50 {result['delay_p50_s']:.2f}s, p95 {result['delay_p95_s']:.2f}s, "
          f"max {result['delay_max_s']:.2f}s")


if __name__ == "__main__":
    main()
