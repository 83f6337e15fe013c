"""GPU idle over hopping windows, training stalled, loss NaN and spikes; all on event time."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import MIN, T0, obs, point

from devtools.testing.watch import MemoryWatchStore
from streams.assemble.pipeline import parse_files
from streams.watch import WatchEngine, WatchSettings
from streams.watch.windows import last_closed_start, window_starts

SEC = 1000


class Run:
    def __init__(self, conf: WatchSettings | None = None) -> None:
        self.conf = conf or WatchSettings()
        self.engine, self.store = WatchEngine(self.conf), MemoryWatchStore(self.conf)
        self.changes: list = []

    def feed(self, records: list[dict]) -> list:
        out = [c for r in records for c in self.engine.observe(obs(r), self.store)]
        self.changes += out
        return out

    def new(self, rule: str | None = None) -> list[dict]:
        return [c.alert for c in self.changes if c.new and (rule is None or c.alert["rule"] == rule)]


def util(task: str, start: int, end: int, pct: float, every: int = 10 * SEC, rank: int = 0) -> list[dict]:
    return [point(task, t, gpu_utilization_pct=pct, rank=rank) for t in range(start, end, every)]


def test_window_arithmetic() -> None:
    assert window_starts(T0 + 90 * SEC, 5 * MIN, MIN) == [T0 - 3 * MIN, T0 - 2 * MIN, T0 - MIN, T0, T0 + MIN]
    assert last_closed_start(T0 + 5 * MIN, 5 * MIN, MIN) == T0
    assert last_closed_start(T0 + 5 * MIN - 1, 5 * MIN, MIN) == T0 - MIN


def test_idle_fires_when_the_first_fully_idle_window_closes() -> None:
    run = Run()
    run.feed(util("t", T0, T0 + 5 * MIN, 3.0))
    assert run.new() == [], "the window [T0, T0+5min) is not closed yet"
    run.feed(util("t", T0 + 5 * MIN, T0 + 5 * MIN + 21 * SEC, 3.0))
    assert run.new() == [], "judged only after the grace period (30 s)"
    run.feed(util("t", T0 + 5 * MIN + 30 * SEC, T0 + 5 * MIN + 31 * SEC, 3.0))
    [alert] = run.new("gpu_idle")
    assert alert["first_seen"] == T0 and alert["details"]["window_start"] == str(T0)
    assert alert["details"]["samples"] == "30" and alert["details"]["avg_pct"] == "3.00"


def test_idle_straddling_window_boundaries_is_averaged_over_the_window() -> None:
    # busy until T0+2min, idle after: the windows starting at T0+2min and later are idle.
    run = Run()
    run.feed(util("t", T0, T0 + 2 * MIN, 90.0) + util("t", T0 + 2 * MIN, T0 + 7 * MIN, 2.0))
    assert run.new() == []
    run.feed(util("t", T0 + 7 * MIN, T0 + 7 * MIN + 40 * SEC, 2.0))
    [alert] = run.new("gpu_idle")
    assert alert["details"]["window_start"] == str(T0 + 2 * MIN)


def test_samples_arriving_out_of_order_within_the_grace_are_counted() -> None:
    run = Run()
    samples = util("t", T0, T0 + 5 * MIN + 40 * SEC, 3.0)
    late = samples[29]  # T0+4:50, overtaken by the next 3 samples (another partition), less than the grace
    run.feed(samples[:29] + samples[30:33] + [late] + samples[33:])
    [alert] = run.new("gpu_idle")
    assert alert["details"]["samples"] == "30"


def test_redelivered_samples_are_not_counted_twice() -> None:
    run = Run()
    samples = util("t", T0, T0 + 5 * MIN + 40 * SEC, 3.0)
    run.feed(samples[:20] + samples[10:])  # a rebalance re-reads 10 uncommitted records
    [alert] = run.new("gpu_idle")
    assert alert["details"]["samples"] == "30"


def test_a_busy_spell_inside_the_window_keeps_the_average_up() -> None:
    run = Run()
    run.feed(util("t", T0, T0 + 4 * MIN, 2.0) + util("t", T0 + 4 * MIN, T0 + 6 * MIN, 60.0))
    assert run.new() == []  # window [T0, T0+5min) averages (24*2 + 6*60)/30 = 13.6%


def test_sustained_idleness_is_one_incident_until_the_cooldown_ends() -> None:
    run = Run(WatchSettings(cooldown_s=20 * 60))
    run.feed(util("t", T0, T0 + 30 * MIN, 1.0))
    idle = run.new("gpu_idle")
    assert len(idle) == 2, "re-raised once, after 20 minutes"
    assert idle[0]["alert_id"] == idle[1]["alert_id"], "the same idle stretch: the re-raise overwrites"
    updates = [c.alert for c in run.changes if not c.new]
    assert updates and updates[-1]["count"] > 1


def test_a_job_that_just_started_is_not_idle() -> None:
    run = Run()
    run.feed(util("t", T0 + 4 * MIN, T0 + 6 * MIN, 0.0))  # samples cover 1 min of window [T0, T0+5min)
    assert run.new() == []


def test_idle_is_per_rank_and_alerted_per_task() -> None:
    run = Run()
    records = util("t", T0, T0 + 6 * MIN, 1.0, rank=0) + util("t", T0, T0 + 6 * MIN, 1.0, rank=1) \
        + util("t", T0, T0 + 6 * MIN, 80.0, rank=2)
    run.feed(sorted(records, key=lambda r: r["timestamp"]))
    assert len(run.new("gpu_idle")) == 1
    assert run.changes[-1].alert["details"]["ranks"] == "node-1:0,node-1:1"


def test_stall_needs_quiet_steps_while_the_task_still_logs() -> None:
    run = Run(WatchSettings(stall_after_s=10 * 60))
    run.feed([point("t", T0 + i * MIN, step=i, loss=1.0) for i in range(5)])  # progress until T0+4min
    run.feed([point("t", T0 + m * MIN, step=4, loss=1.0) for m in range(5, 14)])  # same step, 9 min quiet
    assert run.new() == []
    run.feed([point("t", T0 + 14 * MIN, step=4, loss=1.0)])
    [alert] = run.new("training_stalled")
    assert alert["first_seen"] == T0 + 4 * MIN and alert["details"]["step"] == "4"
    run.feed([point("t", T0 + 15 * MIN, step=5, loss=1.0), point("t", T0 + 20 * MIN, step=5, loss=1.0)])
    assert len(run.new("training_stalled")) == 1, "progress resets the clock"


def test_a_late_older_step_is_not_progress() -> None:
    run = Run(WatchSettings(stall_after_s=10 * 60))
    run.feed([point("t", T0 + 4 * MIN, step=4), point("t", T0 + 3 * MIN, step=3)])
    run.feed([point("t", T0 + 14 * MIN, step=4)])
    [alert] = run.new("training_stalled")
    assert alert["first_seen"] == T0 + 4 * MIN


def test_stall_counts_log_events_without_steps_as_signs_of_life() -> None:
    run = Run(WatchSettings(stall_after_s=10 * 60))
    run.feed([point("t", T0, step=7)])
    event = {"event_id": "e1", "timestamp": T0 + 11 * MIN, "project": "default", "task_id": "t",
             "message": "still here", "source": {}, "error_class": None}
    run.feed([event])
    assert [a["rule"] for a in run.new()] == ["training_stalled"]


def test_a_finished_or_silent_task_does_not_stall() -> None:
    run = Run(WatchSettings(stall_after_s=60))
    done = point("t", T0, step=10)
    done["max_steps"] = 10
    run.feed([done, point("t", T0 + 5 * MIN, step=10)])
    run.feed([point("u", T0 + 5 * MIN)])  # never reported a step
    assert run.new() == []


def test_loss_nan_and_inf_alert_at_once() -> None:
    run = Run()
    run.feed([point("t", T0, step=1, loss=float("nan")), point("t", T0 + MIN, step=2, loss=float("inf"))])
    assert [a["rule"] for a in run.new()] == ["loss_nan"]
    assert run.changes[-1].alert["count"] == 2


def test_loss_spike_against_the_real_loss_curve(corpus: Path) -> None:
    real = [p for p in parse_files([corpus / "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log"],
                                   labels={"task_id": "t"}) if "message" not in p and p["step"] is not None]
    curve = [point("t", T0 + i * 20 * 1000, step=p["step"], **p["metrics"]) for i, p in enumerate(real)]
    run = Run()
    run.feed(curve)
    assert run.new() == [], "a real, healthy loss curve raises nothing"
    last = curve[-1]
    run.feed([point("t", last["timestamp"] + 20_000, step=last["step"] + 5, loss=10 * last["metrics"]["loss"])])
    [alert] = run.new("loss_spike")
    assert float(alert["details"]["baseline"]) < last["metrics"]["loss"] * 2


def test_real_jsonl_metrics_from_two_ranks_raise_nothing(corpus: Path) -> None:
    path = corpus / "training/ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_head.log"
    real = [p for p in parse_files([path], labels={"task_id": "t"}) if "message" not in p]
    run = Run()
    run.feed([{**p, "timestamp": T0 + i * 10_000} for i, p in enumerate(real)])
    assert run.new() == []


def test_state_survives_a_json_round_trip_like_a_changelog() -> None:
    run = Run()
    run.feed(util("t", T0, T0 + 3 * MIN, 1.0))
    # what a restarted worker sees: every table value written, serialised, and read back
    restored = Run()
    restored.store.state = json.loads(json.dumps(run.store.state))
    restored.store.windows = {k: json.loads(json.dumps(v)) for k, v in run.store.windows.items()}
    restored.feed(util("t", T0 + 3 * MIN, T0 + 5 * MIN + 31 * SEC, 1.0))
    [alert] = restored.new("gpu_idle")
    assert alert["details"]["samples"] == "30" and alert["details"]["first_sample"] == str(T0)
