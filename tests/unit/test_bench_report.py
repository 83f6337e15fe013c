"""`sluice bench` reads the hot sink report the hot sink bench writes."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from streams.cli.bench import held_back, render
from streams.config import REPO_ROOT


def hot_bench() -> Any:
    spec = importlib.util.spec_from_file_location("hot_sink_bench", REPO_ROOT / "tests" / "perf" / "hot_sink_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hot_sink_bench"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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
    table = render({"hot": {"md": md, "held_back": runs}}, "sluice bench", "now", 1.0)
    assert ("| quiet project held back at p99 / window (events stamped live, today's indices exist) | **0.8** | <= 1 |"
            in table)
    assert ("| quiet project held back at p99 / window (corpus event times, every index exists) | **0.9** | <= 1 |"
            in table)
    assert ("| quiet project held back at p99 / window (corpus event times, the burst creates the indices) | **15.0** "
            "| <= 1 |" in table)
