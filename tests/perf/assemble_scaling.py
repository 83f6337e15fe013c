"""Assemble scaling: one worker process against two, real Kafka in and out, the corpus mix.

    .venv/bin/python tests/perf/assemble_scaling.py [--passes 10] [--rounds 2] [--batch-lines 200]

Each run is assemble_bench.py's ``run_once`` (workers first, the backlog in one transaction, timed
from its commit to the last output) on a two-partition ``logs.raw``, the same for both sizes, so
only the number of workers differs. CPU is the sum over the worker processes (utime + stime from
/proc). Runs alternate 1, 2, 1, 2 ... so both sizes see the same machine. Writes
bench-results/assemble_scaling.md and a bar plot beside it. Not a test: no assertion on speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from streams.config import REPO_ROOT, load_settings

sys.path.insert(0, str(Path(__file__).parent))
from assemble_bench import Run, corpus_files, expected_per_pass, run_once  # the sibling script's helpers

PARTITIONS = 2
OUT = REPO_ROOT / "bench-results"


def plot(runs: list[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({r.workers for r in runs})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, n in enumerate(sizes):
        values = [r.per_s for r in runs if r.workers == n]
        ax.bar(i, statistics.median(values), color="tab:blue" if n == 1 else "tab:orange")
        ax.scatter([i] * len(values), values, color="black", zorder=3, s=12)
    ax.set_xticks(range(len(sizes)), [f"{n} worker{'s' if n > 1 else ''}" for n in sizes])
    ax.set_ylabel("lines/s (backlog drain)")
    ax.set_title(f"assemble scaling, {os.cpu_count()} cores shared with Kafka")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def report(runs: list[Run], args: argparse.Namespace, seconds: float) -> str:
    med = {n: statistics.median(r.per_s for r in runs if r.workers == n) for n in (1, 2)}
    rows = "\n".join(f"| {i} | {r.workers} | {r.lines:,} | {r.wall_s:.2f} | {r.per_s:,.0f} | {r.cpu_s:.2f} | "
                     f"{r.per_cpu_s:,.0f} |" for i, r in enumerate(runs, 1))
    return f"""# Assemble scaling: one worker against two

{datetime.now(UTC).isoformat(timespec="seconds")} on {platform.node()} ({os.cpu_count()} cores, shared with
Kafka, the registry, Elasticsearch and the object store of the local stack), {seconds:.0f} s in all.

Command: `.venv/bin/python tests/perf/assemble_scaling.py --passes {args.passes} --rounds {args.rounds}
--batch-lines {args.batch_lines}`

`logs.raw` with {PARTITIONS} partitions in every run; the workers join first, the corpus mix is
produced once the group is stable ({args.batch_lines} lines per record) in one transaction, and the
clock runs from its commit (the backlog appears at once to the read_committed workers) to the last
expected output.

| run | workers | lines | wall s | lines/s | worker CPU s (sum) | lines per CPU-second |
|---|---|---|---|---|---|---|
{rows}

**Two workers / one: {med[2] / med[1]:.2f}x** lines/s (medians: {med[2]:,.0f} vs {med[1]:,.0f}).

![scaling](assemble_scaling.png)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-lines", type=int, default=200)
    args = ap.parse_args()
    started = time.monotonic()
    base = load_settings()
    files = corpus_files()
    per_pass = expected_per_pass(files)
    runs = []
    for _ in range(args.rounds):
        for workers in (1, 2):
            runs.append(run_once(base, files, per_pass, args.passes, args.batch_lines, workers, PARTITIONS))
            print(runs[-1], flush=True)
    OUT.mkdir(exist_ok=True)
    plot(runs, OUT / "assemble_scaling.png")
    text = report(runs, args, time.monotonic() - started)
    (OUT / "assemble_scaling.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
