"""What a 9:00 start wave of many nodes looks like at the broker, with and without the send spread.

    python -m devtools.ship_wave [--nodes 1000] [--burst-mb 4] [--plot docs/img/ship_start_wave.png]

A simulation on a clock, reusing the shipper's own batching and scheduling (``Batcher``,
``SendSchedule``, ``stagger_phase_ms``) and its memory cap: every node's job starts at 9:00 plus a
few seconds of scheduling jitter, writes a startup burst (rank banners, NCCL init, config dumps),
then steady training lines; line lengths are those of the training corpus. Each node reads what
was written every poll interval (stopping at its memory cap) and sends what its schedule says is
due; the broker is assumed to acknowledge at once, so nodes are independent and simulated one at a
time. Reports, per scenario, the peak bytes/s and records/s arriving at the broker (per second),
when the wave's last startup line arrived, and the write-to-broker delay of lines.

Scenarios: ``before``: interval 30 s, stagger window 90 s (phases spread over 30 s), full batches
sent at once; ``after``: the defaults (interval 90 s, window 90 s, full batches early only when
memory nears its cap); ``no-stagger``: every node on the same 30 s grid, full batches at once.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from devtools import CORPUS_DIR
from streams.config import REPO_ROOT
from streams.ship.batching import Batcher, Due, SendSchedule, stagger_phase_ms
from streams.ship.lines import Line
from streams.ship.settings import ShipSettings

WAVE_MS = 1_767_258_000_000  # 09:00:00 UTC of a day: the instant every job is scheduled to start
KiB, MiB = 1024, 1024 * 1024


@dataclass(frozen=True)
class Scenario:
    name: str
    interval_s: float
    window_s: float
    early_fraction: float  # 0: a full batch goes at once (the shipper before the spread applied to them)


SCENARIOS = {
    "before": Scenario("before", 30.0, 90.0, 0.0),
    "after": Scenario("after", ShipSettings.model_fields["interval_s"].default,
                      ShipSettings.model_fields["stagger_window_s"].default,
                      ShipSettings.model_fields["early_send_fraction"].default),
    "no-stagger": Scenario("no-stagger", 30.0, 0.0, 0.0),
}


@dataclass
class Workload:
    nodes: int = 1000
    jitter_s: float = 10.0  # pods of a 9:00 wave start over this many seconds
    burst_bytes: int = 4 * MiB  # startup output per node (8 ranks: banners, NCCL INFO init, configs)
    burst_s: float = 20.0
    steady_bytes_s: float = 5 * KiB  # per node once training runs
    seconds: float = 300.0  # simulated from 9:00
    seed: int = 7


@dataclass
class Broker:
    """What arrives at the broker, per second since 9:00."""

    bytes: Counter[int] = field(default_factory=Counter)
    records: Counter[int] = field(default_factory=Counter)
    delays: Counter[int] = field(default_factory=Counter)  # lines by whole seconds of write-to-broker delay
    last_burst_ms: int = 0  # when the last line written during a startup burst arrived


def corpus_line_lengths() -> list[int]:
    lengths = []
    for path in sorted((CORPUS_DIR / "training").glob("*.log")):
        lengths += [len(ln) + 1 for ln in path.read_bytes().split(b"\n") if ln and len(ln) < 8000]
    return lengths


def node_writes(work: Workload, rng: random.Random, lengths: list[int], tick_s: float) -> Iterator[list[int]]:
    """Line lengths written in each tick from 9:00 on."""
    start = rng.uniform(0.0, work.jitter_s)
    pick = rng.randrange(len(lengths))
    owed = 0.0
    ticks = int(work.seconds / tick_s)
    for k in range(ticks):
        t = k * tick_s
        rate = 0.0 if t < start else (work.burst_bytes / work.burst_s if t < start + work.burst_s
                                      else work.steady_bytes_s)
        owed += rate * tick_s
        out = []
        while owed > 0:
            n = lengths[pick % len(lengths)]
            pick += 1
            out.append(n)
            owed -= n
        yield out


def simulate_node(node: int, scenario: Scenario, work: Workload, lengths: list[int], broker: Broker,
                  rng: random.Random) -> None:
    ship = ShipSettings()
    tick_ms = int(ship.poll_interval_s * 1000)
    batcher = Batcher(ship.max_batch_lines, ship.max_batch_bytes)
    phase = stagger_phase_ms(f"gpu-node-{node:04d}", int(scenario.window_s * 1000))
    schedule = SendSchedule(int(scenario.interval_s * 1000), phase, scenario.early_fraction)
    schedule.start(WAVE_MS - 600_000)  # the DaemonSet runs long before the wave
    burst_end_ms = WAVE_MS + int((work.jitter_s + work.burst_s) * 1000)
    unread: list[tuple[int, int]] = []  # (length, write ms) of lines written and not yet read
    pos = held = 0
    for k, written in enumerate(node_writes(work, rng, lengths, tick_ms / 1000)):
        now = WAVE_MS + k * tick_ms
        unread += [(n, now) for n in written]
        lines: list[Line] = []
        taken = 0
        for n, _when in unread:  # read up to the memory cap, whole lines
            if held + n > ship.max_buffer_bytes:
                break
            lines.append((pos, pos + n, ""))
            pos += n
            held += n
            taken += 1
        if lines:
            # The line's ts is when it was written (read the same tick unless the cap held it back).
            batcher.add(0, 0, lines, unread[0][1])
            del unread[:taken]
        due = schedule.due(now, held, ship.max_buffer_bytes, held + sum(n for n, _ in unread),
                           ship.max_waiting_bytes)
        batches = batcher.take_all() if due is Due.ALL else batcher.take_full() if due is Due.FULL else []
        second = (now - WAVE_MS) // 1000
        for batch in batches:
            held -= batch.end - batch.start
            broker.bytes[second] += batch.nbytes
            broker.records[second] += 1
            for rec in batch.records[:: max(1, len(batch.records) // 20)]:  # a sample of each batch
                broker.delays[(now - rec["ts"]) // 1000] += 1
            if batch.records[0]["ts"] <= burst_end_ms:
                broker.last_burst_ms = max(broker.last_burst_ms, now - WAVE_MS)


def simulate(scenario: Scenario, work: Workload, lengths: list[int]) -> Broker:
    broker = Broker()
    rng = random.Random(work.seed)
    for node in range(work.nodes):
        simulate_node(node, scenario, work, lengths, broker, rng)
    return broker


def percentile(counts: Counter[int], p: float) -> int:
    total = sum(counts.values())
    running = 0
    for value in sorted(counts):
        running += counts[value]
        if running >= p * total:
            return value
    return 0


def summary(name: str, broker: Broker) -> dict[str, float | str]:
    peak_s = max(broker.bytes, key=lambda s: broker.bytes[s])
    return {"scenario": name, "peak_MB_s": broker.bytes[peak_s] / 1e6, "peak_at_s": peak_s,
            "peak_records_s": max(broker.records.values()),
            "burst_done_s": broker.last_burst_ms / 1000,
            "delay_p50_s": percentile(broker.delays, 0.5), "delay_p95_s": percentile(broker.delays, 0.95)}


def plot(results: dict[str, Broker], seconds: float, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    xs = list(range(int(seconds)))
    for name, broker in results.items():
        top.plot(xs, [broker.bytes[s] / 1e6 for s in xs], label=name, linewidth=1)
        bottom.plot(xs, [broker.records[s] for s in xs], label=name, linewidth=1)
    top.set_ylabel("MB/s at the broker")
    bottom.set_ylabel("records/s at the broker")
    bottom.set_xlabel("seconds after 9:00")
    top.set_title(title, fontsize=10)
    top.legend()
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    work = Workload()
    parser.add_argument("--nodes", type=int, default=work.nodes)
    parser.add_argument("--jitter", type=float, default=work.jitter_s, help="seconds over which the jobs start")
    parser.add_argument("--burst-mb", type=float, default=work.burst_bytes / MiB, help="startup MiB per node")
    parser.add_argument("--burst-s", type=float, default=work.burst_s, help="seconds the startup output takes")
    parser.add_argument("--steady-kb", type=float, default=work.steady_bytes_s / KiB, help="KiB/s per node after")
    parser.add_argument("--seconds", type=float, default=work.seconds, help="simulated seconds from 9:00")
    parser.add_argument("--scenarios", default="before,after,no-stagger")
    parser.add_argument("--plot", type=Path, default=REPO_ROOT / "docs" / "img" / "ship_start_wave.png")
    args = parser.parse_args()
    work = Workload(args.nodes, args.jitter, int(args.burst_mb * MiB), args.burst_s, args.steady_kb * KiB,
                    args.seconds)
    lengths = corpus_line_lengths()
    results = {}
    print(f"{work.nodes} nodes, jobs starting over {work.jitter_s:g} s from 9:00, {work.burst_bytes / MiB:g} MiB of "
          f"startup output each over {work.burst_s:g} s, then {work.steady_bytes_s / KiB:g} KiB/s; lines of the "
          f"training corpus (mean {sum(lengths) / len(lengths):.0f} B)")
    print(f"{'scenario':<11} {'peak MB/s':>9} {'at s':>5} {'peak rec/s':>10} {'burst in by':>11} "
          f"{'delay p50':>9} {'p95':>5}")
    for name in args.scenarios.split(","):
        broker = simulate(SCENARIOS[name], work, lengths)
        results[name] = broker
        s = summary(name, broker)
        print(f"{name:<11} {s['peak_MB_s']:>9.1f} {s['peak_at_s']:>5.0f} {s['peak_records_s']:>10.0f} "
              f"{s['burst_done_s']:>10.0f}s {s['delay_p50_s']:>8.0f}s {s['delay_p95_s']:>4.0f}s")
    title = (f"9:00 start wave, {work.nodes} nodes x {work.burst_bytes / MiB:g} MiB startup output "
             f"(devtools/ship_wave.py)")
    plot(results, work.seconds, args.plot, title)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
