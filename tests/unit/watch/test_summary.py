from __future__ import annotations

from pathlib import Path

from helpers import T0, corpus_events, point

from streams.watch.summary import daily_summaries


def test_daily_summary_per_project_from_real_incidents(corpus: Path) -> None:
    records = (corpus_events(corpus / "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", "a")
               + corpus_events(corpus / "training/sglang_nccl_watchdog_timeout_hardwrapped.log", "b")
               + corpus_events(corpus / "training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log", "c"))
    day = records[0]["timestamp"]
    records = [{**r, "timestamp": day} for r in records]
    records += [point("d", day, step=1, loss=1.0), point("e", day, step=1, loss=1.0, project="other")]
    reports = daily_summaries(records)
    assert [(r["project"], r["jobs_seen"]) for r in reports] == [("default", 4), ("other", 1)]
    main = reports[0]
    assert main["jobs_failed"] == 3 and main["metric_points"] == 1
    assert main["failures_by_class"] == {"cuda_oom": 1, "nccl_timeout": 5, "python_exception": 2, "signal": 2}
    assert main["top_errors"][0] == {"error": "nccl_timeout", "count": 5}


def test_days_are_utc_days() -> None:
    reports = daily_summaries([point("t", T0 - 1), point("t", T0)])
    assert [r["day"] for r in reports] == ["2025-12-31", "2026-01-01"]


def test_incidents_by_root_class_per_project_and_day_each_once(corpus: Path) -> None:
    from test_first_failure import Run

    from devtools.testing.jobs import arranged_jobs, job_events
    from streams.watch.summary import incidents_by_root_class

    records = []
    for job in arranged_jobs(corpus, T0 + 3600_000):
        events = job_events([job])
        run = Run().events(events).later(events[-1], 3600_000)
        records += list(run.incidents.values())
    counted = incidents_by_root_class(records + records[:2])  # an update published twice counts once
    assert counted == {("default", "2026-01-01"): {
        "incidents": 6, "tasks_with_incidents": 6,
        "incidents_by_root_class": {"cuda_oom": 2, "dataloader_worker": 2, "killed": 1, "unknown": 1}}}
