"""Job incidents: the first failure across a job's ranks, through the assemble core and the watch engine.

The jobs are whole multi-rank jobs built from real logs (devtools.testing.jobs: what is verbatim and
what is arranged is said there), and real multi-rank logs as they are.
"""

from __future__ import annotations

import calendar
import dataclasses
import json
from pathlib import Path
from typing import Any

import fastavro.validation
import pytest
from helpers import MIN, T0, corpus_events, point

from devtools.testing.jobs import (
    JOB_EPOCH_MS,
    REAL_LOGS,
    Job,
    arranged_jobs,
    job_events,
    oom_job,
    real_job,
    timeouts_everywhere_job,
)
from devtools.testing.watch import MemoryWatchStore
from streams.contracts import parsed_schema
from streams.watch import WatchEngine, WatchSettings
from streams.watch.firstfail import RULE, due, state_key
from streams.watch.observation import Observation, from_record

QUIET_MS = 60_000


class Run:
    """An engine and its store; observations in, incidents and alerts out (latest per id kept)."""

    def __init__(self, conf: WatchSettings | None = None) -> None:
        self.conf = conf or WatchSettings()
        self.engine, self.store = WatchEngine(self.conf), MemoryWatchStore(self.conf)
        self.incidents: dict[str, dict[str, Any]] = {}
        self.alerts: dict[str, dict[str, Any]] = {}
        self.raised: list[dict[str, Any]] = []  # new alerts, in order

    def feed(self, obs: Observation) -> None:
        alerts, incidents = self.engine.observe_all(obs, self.store)
        for change in incidents:
            self.incidents[change.incident["incident_id"]] = change.incident
        for alert in alerts:
            self.alerts[alert.alert["alert_id"]] = alert.alert
            if alert.new:
                self.raised.append(alert.alert)

    def events(self, events: list[dict[str, Any]]) -> Run:
        for event in events:
            self.feed(from_record(event))
        return self

    def later(self, template: dict[str, Any], ms: int) -> Run:
        """A plain record of the task ``ms`` after the newest one: the task went on logging."""
        ts = max(i["last_error"] for i in self.incidents.values()) if self.incidents else template["timestamp"]
        return self.events([{**template, "event_id": f"later-{ms}", "timestamp": ts + ms, "message": "saved",
                             "error_class": None, "error_type": None, "signal": None, "level": "INFO"}])


def run_job(job: Job) -> Run:
    """The job's events in the order the assemble core emits them (its blocks close late), then one
    record an hour later so that every incident is decided."""
    events = job_events([job])
    return Run().events(events).later(events[-1], 3600_000)


JOBS = {job.name: job for job in arranged_jobs(Path(__file__).parents[3] / "corpus")}


@pytest.mark.parametrize("name", [*JOBS, *REAL_LOGS])
def test_each_job_names_its_first_failure_with_one_alert(name: str, corpus: Path) -> None:
    job = JOBS[name] if name in JOBS else real_job(corpus, name)
    run = run_job(job)
    got = sorted(run.incidents.values(), key=lambda i: i["opened"])
    assert [(i["root_class"], i["first_rank"], i["first_process"]) for i in got] == \
        [(e.root_class, e.rank, e.process) for e in job.expect]
    for incident, expect in zip(got, job.expect, strict=True):
        assert fastavro.validation.validate(incident, parsed_schema("incident"))
        if expect.node is not None:
            assert incident["first_node"] == expect.node
        if expect.signal is not None:
            assert incident["root_signal"] == expect.signal
        assert incident["root_known"] == (expect.root_class is not None)
    assert [a["rule"] for a in run.raised] == [RULE] * len(job.expect), "one alert per job failure, nothing else"
    for alert, incident in zip(run.raised, got, strict=True):
        first_line = run.alerts[alert["alert_id"]]["summary"].splitlines()[0]
        assert incident["summary"] in first_line
        if incident["root_known"]:
            assert incident["root_class"] in first_line and f":{incident['first_rank'] or ''}" in first_line


def test_timeouts_everywhere_say_so_instead_of_naming_a_timeout(corpus: Path) -> None:
    job = timeouts_everywhere_job(corpus, JOB_EPOCH_MS)
    (incident,) = run_job(job).incidents.values()
    assert incident["root_known"] is False and incident["root_class"] is None and incident["first_rank"] is None
    assert "root cause unknown" in incident["summary"] and "nccl_timeout on 8 rank(s)" in incident["summary"]
    # Every rank's collective began about t0 (the arrangement) and ran for the template's 600050 ms.
    assert incident["blocked_since"] == JOB_EPOCH_MS
    assert incident["collateral_kinds"]["nccl_timeout"] == 8
    assert [t["kind"] for t in incident["timeline"][:8]] == ["nccl_timeout"] * 8


def test_the_corrected_clock_names_the_first_oom_and_the_stamped_one_would_not(corpus: Path) -> None:
    job = oom_job(corpus, JOB_EPOCH_MS, skew=True)
    (incident,) = run_job(job).incidents.values()
    assert (incident["first_rank"], incident["clock_corrected"]) == (5, True)
    for src in job.sources:
        src.labels.pop("sluice.io/clock-offset-ms", None)  # the agent says nothing about node 0's clock
    (unaware,) = run_job(job).incidents.values()
    assert unaware["first_rank"] == 2, "node 0's clock runs 30 s behind: its later OOM looks first"


def test_collateral_that_arrives_after_the_decision_updates_the_incident_in_place(corpus: Path) -> None:
    job = JOBS["oom"]
    events = job_events([job])
    early = [e for e in events if e["source"]["host"] == "oom-node-1"]
    late = [e for e in events if e["source"]["host"] == "oom-node-0"]  # timeouts, 10 min on
    run = Run()
    for obs in seen(early, 5_000_000):
        run.feed(obs)
    assert tick(run, early[-1], QUIET_MS) == 1
    assert len(run.raised) == 1 and len(run.incidents) == 1, "decided by the wall clock"
    before = dict(next(iter(run.incidents.values())))
    assert before["collateral_kinds"].get("nccl_timeout") is None
    for obs in seen(late, 5_000_000 + 600_000):
        run.feed(obs)
    (after,) = run.incidents.values()
    assert after["incident_id"] == before["incident_id"] and len(run.raised) == 1
    assert after["collateral_kinds"]["nccl_timeout"] == 4 and after["first_rank"] == 5
    assert 0 < after["time_to_first_collateral_ms"] < 1000, "the launcher's SIGTERMs, right after the OOM"
    timeouts = [t["time"] for t in after["timeline"] if t["kind"] == "nccl_timeout"]
    assert len(timeouts) == 4 and min(timeouts) - after["root_time"] > 9 * MIN
    assert run.alerts[before["alert_id"]]["event_ids"][0] == after["root_event_id"]
    assert "nccl_timeout on 4 rank(s)" in run.alerts[before["alert_id"]]["summary"]


def tick(run: Run, template: dict[str, Any], after_ms: int) -> int:
    """What the worker's timer does: a tick with the wall clock, for each task due."""
    state = run.store.get_incident(state_key(from_record(template).task_key))
    now = (state["seen_ms"] or 0) + after_ms
    if not due(state, now, run.conf):
        return 0
    run.feed(Observation(kind="tick", ts_ms=now, project=state["project"], task_id=state["task_id"],
                         event_id=f"tick:{now}", seen_ms=now))
    return 1


def seen(events: list[dict[str, Any]], wall_ms: int) -> list[Observation]:
    return [dataclasses.replace(from_record(e), seen_ms=wall_ms) for e in events]


def test_a_silent_job_is_decided_by_the_wall_clock_after_the_quiet_period(corpus: Path) -> None:
    events = [e for e in job_events([JOBS["sigkill"]]) if e["source"]["host"] == "sigkill-node-0"]
    run = Run()
    for obs in seen(events, 5_000_000):
        run.feed(obs)
    assert tick(run, events[-1], QUIET_MS - 1) == 0 and not run.incidents, "not before the quiet period"
    assert tick(run, events[-1], QUIET_MS) == 1
    (incident,) = run.incidents.values()
    assert incident["decided_wall"] == 5_000_000 + QUIET_MS and incident["root_class"] == "killed"
    key = state_key(from_record(events[-1]).task_key)
    assert tick(run, events[-1], 3600_000) == 1 and key not in run.store.incidents, "forgotten when nothing can join"


def test_redelivered_events_change_nothing(corpus: Path) -> None:
    events = job_events([JOBS["oom"]])
    once = Run().events(events).later(events[-1], 3600_000)
    twice = Run().events(events + events).later(events[-1], 3600_000)
    assert once.incidents == twice.incidents and len(twice.raised) == 1


def test_error_classes_of_a_task_raise_no_per_class_alert(corpus: Path) -> None:
    run = run_job(JOBS["oom"])
    assert {a["rule"] for a in run.alerts.values()} == {RULE}
    off = Run(WatchSettings(incidents=False)).events(job_events([JOBS["oom"]]))
    assert {a["rule"] for a in off.alerts.values()} >= {"cuda_oom", "nccl_timeout"}, "with incidents off"


def lone_exception(n: int, ts: int) -> list[dict[str, Any]]:
    """One worker's traceback (Cannot re-initialize CUDA in forked subprocess) and nothing else."""
    events = corpus_events(corpus_path() / "training/vllm_rocm_worker_traceback_plus_ipython_chained.log", "t-lone")
    e = next(e for e in events if e["error_class"])
    return [{**e, "event_id": f"lone-{n}", "timestamp": ts}]


def corpus_path() -> Path:
    return Path(__file__).parents[3] / "corpus"


def test_a_lone_exception_that_recurs_within_the_cooldown_is_one_alert_counted() -> None:
    run = Run()
    for n in range(3):
        run.events(lone_exception(n, T0 + n * 5 * MIN))
    run.later(lone_exception(9, T0)[0], 3600_000)
    assert len(run.incidents) == 3 and len(run.raised) == 1
    (alert,) = run.alerts.values()
    assert alert["count"] == 3 and "failed this way 3 times" in alert["summary"]
    assert sum(1 for i in run.incidents.values() if i["repeats"]) == 2


def test_a_job_that_visibly_dies_again_is_a_new_alert(corpus: Path) -> None:
    run = run_job(real_job(corpus, "accelerate-x2"))
    assert len(run.raised) == 2 and len({a["alert_id"] for a in run.raised}) == 2


def test_a_nan_loss_before_the_first_error_is_its_root(corpus: Path) -> None:
    events = corpus_events(corpus_path() / "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", "t-nan",
                           rank=1, host="n0")
    oom_at = max(e["timestamp"] for e in events)
    nan = point("t-nan", oom_at - 2 * MIN, step=100, rank=3, host="n1", loss=float("nan"))
    run = Run().events([nan, *events])
    run.later(events[-1], 3600_000)
    (incident,) = run.incidents.values()
    assert (incident["root_class"], incident["first_rank"], incident["first_node"]) == ("loss_nan", 3, "n1")
    stale = point("t-nan", oom_at - 20 * MIN, step=100, rank=3, host="n1", loss=float("nan"))
    (later,) = Run().events([stale, *events]).later(events[-1], 3600_000).incidents.values()
    assert later["root_class"] == "cuda_oom", "older than the lookback: not evidence"


def test_the_end_of_one_failure_arriving_after_the_start_of_the_next_joins_its_own(corpus: Path) -> None:
    """A task's events reach the stage through several partitions: run 1's ChildFailedError box (rank 4)
    may come after run 2's failure line (rank 3)."""
    events = job_events([real_job(corpus, "accelerate-x2")])
    boxes = [e for e in events if e["error_class"] and "Root Cause" in e["message"]]
    second_exit = next(e for e in events if "local_rank: 3" in e["message"])
    order = [e for e in events if e is not boxes[0]]
    order.insert(order.index(second_exit) + 1, boxes[0])
    run = Run().events(order).later(events[-1], 3600_000)
    got = sorted(run.incidents.values(), key=lambda i: i["opened"])
    assert [(i["first_rank"], i["collateral_kinds"].get("childfailed_box")) for i in got] == [(4, 1), (3, 1)]
    assert len(run.raised) == 2


def test_torchrun_s_box_names_the_job_s_rank_and_its_line_the_local_one() -> None:
    (incident,) = run_job(JOBS["oom"]).incidents.values()
    labels = {t["rank_label"]: t["kind"] for t in incident["timeline"]}
    assert "oom-node-1:1" not in labels, "the box says rank : 5 (local_rank: 1): it is rank 5's"
    assert labels["oom-node-1:5"] == "cuda_oom" and labels["oom-node-1:local_rank 1"] == "launcher_exit"
    assert incident["collateral_kinds"]["childfailed_box"] == 2


def test_root_errors_in_the_same_second_are_ordered_by_how_telling_they_are(corpus: Path) -> None:
    """vLLM stamps whole seconds: a worker's NCCL 'unhandled cuda error' and another's CUDA illegal memory
    access in the same second; the CUDA error is named, whichever id sorts first or arrives first."""
    events = [e for e in corpus_events(corpus / "training/vllm_worker_nccl_illegal_memory_watchdog_chained.log",
                                       "t-tie") if e["error_class"] in ("nccl_error", "cuda_error")][:2]
    assert [e["error_class"] for e in events] == ["nccl_error", "cuda_error"]
    nccl, cuda = ({**e, "event_id": i, "timestamp": T0 + ms} for e, i, ms in zip(events, ("a", "b"), (0, 400),
                                                                                 strict=True))
    for order in ([nccl, cuda], [cuda, nccl]):
        (incident,) = Run().events(order).later(nccl, 3600_000).incidents.values()
        assert (incident["root_class"], incident["root_event_id"]) == ("cuda_error", "b")
    apart = {**cuda, "timestamp": T0 + 1000}
    (incident,) = Run().events([nccl, apart]).later(nccl, 3600_000).incidents.values()
    assert incident["root_class"] == "nccl_error", "a second apart, the earlier is first"


def test_an_xid_the_gpu_rules_found_before_the_first_error_is_its_root(corpus: Path) -> None:
    """The GPU rules' findings (gpu_xid, gpu_ecc) reach the incident by their rule names."""
    from streams.watch.firstfail import FirstFailure
    from streams.watch.rules import Finding

    events = corpus_events(corpus_path() / "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", "t-xid",
                           rank=2, host="n0")
    error_at = max(e["timestamp"] for e in events)
    sample = Observation(kind="metric", ts_ms=error_at - 20_000, project="default", task_id="t-xid",
                         event_id="gpu-sample", host="n1", rank=6)
    xid = Finding("gpu_xid", "critical", sample.ts_ms, sample.ts_ms, "XID 79 (GPU has fallen off the bus) on n1 GPU 6")
    conf = WatchSettings()
    tracker, store = FirstFailure(conf), MemoryWatchStore(conf)
    assert tracker.observe(sample, [xid], store) == ([], []), "an XID alone is no job failure"
    decided = []
    for obs in [from_record(e) for e in events] + [from_record({**events[-1], "event_id": "later", "timestamp":
                                                                error_at + 3600_000, "error_class": None,
                                                                "level": "INFO", "message": "x"})]:
        decided += tracker.observe(obs, [], store)[0]
    (record,) = {c.incident["incident_id"]: c.incident for c in decided}.values()
    assert (record["root_class"], record["first_node"], record["first_rank"]) == ("gpu_xid", "n1", 6)
    assert record["root_message"].startswith("XID 79")


def test_an_untimed_traceback_read_from_a_backlog_keeps_its_ranks_time() -> None:
    """Two ranks share a node's stdout, read 20 minutes late in one go. Rank 1's traceback has no time:
    it took rank 1's line before it (the assemble core), so it is first, not its late read time."""
    from streams.assemble.pipeline import Assembler, RawRecord

    t10 = calendar.timegm((2025, 4, 5, 10, 0, 0)) * 1000
    read = t10 + 20 * MIN
    cuda = "RuntimeError: CUDA error: an illegal memory access was encountered"
    lines = ["[rank1]: 2025-04-05 10:00:00 INFO rank 1 ready", "[rank0]: 2025-04-05 10:04:00 INFO step 400",
             "[rank1]: Traceback (most recent call last):",
             "[rank0]: 2025-04-05 10:05:00 INFO step 500", '[rank1]:   File "train.py", line 3, in <module>',
             f"[rank0]: 2025-04-05 10:05:01 ERROR {cuda}", f"[rank1]: {cuda}",
             "[rank0]: 2025-04-05 10:06:00 INFO saving"]
    asm = Assembler()
    outputs = [o for i, line in enumerate(lines)
               for o in asm.feed(RawRecord("raw", 0, i, line.encode(), b"node-1|stdout", read))]
    events = [{**o.value, "task_id": "job-1"} for o in outputs + asm.flush_all() if o.kind == "event"]
    assert [e["source"]["rank"] for e in events if e["error_class"] == "cuda_error"] == [0, 1], "rank 1's closes last"
    run = Run().events(events)
    run.later(events[-1], 3600_000)
    (incident,) = run.incidents.values()
    assert (incident["first_rank"], incident["root_time"]) == (1, t10)


def test_an_observation_with_a_field_this_version_dropped_is_still_read() -> None:
    """Mid-upgrade, a router of the previous version still sends ``fail_ms`` to the watch agent."""
    obs = Observation(kind="event", ts_ms=T0, project="default", task_id="t-1", event_id="e-1", xids=(79,))
    older = {**json.loads(obs.to_json()), "fail_ms": T0 + MIN}
    assert Observation.from_json(json.dumps(older).encode()) == obs
