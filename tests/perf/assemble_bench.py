"""Assemble throughput: worker processes, real Kafka in and out, the corpus mix.

    .venv/bin/python tests/perf/assemble_bench.py [--passes 5] [--batch-lines 200] [--partitions 1]

Fresh topics per run. The worker starts first, on an empty ``logs.raw``, and the clock waits until
the consumer group is stable with the worker holding its partitions. Then the corpus mix (training
+ loghub, ``passes`` times, each pass new sources) is produced in ONE Kafka transaction: the worker
reads ``read_committed``, so the whole backlog appears at once when it commits, and the producer's
own CPU is not in the window. Timed from the commit to the last expected output (events + metric
points, from the offline parse), CPU over the same window (utime + stime from /proc): the rate at
which a worker drains a backlog, start-up excluded, nothing else excluded.

(Timing from the worker's first output instead would leave its whole first turn out of the time but
not out of the line count, and overstate the rate.)

``--batch-lines`` lines per record (sluice ship / produce); 1 is Filebeat-style. ``--floor nothing``
or ``--floor fixed`` runs floor_worker.py instead of the worker (its per-line work taken out), timed
until the group has committed the whole backlog. Writes bench-results/assemble-batch<N>[-floor-<mode>].md.
Not a test: no assertion on speed. ``run_once`` is shared with assemble_scaling.py (one worker
against two).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from devtools import CORPUS_DIR
from devtools.stack.base import cpu_seconds, memory_mb
from streams.assemble.pipeline import parse_files
from streams.config import REPO_ROOT, Settings, load_settings
from streams.produce import produce_files, producer_config
from streams.topics import isolated_settings

CORPUS = CORPUS_DIR
OUT = REPO_ROOT / "bench-results"


def corpus_files() -> list[Path]:
    training = sorted((CORPUS / "training").glob("*.log"))
    loghub = sorted(CORPUS.glob("loghub/*/*_2k.log"))
    return training + loghub


class OutputCounter:
    """Records (not transaction markers) on the output topics, read_committed, counted as they come:
    each call reads only what is new (in C, batches of 10,000: about a microsecond a record)."""

    def __init__(self, settings: Settings, topics: list[str]) -> None:
        self.consumer = Consumer({**settings.kafka.client_config(), "group.id": f"bench-count-{uuid.uuid4().hex[:6]}",
                                  "isolation.level": "read_committed", "enable.auto.commit": False})
        meta = self.consumer.list_topics(timeout=10).topics
        self.consumer.assign([TopicPartition(t, p, 0) for t in topics for p in meta[t].partitions])
        self.total = 0

    def count(self) -> int:
        while batch := self.consumer.consume(10_000, 0.05):
            self.total += sum(1 for m in batch if not m.error())
        return self.total

    def close(self) -> None:
        self.consumer.close()


@dataclass
class Run:
    workers: int
    lines: int
    outputs: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float = 0.0  # the largest worker's

    @property
    def per_s(self) -> float:
        return self.lines / self.wall_s

    @property
    def per_cpu_s(self) -> float:
        return self.lines / self.cpu_s


def assigned_members(settings: Settings, group: str) -> int:
    """Members of ``group`` holding at least one partition (0 while it rebalances)."""
    admin = AdminClient(settings.kafka.client_config())
    try:
        desc = admin.describe_consumer_groups([group])[group].result(timeout=10)
    except Exception:  # noqa: BLE001 - the group does not exist yet
        return 0
    if str(desc.state).rsplit(".", 1)[-1] != "STABLE":
        return 0
    return sum(1 for m in desc.members if m.assignment and m.assignment.topic_partitions)


class GroupCommits:
    """Has ``group`` committed every partition's offset up to ``ends`` (the offset after its last record)?
    One client, asked again on each call (a client per question cost the bench process more CPU
    than the question, on the cores the worker uses)."""

    def __init__(self, settings: Settings, group: str, ends: dict[tuple[str, int], int]) -> None:
        self.consumer = Consumer({**settings.kafka.client_config(), "group.id": group, "enable.auto.commit": False})
        self.ends = ends

    def reached(self) -> bool:
        got = self.consumer.committed([TopicPartition(t, p) for t, p in self.ends], timeout=10)
        return all(tp.offset >= self.ends[(tp.topic, tp.partition)] for tp in got)

    def close(self) -> None:
        self.consumer.close()


def start_workers(settings: Settings, group: str, n: int, floor: str | None = None) -> list[subprocess.Popen[bytes]]:
    topics = settings.topics
    env = {**os.environ, "SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
           "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
           "SLUICE_ASSEMBLE__APP_ID": group, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000"}
    cmd = [sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "warn"]
    if floor is not None:
        cmd = [sys.executable, str(Path(__file__).with_name("floor_worker.py")), floor]
    # Each worker its own metrics port: two on one machine must not collide.
    return [subprocess.Popen(cmd, env={**env, "SLUICE_OBSERVABILITY__PORT": str(19300 + i)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(n)]


def run_once(base: Settings, files: list[Path], per_pass: int, passes: int, batch_lines: int, workers: int,
             partitions: int, floor: str | None = None) -> Run:
    """One backlog drained by ``workers`` worker processes on a ``partitions``-partition logs.raw."""
    tag = f"bench-{uuid.uuid4().hex[:6]}"
    settings = isolated_settings(base, tag, raw_partitions=partitions)
    group = f"{tag}-group"
    procs = start_workers(settings, group, workers, floor)
    try:
        deadline = time.monotonic() + 120
        while assigned_members(settings, group) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                sys.exit(f"{workers} worker(s) did not all get a partition of {settings.topics.raw} in 120 s")
            time.sleep(0.5)
        out_topics = [settings.topics.events_topic("default"), settings.topics.metrics, settings.topics.dlq]
        producer = Producer({**producer_config(settings), "transactional.id": f"{tag}-backlog"})
        producer.init_transactions(30)
        producer.begin_transaction()
        lines = sum(produce_files(settings, files, lambda _p: {"project": "default"}, host=f"{tag}-pass{n}",
                                  batch_lines=batch_lines, producer=producer) for n in range(passes))
        counter = OutputCounter(settings, out_topics)
        producer.commit_transaction(60)
        expected = per_pass * passes
        commits = None
        if floor is not None:  # a floor worker writes no events to count: wait for its group's commits
            # the backlog's one transaction ends each partition with its commit marker: the last record is before it
            ends = {(settings.topics.raw, p): counter.consumer.get_watermark_offsets(
                TopicPartition(settings.topics.raw, p), timeout=10)[1] - 1 for p in range(partitions)}
            commits = GroupCommits(settings, group, ends)
        cpu0 = sum(cpu_seconds(p.pid) for p in procs)
        t0 = time.monotonic()
        while not (commits.reached() if commits else counter.count() >= expected):
            if time.monotonic() - t0 > 600:
                sys.exit(f"not done after 600 s ({counter.total} of {expected} outputs)")
            time.sleep(0.1)
        if commits:
            commits.close()
            expected = counter.count()
        wall = time.monotonic() - t0
        cpu = sum(cpu_seconds(p.pid) for p in procs) - cpu0
        rss = max(memory_mb(p.pid, "VmHWM") for p in procs)
        counter.close()
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait(30)
    return Run(workers, lines, expected, wall, cpu, rss)


def expected_per_pass(files: list[Path]) -> int:
    return sum(1 for _ in parse_files(files, idle_timeout_ms=10**9))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--batch-lines", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--floor", choices=("nothing", "fixed"), help="run floor_worker.py in this mode instead")
    args = ap.parse_args()

    files = corpus_files()
    run = run_once(load_settings(), files, expected_per_pass(files), args.passes, args.batch_lines, 1,
                   args.partitions, args.floor)
    floor = f" --floor {args.floor}" if args.floor else ""
    report = (
        f"# Assemble throughput\n\n"
        f"Command: `.venv/bin/python tests/perf/assemble_bench.py --passes {args.passes} --batch-lines "
        f"{args.batch_lines} --partitions {args.partitions}{floor}`\n\n"
        f"- corpus mix: {len(files)} files x {args.passes} passes = {run.lines} lines, {args.batch_lines} "
        f"lines/record, one worker, {args.partitions} raw partition(s)\n"
        f"- outputs (events + metric points): {run.outputs}\n"
        f"- backlog drained (commit of the backlog to the last output): {run.wall_s:.1f} s = "
        f"**{run.per_s:,.0f} lines/s** (wall)\n"
        f"- worker CPU over the same window: {run.cpu_s:.1f} s = **{run.per_cpu_s:,.0f} lines per CPU-second**\n"
        f"- worker peak RSS (VmHWM): {run.peak_rss_mb:.0f} MiB\n"
    )
    OUT.mkdir(exist_ok=True)
    (OUT / f"assemble-batch{args.batch_lines}{floor.replace(' --floor ', '-floor-')}.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
