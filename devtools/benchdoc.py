"""``docs/benchmarks.md``: the current figures, each with the command that reproduces it.

The figures live in ``docs/benchmarks.json`` (one entry per measurement); the page is rendered from it
(:func:`render`). ``python -m devtools bench`` refreshes the entries its parts measure
(:func:`figures_from_results`) and renders the page again; the entries no part measures (memory, scaling,
the fault suite, the local stack) are refreshed by running their own command and editing the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streams.config import REPO_ROOT

FIGURES = REPO_ROOT / "docs" / "benchmarks.json"
PAGE = REPO_ROOT / "docs" / "benchmarks.md"

INTRO = """\
# Benchmarks

The current figures, each with the command that reproduces it. They were measured on a machine with 2
cores shared with the whole local stack (Kafka, the registry, Elasticsearch and the object store run
beside the process measured), so read ratios taken in one run before absolute rates. This page is
generated from [`benchmarks.json`](benchmarks.json): `python -m devtools bench` measures the parts
marked with a part name and writes their new figures here (its full report, with plots, goes to
`bench-results/report.md`); the others are measured by their own command.

| what | figure | goal | part | reproduce |
|---|---|---|---|---|
"""

OUTRO = """
## How to read them

- **Lines per CPU-second** is the worker's own CPU time, so it does not depend on how busy the other
  servers on the machine are; lines/s (wall) does.
- **Ratios** (`sluice` / a peer or a raw client) come from runs side by side, alternating, on the same
  input: the machine's speed cancels out.
- The **peer** for the assemble stage is rsyslog (installed by the bench from Debian when missing) on
  the same lines, and Fluent Bit's multiline parser as measured for the design (about 128,000 lines
  per CPU-second on the corpus mix).
- The **hot sink** figures use a declared capacity of 500 docs/s (budget 400/s) so that a burst is
  well over the budget on a small local node; on a real cluster, declare its measured capacity.

![hot sink under a 10x burst: input, indexed docs per second, budget and lag](img/hot_sink_smoothing.png)

![a quiet project's latency while another bursts](img/hot_sink_fairness.png)

![an NCCL retry flood through the hot sink](img/hot_sink_incident_nccl_retry_flood.png)
"""


def load(path: Path = FIGURES) -> list[dict[str, str]]:
    entries: list[dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
    return entries


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(entries: list[dict[str, str]]) -> str:
    rows = [f"| {_cell(e['what'])} | {_cell(e['figure'])} | {_cell(e['goal']) or '-'} | "
            f"{e['part'] or 'by hand'} | `{_cell(e['command'])}` |" for e in entries]
    return INTRO + "\n".join(rows) + "\n" + OUTRO


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _engines_figure(engines: dict[str, Any], peer: dict[str, Any]) -> str:
    py, nat = engines["python"], engines["native"]
    figure = "; ".join(
        f"{what}: {_n(nat[k] or 0)} native against {_n(py[k] or 0)} Python ({(nat[k] or 0) / (py[k] or 1):.2f}x)"
        for what, k in (("core alone, Avro bodies written", "core"), ("worker, 200 lines per record", "worker_200"),
                        ("worker, one line per record", "worker_1")))
    rsyslog = peer.get("imkafka", {}).get("lines_per_cpu_s")
    if rsyslog and nat.get("worker_200"):
        figure += (f"; the native worker (200 lines per record) is {nat['worker_200'] / rsyslog:.2f} of rsyslog "
                   f"imkafka -> Elasticsearch ({_n(rsyslog)}) in the same run")
    return figure


def figures_from_results(results: dict[str, Any], command: str) -> dict[str, dict[str, str]]:
    """Entry id -> new ``figure`` and ``command``, for what one ``python -m devtools bench`` run measured."""
    out: dict[str, dict[str, str]] = {}

    def put(entry: str, figure: str) -> None:
        out[entry] = {"figure": figure, "command": command}

    core = results.get("core")
    if core:
        per_cpu = core["now"]["per_cpu_s"]
        put("assemble_core", f"{_n(per_cpu)} lines per CPU-second: {per_cpu / 128_000:.2f} of Fluent Bit's multiline "
                             "parser (about 128,000)")
    engines = results.get("engines")
    if engines:
        put("native_engine", _engines_figure(engines, results.get("peer") or {}))
    assemble = results.get("assemble")
    if assemble and assemble.get("per_cpu_s"):
        put("assemble_worker_batched", f"{_n(assemble['per_cpu_s'])} lines per CPU-second "
                                       f"({_n(assemble['per_s'] or 0)} lines/s wall), "
                                       f"{assemble['batch_lines']} lines per record")
    peer = results.get("peer") or {}
    if "sluice" in peer:
        own = peer["sluice"]["lines_per_cpu_s"]
        peers = [peer[k]["lines_per_cpu_s"] for k in ("imfile", "imkafka") if k in peer]
        if peers:
            put("assemble_worker_one_line", f"{_n(own)} lines per CPU-second against rsyslog's "
                                            f"{'-'.join(_n(p) for p in sorted(peers))}: "
                                            f"{'-'.join(f'{own / p:.2f}' for p in sorted(peers, reverse=True))} "
                                            "of the peer")
    if "floor_nothing" in peer and "floor_fixed" in peer:
        put("floor_one_line", f"{_n(peer['floor_nothing']['lines_per_cpu_s'])} lines per CPU-second reading only; "
                              f"{_n(peer['floor_fixed']['lines_per_cpu_s'])} decoding and writing one fixed event "
                              "per line")
    hot = results.get("hot") or {}
    if hot.get("ratio") is not None:
        put("hot_vs_bulk", f"{hot['ratio']:.2f}")
    if hot.get("max_ratio") is not None and hot.get("drain_s") is not None and hot.get("predicted_drain_s"):
        drain, theory = hot["drain_s"], hot["predicted_drain_s"]
        put("hot_burst", f"busiest second {hot['max_ratio']:.3f} x budget; drain {drain:.0f} s against "
                         f"{theory:.0f} s in theory ({drain / theory:.2f})")
    incidents = hot.get("incidents") or []
    if incidents:
        parts = [f"{name}: busiest second {peak:.3f} x budget, clear {clear} s vs {theory} s"
                 for name, peak, clear, theory in incidents]
        put("hot_incidents", "; ".join(parts))
    held = hot.get("held_back") or []
    if held:
        put("hot_fairness", "; ".join(f"{h:.3f} s ({title})" for title, h, _window in held))
    cold_runs = (results.get("cold") or {}).get("runs") or []
    if cold_runs:
        put("cold_vs_puts", "; ".join(f"{run['ratio']:.2f} ({run['network']})" for run in cold_runs
                                      if run.get("ratio") is not None))
    ship = results.get("ship")
    if ship and ship.get("cores") is not None:
        put("ship", f"{ship['cores']:.3f} cores, {ship['rss_mb']:.0f} MB RSS; write-to-Kafka delay p95 "
                    f"{ship['p95']:.2f} s")
    return out


def refresh(results: dict[str, Any], command: str, path: Path = FIGURES, page: Path = PAGE) -> list[str]:
    """Write the new figures of ``results`` into the JSON and render the page; returns the entries changed."""
    entries = load(path)
    new = figures_from_results(results, command)
    for entry in entries:
        entry.update(new.get(entry["id"], {}))
    path.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page.write_text(render(entries), encoding="utf-8")
    return sorted(new)
