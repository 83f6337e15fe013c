"""`python -m devtools bench`: run the benchmarks side by side in one run and write one report.

Each part is one of the existing scripts, run as a subprocess (so a part's imports, event loop and
garbage cannot skew the next) on the local stack; this module only runs them, collects their figures
and writes ``bench-results/report.md`` with the ratios first, the raw numbers and the plots after, and the
new figures into ``docs/benchmarks.md`` (:mod:`devtools.benchdoc`).

Parts: ``core`` (the pure assemble core, this tree against a git ref, alternating rounds), ``engines`` (the
core and the worker with the Python and the native per-line engine: docs/native.md), ``assemble``
(one worker process, real Kafka in and out), ``peer`` (rsyslog on the same lines, and the worker with
its per-line work taken out: its ceiling), ``hot`` (hot sink vs ``helpers.async_bulk``, burst
smoothing, fairness, incident-shaped bursts), ``cold`` (cold sink vs raw PUTs), ``ship`` (the node
shipper's CPU and delay).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any

import click

from streams.config import REPO_ROOT

PARTS = ("core", "engines", "assemble", "peer", "hot", "cold", "ship")
OUT = REPO_ROOT / "bench-results"
PERF = REPO_ROOT / "tests" / "perf"

# Lines per CPU-second of the pure Assembler, one record per line; the same code works on any tree
# that has devtools.assemble_bench.corpus_records (so the baseline runs the ref's own code).
_CORE_SNIPPET = """
import json, sys, time
from devtools.assemble_bench import corpus_records
from streams.assemble.pipeline import Assembler
recs = corpus_records(int(sys.argv[1]))
asm = Assembler()
n = 0
c0, w0 = time.process_time(), time.perf_counter()
for r in recs:
    n += len(asm.feed(r))
n += len(asm.flush_all())
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
print(json.dumps({"lines": len(recs), "outputs": n, "cpu_s": cpu, "wall_s": wall}))
"""


def repo_env(**extra: str) -> dict[str, str]:
    """This process's environment with the checkout first on PYTHONPATH: the scripts under ``tests/perf`` import
    ``devtools``, which is run from the checkout, not installed."""
    path = os.pathsep.join(filter(None, (str(REPO_ROOT), os.environ.get("PYTHONPATH", ""))))
    return {**os.environ, "PYTHONPATH": path, **extra}


def _run(cmd: list[str], timeout: float, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None) -> str:
    """``env``: the whole environment of the command (default: :func:`repo_env`)."""
    env = repo_env() if env is None else env
    shown = " ".join("<core loop>" if "\n" in c else c for c in cmd)
    click.echo(f"$ {shown}", err=True)
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if res.returncode != 0:
        raise click.ClickException(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()[-800:]}")
    return res.stdout


def _baseline_tree(ref: str, tmp: Path) -> Path:
    """``streams/``, ``corpus/`` and ``devtools/`` of ``ref`` unpacked, as the ref's bench expects."""
    blob = subprocess.run(["git", "archive", ref, "streams", "corpus", "devtools"], cwd=REPO_ROOT, capture_output=True,
                          check=True).stdout
    root = tmp / "base"
    root.mkdir()
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(root, filter="data")
    return root


def part_core(passes: int, rounds: int, ref: str | None) -> dict[str, Any]:
    trees = {"now": REPO_ROOT}
    tmp = Path(tempfile.mkdtemp(prefix="sluice-bench-"))
    try:
        if ref:
            trees[ref] = _baseline_tree(ref, tmp)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(rounds):  # alternate, so load from other work hits both alike
            for name, root in trees.items():
                out = _run([sys.executable, "-c", _CORE_SNIPPET, str(passes)], 900, cwd=root,
                           env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
                runs[name].append(json.loads(out.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result: dict[str, Any] = {"passes": passes, "rounds": rounds, "ref": ref, "runs": runs}
    for name, rs in runs.items():
        result[name] = {"lines": rs[0]["lines"], "outputs": rs[0]["outputs"],
                        "per_cpu_s": statistics.median(r["lines"] / r["cpu_s"] for r in rs),
                        "per_s": statistics.median(r["lines"] / r["wall_s"] for r in rs)}
    return result


def _md_number(text: str, pattern: str) -> float | None:
    m = re.search(pattern, text)
    return float(m.group(1).replace(",", "")) if m else None


def part_engines(passes: int) -> dict[str, Any]:
    """Lines per CPU-second with each engine (``SLUICE_ASSEMBLE__ENGINE``): the core alone (Avro bodies written, as the
    worker does), and the worker with 200 lines per record and with one line per record."""
    out: dict[str, Any] = {"passes": passes}
    for engine in ("python", "native"):
        env = repo_env(SLUICE_ASSEMBLE__ENGINE=engine)
        core = json.loads(_run([sys.executable, "-m", "devtools.assemble_bench", str(passes), "--engine", engine,
                                "--encode", "--json"], 900, env=env).strip().splitlines()[-1])
        row: dict[str, Any] = {"core": core["lines"] / core["cpu_s"]}
        for batch_lines in (200, 1):
            row[f"worker_{batch_lines}"] = part_assemble(passes, batch_lines, env)["per_cpu_s"]
        out[engine] = row
    return out


def part_assemble(passes: int, batch_lines: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    _run([sys.executable, str(PERF / "assemble_bench.py"), "--passes", str(passes),
          "--batch-lines", str(batch_lines)], 1200, env=env)
    md = (OUT / f"assemble-batch{batch_lines}.md").read_text()
    return {"md": md, "passes": passes, "batch_lines": batch_lines,
            "per_s": _md_number(md, r"\*\*([\d,]+) lines/s\*\* \(wall\)"),
            "per_cpu_s": _md_number(md, r"\*\*([\d,]+) lines per CPU-second\*\*")}


def part_peer(passes: int) -> dict[str, Any]:
    _run([sys.executable, str(PERF / "rsyslog_peer_bench.py"), "--passes", str(passes), "--floor"], 1800)
    return {"md": (OUT / "peer_rsyslog.md").read_text(), **json.loads((OUT / "peer_rsyslog.json").read_text())}


def part_hot(skip: str, burst_s: float, docs: int, rounds: int, incidents: str | None = None) -> dict[str, Any]:
    """``incidents``: which incident-shaped bursts (None: all of them)."""
    cmd = [sys.executable, str(PERF / "hot_sink_bench.py"), "--burst-s", str(burst_s), "--docs", str(docs),
           "--rounds", str(rounds)]
    if incidents is not None:
        cmd += ["--incidents", incidents]
    if skip:
        cmd += ["--skip", skip]
    _run(cmd, 3600)
    md = (OUT / "hot_sink.md").read_text()
    return {"md": md, "ratio": _md_number(md, r"Ratio sink / raw: ([\d.]+)"),
            "max_ratio": _md_number(md, r"\*\*([\d.]+) x budget\*\*"),
            "drain_s": _md_number(md, r"drain time: (\d+) s"),
            "predicted_drain_s": _md_number(md, r"backlog / \(budget - baseline\) = ([\d.]+) s"),
            "held_back": held_back(md), "incidents": incident_rows(md)}


def incident_rows(md: str) -> list[tuple[str, float, int | None, int | None]]:
    """(incident, busiest second / budget, seconds to clear, a perfect sink's) per row of hot_sink.md's (iv)."""
    found = re.findall(r"^\| (\w+) \| [\d,]+ \| \*\*([\d.]+)\*\* \| [\d.]+ \| (\d+|None) s \| (\d+|None) s \|", md,
                       flags=re.M)
    return [(name, float(peak), None if clear == "None" else int(clear), None if theory == "None" else int(theory))
            for name, peak, clear, theory in found]


# The fairness runs of hot_sink.md, by the label its titles start with.
FAIRNESS_RUNS = {"live": "events stamped live, today's indices exist",
                 "steady state": "corpus event times, every index exists",
                 "new indices": "corpus event times, the burst creates the indices"}


def held_back(md: str) -> list[tuple[str, float, float]]:
    """(run, seconds the quiet project was held back at p99, window) per fairness run of hot_sink.md."""
    found = re.findall(r"\*\*(live|steady state|new indices)[^*]*\*\*.*?window ([\d.]+) s.*?held back by the burst "
                       r"at p99: \*\*([-\d.]+) s\*\*", md, flags=re.S)
    return [(title, float(held), float(window)) for title, window, held in found]


def part_cold(events: int, latency_ms: int) -> dict[str, Any]:
    """The cold bench on loopback, then (``latency_ms`` > 0) with the store behind that much latency."""
    runs = []
    for latency in (0, latency_ms) if latency_ms else (0,):
        out = OUT / (f"cold_sink_{latency}ms.md" if latency else "cold_sink.md")
        _run([sys.executable, str(PERF / "cold_sink_bench.py"), "--events", str(events), "--latency-ms",
              str(latency), "--out", str(out)], 1800)
        runs.append(cold_run(out.read_text()))
    return {"runs": runs}


def cold_run(md: str) -> dict[str, Any]:
    """The ratio and the network to the store from one cold bench report (its ``headline`` rows)."""
    network = re.search(r"^\| network to the store \| ([^|]+?) \|", md, flags=re.M)
    return {"md": md, "ratio": _md_number(md, r"\*\*ratio sink / raw\*\*[^|]*\| \*\*([\d.]+)\*\*"),
            "network": network.group(1) if network else "network not reported"}


def part_ship(rate: int, seconds: float) -> dict[str, Any]:
    text = _run([sys.executable, "-m", "devtools.ship_bench", "--rate", str(rate), "--seconds", str(seconds)],
                600 + seconds)
    return {"text": text.strip(), "cores": _md_number(text, r"CPU ([\d.]+) cores"),
            "rss_mb": _md_number(text, r"peak RSS ([\d.]+) MB"), "p95": _md_number(text, r"p95 ([\d.]+)s")}


def _demote(md: str) -> str:
    """A part's own report, its headings one level down, inside the combined one."""
    return re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", md.strip(), flags=re.M)


def _fmt(x: float | None, spec: str = ",.0f") -> str:
    return "n/a" if x is None else format(x, spec)


def render(results: dict[str, Any], cmd: str, started: str, elapsed_s: float) -> str:  # noqa: PLR0912, PLR0915
    r = results
    lines = ["# Sluice benchmark report", "",
             f"`{cmd}`, {started}, {elapsed_s / 60:.1f} min, on the shared local stack (2 cores shared with other "
             "work: figures are side by side in one run; read the ratios first).", "",
             "## Ratios", "", "| what | ratio | goal | raw numbers |", "|---|---|---|---|"]
    core = r.get("core")
    if core and core.get("ref"):
        now, base = core["now"], core[core["ref"]]
        lines.append(f"| assemble core, this tree / `{core['ref']}` (lines per CPU-second) | "
                     f"**{now['per_cpu_s'] / base['per_cpu_s']:.2f}** | faster | {now['per_cpu_s']:,.0f} vs "
                     f"{base['per_cpu_s']:,.0f} |")
    if core:
        lines.append(f"| assemble core / Fluent Bit's multiline parser (128,000 lines per CPU-second) | "
                     f"{core['now']['per_cpu_s'] / 128_000:.2f} | 1.0 | {core['now']['per_cpu_s']:,.0f} |")
    peer = r.get("peer")
    if peer and "sluice" in peer:
        s = peer["sluice"]["lines_per_cpu_s"]
        for key, what in (("imfile", "rsyslog imfile multiline -> omkafka"),
                          ("imkafka", "rsyslog imkafka -> omelasticsearch")):
            if key in peer:
                p = peer[key]["lines_per_cpu_s"]
                lines.append(f"| assemble worker / {what} (lines per CPU-second, same lines) | **{s / p:.2f}** | "
                             f">= 1 | {s:,.0f} vs {p:,.0f} |")
    for key, what in (("floor_nothing", "reading only"), ("floor_fixed", "reading, decoding, writing")):
        if peer and key in peer and "imkafka" in peer:  # the most a faster per-line path could reach
            f, p = peer[key]["lines_per_cpu_s"], peer["imkafka"]["lines_per_cpu_s"]
            lines.append(f"| ceiling: the worker with no per-line work ({what}) / rsyslog imkafka -> omelasticsearch "
                         f"| {f / p:.2f} | >= 1 to make the goal reachable | {f:,.0f} vs {p:,.0f} |")
    hot = r.get("hot")
    if hot and hot.get("ratio") is not None:
        lines.append(f"| hot sink / `helpers.async_bulk` | **{hot['ratio']:.2f}** | >= 0.8 | see below |")
    if hot and hot.get("max_ratio") is not None:
        lines.append(f"| burst: max indexed in one second / budget | **{hot['max_ratio']:.3f}** | <= 1.05 | "
                     "see below |")
    if hot and hot.get("drain_s") is not None and hot.get("predicted_drain_s"):
        lines.append(f"| burst: drain time / theoretical | **{hot['drain_s'] / hot['predicted_drain_s']:.2f}** | "
                     f"<= 1.1 | {hot['drain_s']:.0f} s vs {hot['predicted_drain_s']:.0f} s |")
    for title, held, window in (hot or {}).get("held_back", []):
        what = FAIRNESS_RUNS.get(title, title)
        lines.append(f"| quiet project held back at p99 / window ({what}) | **{held / window:.1f}** | <= 1 | "
                     f"{held:.3f} s, window {window:g} s |")
    for name, peak, clear, theory in (hot or {}).get("incidents", []):
        lines.append(f"| incident {name}: max indexed in one second / budget | **{peak:.3f}** | <= 1.05 | see below |")
        ratio = f"**{clear / theory:.2f}**" if clear and theory else "n/a"
        lines.append(f"| incident {name}: time to clear / a perfect sink's | {ratio} | <= 1.1 | "
                     f"{clear} s vs {theory} s |")
    cold_runs = (r.get("cold") or {}).get("runs", [])
    for run in cold_runs:
        lines.append(f"| cold sink / raw PUTs ({run['network']}) | **{_fmt(run['ratio'], '.2f')}** | >= 0.9 | "
                     "see below |")
    lines += ["", "## Raw numbers", ""]
    if core:
        lines += ["### Assemble core (no Kafka)", "",
                  f"{core['now']['lines']:,} lines ({core['passes']} passes of the corpus mix, one record per line), "
                  f"median of {core['rounds']} alternating rounds; `python -m devtools.assemble_bench` "
                  "measures the same loop.", "",
                  "| tree | lines per CPU-second | lines/s (wall) | outputs |", "|---|---|---|---|"]
        for name in [n for n in ("now", core.get("ref")) if n]:
            x = core[name]
            lines.append(f"| {name} | {x['per_cpu_s']:,.0f} | {x['per_s']:,.0f} | {x['outputs']:,} |")
        lines.append("")
    engines = r.get("engines")
    if engines:
        lines += ["### Engines (lines per CPU-second)", "",
                  f"{engines['passes']} passes of the corpus mix; the core writes each output's Avro body.", "",
                  "| engine | core alone | worker, 200 lines per record | worker, one line per record |",
                  "|---|---|---|---|"]
        for name in ("python", "native"):
            x = engines[name]
            lines.append(f"| {name} | {_fmt(x['core'])} | {_fmt(x['worker_200'])} | {_fmt(x['worker_1'])} |")
        lines.append("")
    if r.get("assemble"):
        lines += [_demote(r["assemble"]["md"]), ""]
    if peer:
        lines += [_demote(peer["md"]), ""]
    if hot:
        lines += [_demote(hot["md"]), ""]
    for run in cold_runs:
        lines += [_demote(run["md"]), ""]
    if r.get("ship"):
        lines += ["### `sluice ship`", "", "```", r["ship"]["text"], "```", ""]
    if r.get("failed"):
        lines += ["## Parts that failed", ""] + [f"- {k}: {v}" for k, v in r["failed"].items()] + [""]
    return "\n".join(lines)


@click.command()
@click.option("--only", default=",".join(PARTS), show_default=True, help=f"comma list of parts: {', '.join(PARTS)}")
@click.option("--skip", "skip_parts", default="", help="comma list of parts to leave out")
@click.option("--quick", is_flag=True, help="shorter runs everywhere (minutes, not a quarter of an hour)")
@click.option("--baseline-ref", default="HEAD", show_default=True,
              help="git ref whose assemble core runs beside this tree's ('' for none)")
@click.option("--passes", type=int, default=None, help="corpus passes for core/assemble/peer (default 5, quick 2)")
@click.option("--rounds", type=int, default=None, help="alternating rounds of the core bench (default 3, quick 2)")
@click.option("--batch-lines", type=int, default=200, show_default=True, help="lines per record in the assemble part")
@click.option("--hot-skip", default="", help="hot sink sub-parts to skip: throughput,smoothing,fairness,incidents")
@click.option("--burst-s", type=float, default=None, help="hot sink burst length (default 20, quick 8)")
@click.option("--cold-events", type=int, default=None, help="cold sink events (default 60000, quick 20000)")
@click.option("--cold-latency-ms", type=int, default=10, show_default=True,
              help="the cold bench again with the store behind this latency each way (Toxiproxy; 0: loopback only)")
@click.option("--docs/--no-docs", "update_docs", default=True, show_default=True,
              help="write the new figures into docs/benchmarks.json and docs/benchmarks.md (never with --quick)")
def bench(only: str, skip_parts: str, quick: bool, baseline_ref: str, passes: int | None, rounds: int | None,
          batch_lines: int, hot_skip: str, burst_s: float | None, cold_events: int | None,
          cold_latency_ms: int, update_docs: bool) -> None:
    """Benchmarks side by side in one run -> bench-results/report.md (ratios, raw numbers, plots), and the
    figures of docs/benchmarks.md."""
    chosen = [p for p in filter(None, only.split(",")) if p not in set(skip_parts.split(","))]
    unknown = set(chosen) - set(PARTS)
    if unknown:
        raise click.BadParameter(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    passes = passes or (2 if quick else 5)
    rounds = rounds or (2 if quick else 3)
    OUT.mkdir(exist_ok=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    results: dict[str, Any] = {"failed": {}}
    steps = {
        "core": lambda: part_core(passes, rounds, baseline_ref or None),
        "engines": lambda: part_engines(passes),
        "assemble": lambda: part_assemble(passes, batch_lines),
        "peer": lambda: part_peer(max(2, passes // 2) if not quick else 2),
        "hot": lambda: part_hot(hot_skip, burst_s or (8.0 if quick else 20.0), 10_000 if quick else 30_000,
                                1 if quick else 2, "oom_at_barrier" if quick else None),  # quick: the shortest
        "cold": lambda: part_cold(cold_events or (20_000 if quick else 60_000), cold_latency_ms),
        "ship": lambda: part_ship(10_000, 8.0 if quick else 20.0),
    }
    for part in PARTS:
        if part not in chosen:
            continue
        click.echo(f"== {part}", err=True)
        try:
            results[part] = steps[part]()
        except (click.ClickException, subprocess.TimeoutExpired, OSError, ValueError) as exc:
            results["failed"][part] = str(exc)[-600:]
            click.echo(f"   {part} failed: {exc}", err=True)
    cmd = "python -m devtools bench " + " ".join(sys.argv[2:]) if len(sys.argv) > 1 else "python -m devtools bench"
    text = render(results, cmd.strip(), started, time.monotonic() - t0)
    (OUT / "report.md").write_text(text)
    (OUT / "report.json").write_text(json.dumps(results, indent=1, default=str))
    click.echo(text)
    click.echo(f"\nwritten: {OUT / 'report.md'}", err=True)
    if update_docs and not quick:
        from devtools.benchdoc import PAGE, refresh

        changed = refresh(results, cmd.strip())
        click.echo(f"written: {PAGE} ({', '.join(changed) or 'no figure measured'})", err=True)


