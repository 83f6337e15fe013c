"""Every rule over one observation, against a state store: the whole watch logic, no I/O.

The worker backs :class:`WatchStore` with Faust tables (changelogged, so state survives a
restart); :class:`devtools.testing.watch.MemoryWatchStore` backs it with dicts for unit tests.
"""

from __future__ import annotations

from typing import Any, Protocol

from streams.watch.firstfail import FirstFailure, IncidentChange
from streams.watch.incidents import AlertChange, fold
from streams.watch.observation import Observation
from streams.watch.rules import Finding, ecc_rule, idle_rule, incident_rule, loss_rule, stall_rule, xid_rule
from streams.watch.settings import WatchSettings
from streams.watch.windows import UtilSample, sample_of


class WatchStore(Protocol):
    """Three tables: per-task (and per-rank) rule state, open incidents, windowed utilisation."""

    def get_state(self, key: str) -> dict[str, Any] | None: ...

    def put_state(self, key: str, value: dict[str, Any]) -> None: ...

    def get_incident(self, key: str) -> dict[str, Any] | None: ...

    def put_incident(self, key: str, value: dict[str, Any]) -> None: ...

    def drop_incident(self, key: str) -> None: ...

    def add_utilisation(self, key: str, ts_ms: int, sample: UtilSample) -> None:
        """Fold ``sample`` into every hopping window of ``key`` that contains ``ts_ms``."""

    def utilisation(self, key: str, window_start_ms: int) -> UtilSample | None: ...


# A task's newest log record is kept to this precision: one state write per task per 10 s, not per record.
LINE_MARK_MS = 10_000


def mark_line(task: dict[str, Any], ts_ms: int) -> None:
    if ts_ms >= task.get("line_ms", -(1 << 62)) + LINE_MARK_MS:
        task["line_ms"] = ts_ms


def idle_across_gpus(found: Finding, rank_key: str, task: dict[str, Any]) -> Finding | None:
    """A task's idle incident covers all its idle GPUs: it clears when the last of them is busy again."""
    idle: dict[str, int] = task.setdefault("idle", {})
    if not found.clears:
        idle[rank_key] = found.opened_ms
        return found
    idle.pop(rank_key, None)
    if not idle:
        del task["idle"]
        return found
    return None


class WatchEngine:
    def __init__(self, conf: WatchSettings) -> None:
        self.conf = conf
        self.cooldown_ms = int(conf.cooldown_s * 1000)
        self.first_failure = FirstFailure(conf) if conf.incidents else None

    def observe(self, obs: Observation, store: WatchStore) -> list[AlertChange]:
        return self.observe_all(obs, store)[0]

    def observe_all(self, obs: Observation, store: WatchStore) -> tuple[list[AlertChange], list[IncidentChange]]:
        """Alert changes and job incidents. A task with a task_id has its errors folded into job
        incidents (one alert per job failure); a source without one alerts per error class."""
        tracked = self.first_failure is not None and obs.task_id is not None
        if obs.kind == "tick":
            if not tracked or self.first_failure is None:
                return [], []
            incidents, alerts = self.first_failure.observe(obs, [], store)
            return alerts, incidents
        findings: list[Finding] = []
        # XIDs alert as gpu_xid whether or not the task is tracked: a hardware error is news of its own.
        found = (None if tracked else incident_rule(obs, self.conf.incident_classes)) or xid_rule(obs, self.conf)
        if found:
            findings.append(found)

        task = store.get_state(obs.task_key) or {}
        before = repr(task)
        if obs.from_log:  # a GPU sample is not the task's output: it neither shows progress nor that it logs
            mark_line(task, obs.ts_ms)
            for rule in (loss_rule, stall_rule):
                found = rule(obs, task, self.conf)
                if found:
                    findings.append(found)

        if obs.gpu_util_pct is not None or obs.kind == "gpu":
            findings += self._gpu_rules(obs, task, store)
        if repr(task) != before:
            store.put_state(obs.task_key, task)  # only changes go to the changelog

        changes = []
        for finding in findings:
            key = f"{obs.task_key}|{finding.rule}"
            incident, change = fold(store.get_incident(key), finding, obs, self.cooldown_ms)
            if change is not None:
                store.put_incident(key, incident)
                changes.append(change)
        if not tracked or self.first_failure is None:
            return changes, []
        incidents, alerts = self.first_failure.observe(obs, findings, store)
        return changes + alerts, incidents

    def _gpu_rules(self, obs: Observation, task: dict[str, Any], store: WatchStore) -> list[Finding]:
        """Idle (windowed, per GPU or rank, one incident per task) and ECC, against the GPU's own state."""
        findings = []
        rank = store.get_state(obs.rank_key) or {}
        before = repr(rank)
        if obs.gpu_util_pct is not None:
            store.add_utilisation(obs.rank_key, obs.ts_ms, sample_of(obs.gpu_util_pct, obs.ts_ms))
            found = idle_rule(obs, rank, self.conf, lambda start: store.utilisation(obs.rank_key, start),
                              task.get("line_ms"))
            found = idle_across_gpus(found, obs.rank_key, task) if found else None
            if found:
                findings.append(found)
        found = ecc_rule(obs, rank, self.conf)
        if found:
            findings.append(found)
        if repr(rank) != before:
            store.put_state(obs.rank_key, rank)
        return findings
