"""The daily report per project: jobs seen, failures by error class, top errors, job incidents by
root class. A pure fold.

``DailySummary`` takes LogEvent and MetricPoint dicts (or observations) one at a time and can be
merged, so it works over a day's stream, a table of partial results, or a list in a test.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from streams.watch.observation import Observation, from_record

DAY_MS = 24 * 3600 * 1000


def day_of(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


@dataclass
class DailySummary:
    project: str
    day: str
    jobs: set[str] = field(default_factory=set)
    failed_jobs: set[str] = field(default_factory=set)
    events: int = 0
    metric_points: int = 0
    failures_by_class: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, obs: Observation) -> None:
        if obs.task_id:
            self.jobs.add(obs.task_id)
        if obs.kind == "metric":
            self.metric_points += 1
            return
        self.events += 1
        if obs.error_class:
            self.failures_by_class[obs.error_class] += 1
            self.errors[obs.error_type or obs.error_class] += 1  # headlines differ per rank and time
            if obs.task_id and obs.error_class != "nccl_warn":
                self.failed_jobs.add(obs.task_id)

    def merge(self, other: DailySummary) -> DailySummary:
        self.jobs |= other.jobs
        self.failed_jobs |= other.failed_jobs
        self.events += other.events
        self.metric_points += other.metric_points
        self.failures_by_class.update(other.failures_by_class)
        self.errors.update(other.errors)
        return self

    def report(self, top: int = 10) -> dict[str, Any]:
        return {
            "project": self.project, "day": self.day, "jobs_seen": len(self.jobs),
            "jobs_failed": len(self.failed_jobs), "events": self.events, "metric_points": self.metric_points,
            "failures_by_class": dict(sorted(self.failures_by_class.items())),
            "top_errors": [{"error": e, "count": n} for e, n in self.errors.most_common(top)],
        }


def daily_summaries(records: list[dict[str, Any]] | list[Observation], top: int = 10) -> list[dict[str, Any]]:
    """One report per (project, UTC day), sorted by day then project."""
    by_key: dict[tuple[str, str], DailySummary] = {}
    for record in records:
        obs = record if isinstance(record, Observation) else from_record(record)
        key = (obs.project, day_of(obs.ts_ms))
        by_key.setdefault(key, DailySummary(*key)).add(obs)
    return [by_key[k].report(top) for k in sorted(by_key, key=lambda k: (k[1], k[0]))]


def incidents_by_root_class(incidents: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(project, UTC day of the first failure) -> incidents, failed tasks and the count per root class
    (``unknown`` when only collateral was seen). Each incident once, whatever its updates."""
    latest = {i["incident_id"]: i for i in incidents}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for record in latest.values():
        opened = record["opened"]
        key = (record["project"], day_of(opened if isinstance(opened, int) else int(opened)))
        entry = out.setdefault(key, {"incidents": 0, "incidents_by_root_class": Counter(), "tasks": set()})
        entry["incidents"] += 1
        entry["incidents_by_root_class"][record.get("root_class") or "unknown"] += 1
        entry["tasks"].add(record.get("task_id") or record["task_key"])
    return {k: {"incidents": v["incidents"], "tasks_with_incidents": len(v["tasks"]),
                "incidents_by_root_class": dict(sorted(v["incidents_by_root_class"].items()))}
            for k, v in out.items()}
