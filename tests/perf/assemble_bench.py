"""Assemble throughput: one worker process, real Kafka in and out, the corpus mix.

    .venv/bin/python tests/perf/assemble_bench.py [--passes 3] [--batch-lines 200]

Produces every corpus file (training + loghub) ``passes`` times into a fresh raw topic (each pass a
new source, so blocks never join across passes), starts `sluice worker assemble` on it, and times
until every expected output (events + metric points, from the offline parse) is on the output
topics. Reports lines per second of wall time and per CPU-second of the worker process, for records
of ``batch-lines`` lines (sluice ship / produce) and, with --batch-lines 1, one line per record
(Filebeat-style). Writes bench-results/assemble.md. Not a test: no assertion on speed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition

from streams.assemble.pipeline import parse_files
from streams.config import REPO_ROOT, load_settings
from streams.produce import produce_files
from streams.stack.base import cpu_seconds
from streams.topics import isolated_settings

CORPUS = REPO_ROOT.parent / "shared" / "corpus"


def corpus_files() -> list[Path]:
    training = sorted((CORPUS / "training").glob("*.log"))
    loghub = sorted(CORPUS.glob("loghub/*/*_2k.log"))
    return training + loghub


def end_offsets(settings, topics: list[str]) -> int:  # type: ignore[no-untyped-def]
    consumer = Consumer({**settings.kafka.client_config(), "group.id": "bench-peek"})
    meta = consumer.list_topics(timeout=10).topics
    total = 0
    for topic in topics:
        for p in meta[topic].partitions:
            lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            total += hi - lo
    consumer.close()
    return total




def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--batch-lines", type=int, default=200)
    args = ap.parse_args()

    base = load_settings()
    tag = f"bench-{uuid.uuid4().hex[:6]}"
    settings = isolated_settings(base, tag, raw_partitions=1)
    topics = settings.topics

    files = corpus_files()
    per_pass = sum(1 for _ in parse_files(files, idle_timeout_ms=10**9))
    lines = 0
    t0 = time.monotonic()
    for n in range(args.passes):
        lines += produce_files(settings, files, lambda _p: {"project": "default"}, host=f"{tag}-pass{n}",
                               batch_lines=args.batch_lines)
    produce_s = time.monotonic() - t0
    expected = per_pass * args.passes
    out_topics = [settings.topics.events_topic("default"), settings.topics.metrics, settings.topics.dlq]

    env = {**os.environ, "SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
           "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
           "SLUICE_ASSEMBLE__APP_ID": f"{tag}-group", "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "warn"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first_output = None
    done_at = None
    while time.monotonic() - start < 600:
        got = end_offsets(settings, out_topics)
        if got and first_output is None:
            first_output, cpu_first = time.monotonic(), cpu_seconds(proc.pid)
        if got >= expected:
            done_at, cpu_done = time.monotonic(), cpu_seconds(proc.pid)
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    if done_at is None or first_output is None:
        sys.exit(f"only {end_offsets(settings, out_topics)} of {expected} outputs after 600 s")
    busy_s = done_at - first_output  # excludes the worker's start-up and group join
    report = (
        f"# Assemble throughput\n\n"
        f"- corpus mix: {len(files)} files x {args.passes} passes = {lines} lines, {args.batch_lines} lines/record\n"
        f"- outputs (events + metric points): {expected}\n"
        f"- produce: {lines / produce_s:,.0f} lines/s\n"
        f"- worker, first output to last: {busy_s:.1f} s = **{lines / busy_s:,.0f} lines/s** (wall)\n"
        f"- worker CPU, first output to last: {cpu_done - cpu_first:.1f} s = "
        f"**{lines / (cpu_done - cpu_first):,.0f} lines per CPU-second** (the first poll's records excluded: "
        f"a lower bound)\n"
    )
    out = REPO_ROOT / "bench-results"
    out.mkdir(exist_ok=True)
    (out / f"assemble-batch{args.batch_lines}.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
