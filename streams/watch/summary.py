"""The daily report per project: jobs started, finished and failed (by class), GPU-hours and mean GPU
utilisation per task, GPU-idle incidents, top errors, job incidents by root class. A pure fold.

``DailySummary`` takes LogEvent and MetricPoint dicts (or observations) one at a time, in time order,
plus the day's alerts (:meth:`DailySummary.add_alert`), and can be merged, so it works over a day's
stream, a table of partial results, or a list in a test. What a day alone cannot tell (whether a task
was seen before the day) is passed to :meth:`DailySummary.report`.

- started: the task has no record before the day;
- finished: the task reached its own ``max_steps`` and did not fail;
- failed: the task logged a fatal error: any error class but ``nccl_warn``; a failed task is counted
  once, under the class of its first fatal error;
- GPU-hours: the time each of the task's GPUs was sampled (``sluice ship``'s GPU samples): the gaps
  between consecutive samples of a device, each counted up to :data:`MAX_GAP_MS`, so that a device that
  stopped reporting is not counted as busy across the gap;
- mean utilisation: over the task's GPU samples, else over the utilisation its log lines reported.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from streams.watch.observation import Observation, from_record

DAY_MS = 24 * 3600 * 1000
MAX_GAP_MS = 60_000  # six missed 10 s samples: past this a device is not counted as held
NOT_FATAL = frozenset(("nccl_warn",))


def day_of(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


@dataclass
class TaskDay:
    """One task within one day."""

    first_ms: int
    last_ms: int
    max_steps: int | None = None
    last_step: int | None = None
    failed_class: str | None = None
    gpu_ms: int = 0
    util_sum: float = 0.0
    util_n: int = 0
    logged_util_sum: float = 0.0
    logged_util_n: int = 0
    devices: dict[str, int] = field(default_factory=dict)  # host|gpu -> last sample time

    def see(self, obs: Observation) -> None:
        self.first_ms, self.last_ms = min(self.first_ms, obs.ts_ms), max(self.last_ms, obs.ts_ms)
        if obs.max_steps is not None:
            self.max_steps = obs.max_steps
        if obs.step is not None:
            self.last_step = obs.step if self.last_step is None else max(self.last_step, obs.step)
        if obs.kind == "gpu":
            device = f"{obs.host}|{obs.gpu}"
            before = self.devices.get(device)
            if before is not None and obs.ts_ms > before:
                self.gpu_ms += min(obs.ts_ms - before, MAX_GAP_MS)
            self.devices[device] = max(obs.ts_ms, before or obs.ts_ms)
            if obs.gpu_util_pct is not None:
                self.util_sum += obs.gpu_util_pct
                self.util_n += 1
        elif obs.gpu_util_pct is not None:
            self.logged_util_sum += obs.gpu_util_pct
            self.logged_util_n += 1
        if obs.kind == "event" and obs.error_class and obs.error_class not in NOT_FATAL and not self.failed_class:
            self.failed_class = obs.error_class

    @property
    def finished(self) -> bool:
        return (not self.failed_class and self.max_steps is not None and self.last_step is not None
                and self.last_step >= self.max_steps)

    def mean_util(self) -> float | None:
        if self.util_n:
            return self.util_sum / self.util_n
        return self.logged_util_sum / self.logged_util_n if self.logged_util_n else None

    def merge(self, other: TaskDay) -> None:
        self.first_ms, self.last_ms = min(self.first_ms, other.first_ms), max(self.last_ms, other.last_ms)
        self.max_steps = other.max_steps if other.max_steps is not None else self.max_steps
        if other.last_step is not None:
            self.last_step = other.last_step if self.last_step is None else max(self.last_step, other.last_step)
        self.failed_class = self.failed_class or other.failed_class
        self.gpu_ms += other.gpu_ms
        self.util_sum, self.util_n = self.util_sum + other.util_sum, self.util_n + other.util_n
        self.logged_util_sum += other.logged_util_sum
        self.logged_util_n += other.logged_util_n
        for device, ts in other.devices.items():
            self.devices[device] = max(ts, self.devices.get(device, ts))


@dataclass
class DailySummary:
    project: str
    day: str
    jobs: set[str] = field(default_factory=set)
    failed_jobs: set[str] = field(default_factory=set)
    events: int = 0
    metric_points: int = 0
    gpu_samples: int = 0
    failures_by_class: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    tasks: dict[str, TaskDay] = field(default_factory=dict)
    idle_incidents: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, obs: Observation) -> None:
        if obs.task_id:
            self.jobs.add(obs.task_id)
            task = self.tasks.get(obs.task_id)
            if task is None:
                task = self.tasks[obs.task_id] = TaskDay(obs.ts_ms, obs.ts_ms)
            task.see(obs)
        if obs.kind == "gpu":
            self.gpu_samples += 1
            return
        if obs.kind == "metric":
            self.metric_points += 1
            return
        self.events += 1
        if obs.error_class:
            self.failures_by_class[obs.error_class] += 1
            self.errors[obs.error_type or obs.error_class] += 1  # headlines differ per rank and time
            if obs.task_id and obs.error_class not in NOT_FATAL:
                self.failed_jobs.add(obs.task_id)

    def add_alert(self, alert: dict[str, Any]) -> None:
        """An alert of the day (``sluice-alerts-<project>``): GPU-idle incidents are listed."""
        if alert.get("rule") == "gpu_idle":
            self.idle_incidents[alert["alert_id"]] = alert

    def merge(self, other: DailySummary) -> DailySummary:
        self.jobs |= other.jobs
        self.failed_jobs |= other.failed_jobs
        self.events += other.events
        self.metric_points += other.metric_points
        self.gpu_samples += other.gpu_samples
        self.failures_by_class.update(other.failures_by_class)
        self.errors.update(other.errors)
        for name, task in other.tasks.items():
            if name in self.tasks:
                self.tasks[name].merge(task)
            else:
                self.tasks[name] = task
        self.idle_incidents.update(other.idle_incidents)
        return self

    def report(self, top: int = 10, seen_before: set[str] | None = None,
               links: dict[str, Any] | None = None) -> dict[str, Any]:
        """``seen_before``: tasks with records before the day (None: unknown, every task counts as started)."""
        before = seen_before or set()
        incidents = sorted(self.idle_incidents.values(), key=lambda a: (_ms(a.get("first_seen")), a["alert_id"]))
        idle_by_task = Counter(a.get("task_id") for a in incidents)
        tasks = []
        for name in sorted(self.tasks):
            task = self.tasks[name]
            mean = task.mean_util()
            tasks.append({
                "task_id": name, "first_seen": task.first_ms, "last_seen": task.last_ms,
                "status": "failed" if task.failed_class else "finished" if task.finished else "running",
                "failed_class": task.failed_class, "started": name not in before,
                "last_step": task.last_step, "max_steps": task.max_steps,
                "gpus": len(task.devices), "gpu_hours": round(task.gpu_ms / 3_600_000, 3),
                "mean_gpu_util_pct": None if mean is None else round(mean, 1),
                "idle_incidents": idle_by_task.get(name, 0),
            })
        gpu_ms = sum(t.gpu_ms for t in self.tasks.values())
        util_n = sum(t.util_n for t in self.tasks.values())
        return {
            "project": self.project, "day": self.day, "jobs_seen": len(self.jobs),
            "jobs_started": sum(1 for t in tasks if t["started"]),
            "jobs_finished": sum(1 for t in tasks if t["status"] == "finished"),
            "jobs_failed": len(self.failed_jobs),
            "jobs_failed_by_class": dict(sorted(Counter(t["failed_class"] for t in tasks
                                                        if t["failed_class"]).items())),
            "events": self.events, "metric_points": self.metric_points, "gpu_samples": self.gpu_samples,
            "gpu_hours": round(gpu_ms / 3_600_000, 3),
            "mean_gpu_util_pct": round(sum(t.util_sum for t in self.tasks.values()) / util_n, 1) if util_n else None,
            "failures_by_class": dict(sorted(self.failures_by_class.items())),
            "top_errors": [{"error": e, "count": n} for e, n in self.errors.most_common(top)],
            "tasks": tasks,
            "idle_incidents": [_incident(a) for a in incidents],
            "links": links or {},
        }


def _ms(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and value:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    return 0


def _incident(alert: dict[str, Any]) -> dict[str, Any]:
    first = _ms(alert.get("first_seen"))
    resolved = _ms(alert.get("resolved_at")) or None
    details = alert.get("details") or {}
    return {
        "alert_id": alert["alert_id"], "task_id": alert.get("task_id"), "first_seen": first,
        "resolved_at": resolved, "status": alert.get("status", "firing"),
        "minutes": None if resolved is None else round((resolved - first) / 60_000, 1),
        "gpus": details.get("ranks", ""), "summary": alert.get("summary", ""),
    }


def summaries(records: list[dict[str, Any]] | list[Observation],
              alerts: list[dict[str, Any]] | None = None) -> list[DailySummary]:
    """One summary per (project, UTC day), sorted by day then project; ``alerts`` join on their first_seen."""
    by_key: dict[tuple[str, str], DailySummary] = {}
    for record in records:
        obs = record if isinstance(record, Observation) else from_record(record)
        key = (obs.project, day_of(obs.ts_ms))
        by_key.setdefault(key, DailySummary(*key)).add(obs)
    for alert in alerts or []:
        key = (alert["project"], day_of(_ms(alert.get("first_seen"))))
        by_key.setdefault(key, DailySummary(*key)).add_alert(alert)
    return [by_key[k] for k in sorted(by_key, key=lambda k: (k[1], k[0]))]


def daily_summaries(records: list[dict[str, Any]] | list[Observation], top: int = 10) -> list[dict[str, Any]]:
    """The reports of :func:`summaries`, every task counted as started."""
    return [s.report(top) for s in summaries(records)]


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
