"""Fuzz the assemble stage's per-record path (``python -m devtools.fuzz --inputs 1000000``).

Inputs are runs of raw records in the formats that reach ``logs.raw`` (see
:mod:`devtools.testing.fuzzing`), checked as the worker runs them: nothing raises, every output's
Avro body reads back, no record is lost, no dead letter says ``internal``, a restart from the saved
source states changes nothing. Engines: ``atheris`` (coverage-guided libFuzzer, Sluice's modules
instrumented; the default when it is installed: ``pip install -e .[fuzz]``), ``random`` (the same
generator on a seeded random stream, no instrumentation) and ``hypothesis``.

Each distinct finding (by signature: kind, step, exception and place) is written once to ``--out`` as
a crasher file, the format that ``tests/unit/assemble/crashers/`` keeps and CI replays; the report
at the end counts inputs, time, inputs per second and each finding. An input that takes more than
2 CPU-seconds is a finding too (a pattern a hostile line can stall on would stall a partition).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(".fuzz")
SLOW_CPU_S = 2.0  # one input taking this long is a finding: a regex or a loop a hostile line can stall


class Campaign:
    """Counts inputs and findings; writes each new finding's input once."""

    def __init__(self, fuzzing: Any, target: int, out: Path, progress_every: int) -> None:
        self.fz = fuzzing
        self.target, self.out, self.progress_every = target, out, progress_every
        self.inputs = 0
        self.seen: Counter[str] = Counter()
        self.files: dict[str, Path] = {}
        self.started = time.monotonic()
        self.cpu_started = time.process_time()
        out.mkdir(parents=True, exist_ok=True)

    def one(self, c: Any) -> None:
        run = self.fz.items(c)
        cut = c.integer(0, len(run))
        cpu = time.process_time()
        found = self.fz.check(run, cut)
        cpu = time.process_time() - cpu
        if cpu > SLOW_CPU_S:
            found.append(self.fz.Finding("slow", "an input slower than 2 CPU-seconds", f"{cpu:.1f} s"))
        for finding in found:
            self.seen[finding.signature] += 1
            if finding.signature not in self.files:
                path = self.out / self.fz.crasher_name(finding.signature)
                path.write_text(self.fz.dump_crasher(run, f"{finding.signature}: {finding.detail[:400]}", cut))
                self.files[finding.signature] = path
                print(f"new finding after {self.inputs + 1:,} inputs: {finding.signature} -> {path}", flush=True)
        self.inputs += 1
        if self.inputs % self.progress_every == 0:
            wall = time.monotonic() - self.started
            print(f"{self.inputs:,} inputs, {wall:,.0f} s, {self.inputs / wall:,.0f}/s, "
                  f"{sum(self.seen.values()):,} findings ({len(self.seen)} distinct)", flush=True)

    def done(self) -> bool:
        return self.inputs >= self.target

    def report(self, engine: str) -> str:
        wall = time.monotonic() - self.started
        cpu = time.process_time() - self.cpu_started
        lines = [f"engine {engine}: {self.inputs:,} inputs in {wall:,.0f} s ({self.inputs / wall:,.0f} inputs/s; "
                 f"{self.inputs / max(cpu, 1e-9):,.0f} per CPU-second), {sum(self.seen.values()):,} findings, "
                 f"{len(self.seen)} distinct"]
        lines += [f"  {n:>8,}  {sig}  ({self.files[sig]})" for sig, n in self.seen.most_common()]
        return "\n".join(lines)


def run_random(campaign: Campaign, seed: int) -> None:
    import random

    c = campaign.fz.RandomChoices(random.Random(seed))
    while not campaign.done():
        campaign.one(c)


def run_hypothesis(campaign: Campaign, seed: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    @hseed(seed)
    @settings(max_examples=campaign.target, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data: Any) -> None:
        campaign.one(campaign.fz.DrawChoices(data))

    one()


def run_atheris(campaign: Campaign, seed: int, engine: str) -> None:
    import atheris

    def one(data: bytes) -> None:
        campaign.one(campaign.fz.ProviderChoices(atheris.FuzzedDataProvider(data)))
        if campaign.done():
            print(campaign.report(engine), flush=True)
            os._exit(1 if campaign.seen else 0)  # libFuzzer would otherwise run on

    atheris.Setup([sys.argv[0], f"-seed={seed}", "-max_len=4096", "-rss_limit_mb=4096", "-print_final_stats=0"],
                  one)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m devtools.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000, help="inputs to run (default 100,000)")
    ap.add_argument("--engine", choices=["auto", "atheris", "random", "hypothesis"], default="auto",
                    help="auto: atheris when installed, else random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where new findings' inputs are written")
    ap.add_argument("--progress-every", type=int, default=50_000)
    args = ap.parse_args(argv)

    engine = args.engine
    if engine == "auto":
        try:
            import atheris
        except ImportError:
            engine = "random"
        else:
            engine = "atheris"
    if engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=["streams"]):
            from devtools.testing import fuzzing
    else:
        from devtools.testing import fuzzing
    campaign = Campaign(fuzzing, args.inputs, args.out, args.progress_every)
    if engine == "atheris":
        run_atheris(campaign, args.seed, engine)
    elif engine == "hypothesis":
        run_hypothesis(campaign, args.seed)
    else:
        run_random(campaign, args.seed)
    print(campaign.report(engine), flush=True)
    return 1 if campaign.seen else 0


if __name__ == "__main__":
    sys.exit(main())
