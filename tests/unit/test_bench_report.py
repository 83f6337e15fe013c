"""`python -m devtools bench` reads the reports the hot and cold sink benches write."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from devtools.bench import cold_run, held_back, incident_rows, render
from streams.config import REPO_ROOT

PERF = REPO_ROOT / "tests" / "perf"


def perf_script(name: str) -> Any:
    if str(PERF) not in sys.path:
        sys.path.insert(0, str(PERF))  # the scripts import their siblings, as when run from there
    spec = importlib.util.spec_from_file_location(name, PERF / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def hot_bench() -> Any:
    return perf_script("hot_sink_bench")


def fairness_run(kind: str, p99: float, calm_p99: float) -> dict[str, Any]:
    return {"kind": kind, "nice": 15, "warmed_indices": 80,
            "burst_s": 8.0, "n": 250, "p50": 0.06, "p99": p99, "max": p99,
            "window_s": 0.1, "pre": 6.0, "calm_n": 60, "calm_p99": calm_p99, "held_back_p99": p99 - calm_p99,
            "quiet_acked": 375, "quiet_sent": 375}


def test_every_fairness_run_reaches_the_ratio_table() -> None:
    runs_in = [fairness_run("live", 0.204, 0.124), fairness_run("warm", 0.216, 0.123),
               fairness_run("new", 1.704, 0.201)]
    md = hot_bench().report(None, None, runs_in, "x")
    runs = held_back(md)
    assert [(t, round(h, 3), w) for t, h, w in runs] == [("live", 0.08, 0.1), ("steady state", 0.093, 0.1),
                                                          ("new indices", 1.503, 0.1)]
    table = render({"hot": {"md": md, "held_back": runs}}, "python -m devtools bench", "now", 1.0)
    assert ("| quiet project held back at p99 / window (events stamped live, today's indices exist) | **0.8** | <= 1 |"
            in table)
    assert ("| quiet project held back at p99 / window (corpus event times, every index exists) | **0.9** | <= 1 |"
            in table)
    assert ("| quiet project held back at p99 / window (corpus event times, the burst creates the indices) | **15.0** "
            "| <= 1 |" in table)


def test_both_cold_runs_reach_the_ratio_table_with_their_network() -> None:
    cold = perf_script("cold_sink_bench")
    runs = [cold_run(f"# Cold sink benchmark\n\n| | value |\n|---|---|\n{cold.headline(ratio, 3, latency)}\n")
            for ratio, latency in ((0.53, 0), (0.934, 10))]
    table = render({"cold": {"runs": runs}}, "python -m devtools bench", "now", 1.0)
    assert "| cold sink / raw PUTs (loopback (a PUT costs CPU only)) | **0.53** | >= 0.9 |" in table
    assert "| cold sink / raw PUTs (through Toxiproxy, 10 ms each way) | **0.93** | >= 0.9 |" in table


def test_a_perfect_sinks_clearing_time_is_the_backlog_over_the_spare_budget() -> None:
    fluid_clear = hot_bench().fluid_clear
    # 5 s at 40/s, 10 s at 4,000/s, then 40/s: a backlog of 36,000 drains at 360/s, in 100 s after the burst.
    produced = [40] * 5 + [4000] * 10 + [40] * 200
    assert fluid_clear(produced, 400, 40) == 15 + 100
    assert fluid_clear([40] * 50, 400, 40) is None  # never over the budget: nothing to clear
    assert fluid_clear([0, 500, 0], 400, 0) == 3  # 100 left after second 2, gone in second 3


def test_every_incident_reaches_the_ratio_table() -> None:
    bench = hot_bench()
    trace = bench.Trace(seconds=[1, 2], produced={"p": [10, 10]}, acked={"p": [10, 10]}, budget=[400, 400],
                        lag=[0, 0])
    incs = [{"incident": inc, "trace": trace, "project": "p", "budget": 400, "base_rate": 40.0, "events": 99,
             "peak_input": 6000, "max_per_second": peak, "max_ratio": peak / 400, "sliding_max": peak,
             "clear_s": clear, "theory_clear_s": theory}
            for inc, peak, clear, theory in zip(bench.INCIDENTS, (400, 402, 420), (60, 70, None), (55, 70, 40),
                                                strict=True)]
    md = bench.report(None, None, [], "x", incs)
    rows = incident_rows(md)
    assert rows == [("oom_at_barrier", 1.0, 60, 55), ("nccl_retry_flood", 1.005, 70, 70),
                    ("start_wave", 1.05, None, 40)]
    table = render({"hot": {"md": md, "incidents": rows}}, "python -m devtools bench", "now", 1.0)
    assert "| incident oom_at_barrier: max indexed in one second / budget | **1.000** | <= 1.05 |" in table
    assert "| incident oom_at_barrier: time to clear / a perfect sink's | **1.09** | <= 1.1 | 60 s vs 55 s |" in table
    assert "| incident start_wave: time to clear / a perfect sink's | n/a | <= 1.1 | None s vs 40 s |" in table


def test_the_peer_part_reports_the_workers_ceiling_beside_its_ratio() -> None:
    peer = {"imkafka": {"lines_per_cpu_s": 120_000.0}, "sluice": {"lines_per_cpu_s": 10_000.0},
            "floor_nothing": {"lines_per_cpu_s": 20_000.0}, "floor_fixed": {"lines_per_cpu_s": 13_000.0}}
    table = render({"peer": {"md": "# Peer: rsyslog\n", **peer}}, "python -m devtools bench", "now", 1.0)
    rows = [line for line in table.splitlines() if "rsyslog imkafka" in line]
    assert [row.split("|")[2].strip() for row in rows] == ["**0.08**", "0.17", "0.11"]
    assert "reading only" in rows[1] and "20,000 vs 120,000" in rows[1]


def test_the_benchmarks_page_is_rendered_from_its_figures() -> None:
    from devtools.benchdoc import PAGE, load, render

    entries = load()
    assert PAGE.read_text(encoding="utf-8") == render(entries), "render docs/benchmarks.md from benchmarks.json"
    for entry in entries:
        assert entry["figure"] and entry["command"], entry["id"]


def test_a_bench_run_refreshes_the_entries_it_measured(tmp_path) -> None:
    import json

    from devtools.benchdoc import FIGURES, figures_from_results, load, refresh

    cold = perf_script("cold_sink_bench")
    results = {
        "core": {"now": {"per_cpu_s": 64_000.0}},
        "assemble": {"per_cpu_s": 30_000.0, "per_s": 25_000.0, "batch_lines": 200},
        "peer": {"sluice": {"lines_per_cpu_s": 10_000.0}, "imfile": {"lines_per_cpu_s": 200_000.0},
                 "imkafka": {"lines_per_cpu_s": 100_000.0}, "floor_nothing": {"lines_per_cpu_s": 18_000.0},
                 "floor_fixed": {"lines_per_cpu_s": 13_000.0}},
        "hot": {"ratio": 0.91, "max_ratio": 1.0, "drain_s": 103.0, "predicted_drain_s": 100.0,
                "incidents": [("oom_at_barrier", 1.0, 50, 49)], "held_back": [("live", 0.06, 0.1)]},
        "cold": {"runs": [cold_run(f"| | value |\n|---|---|\n{cold.headline(0.55, 3, 0)}\n")]},
        "ship": {"cores": 0.05, "rss_mb": 80.0, "p95": 0.5},
        "engines": {"passes": 2, "python": {"core": 10_000.0, "worker_200": 8_000.0, "worker_1": 5_000.0},
                    "native": {"core": 20_000.0, "worker_200": 12_000.0, "worker_1": 6_000.0}},
    }
    new = figures_from_results(results, "python -m devtools bench")
    assert set(new) <= {e["id"] for e in load()}, "every figure the bench measures has its entry"
    assert new["assemble_core"]["figure"].startswith("64,000 lines per CPU-second: 0.50 of Fluent Bit")
    assert new["assemble_worker_one_line"]["figure"] == ("10,000 lines per CPU-second against rsyslog's "
                                                         "100,000-200,000: 0.05-0.10 of the peer")
    assert new["native_engine"]["figure"] == (
        "core alone, Avro bodies written: 20,000 native against 10,000 Python (2.00x); worker, 200 lines per record: "
        "12,000 native against 8,000 Python (1.50x); worker, one line per record: 6,000 native against 5,000 Python "
        "(1.20x); the native worker (200 lines per record) is 0.12 of rsyslog imkafka -> Elasticsearch (100,000) in "
        "the same run")
    assert new["hot_burst"]["figure"] == "busiest second 1.000 x budget; drain 103 s against 100 s in theory (1.03)"
    assert new["cold_vs_puts"]["figure"].startswith("0.55 (loopback")
    figures, page = tmp_path / "b.json", tmp_path / "b.md"
    figures.write_text(FIGURES.read_text())
    changed = refresh(results, "python -m devtools bench", figures, page)
    assert "ship" in changed and "assemble_memory" not in changed
    by_id = {e["id"]: e for e in json.loads(figures.read_text())}
    assert by_id["ship"]["figure"] == "0.050 cores, 80 MB RSS; write-to-Kafka delay p95 0.50 s"
    assert by_id["assemble_memory"] == {e["id"]: e for e in load()}["assemble_memory"], "unmeasured entries stay"
    assert "0.050 cores" in page.read_text()


def test_the_perf_scripts_import_devtools_without_the_callers_pythonpath(monkeypatch: Any) -> None:
    # The runner starts each script as `python tests/perf/x.py`, whose sys.path holds tests/perf, not the
    # checkout; a user's shell has no PYTHONPATH. `--help` imports the whole script and exits.
    from devtools.bench import _run

    monkeypatch.delenv("PYTHONPATH", raising=False)
    out = _run([sys.executable, str(PERF / "rsyslog_peer_bench.py"), "--help"], 60)
    assert "--passes" in out
