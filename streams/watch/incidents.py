"""Findings -> incidents -> alerts: per-task cooldown and de-duplication.

An incident is (task, rule) from the first finding for ``cooldown_s``: every rank that reports the
same OOM in that time is folded into it (``count``, ``ranks``, ``event_ids``) instead of raising
another alert. The alert id is a hash of (project, task, rule, when the incident began), all from
the data itself, so a replay or a re-raise of the same incident overwrites its alert on the
compacted topic and in the index. Records seen before (an at-least-once redelivery) are ignored.

A clearing finding (a GPU busy again) resolves the open incident: its alert is written again with
``status: resolved`` under the same id, and notified. The next finding of the rule opens a new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from streams.watch.observation import Observation
from streams.watch.rules import Finding

MAX_EVENT_IDS = 50  # an alert names its first events, not every one of a 1,000-rank flood
MAX_RANKS = 256


@dataclass(frozen=True)
class AlertChange:
    """An alert to write: ``new`` for a freshly raised or resolved incident (notify), else an update of one."""

    alert: dict[str, Any]
    new: bool


def alert_id(project: str, task_key: str, rule: str, opened_ms: int) -> str:
    digest = hashlib.sha1(f"{project}|{task_key}|{rule}|{opened_ms}".encode(), usedforsecurity=False)
    return f"{rule}-{digest.hexdigest()[:20]}"


def _rank_label(obs: Observation) -> str | None:
    if obs.rank is None and not obs.host:
        return None
    if obs.host is None:
        return f"rank{obs.rank}"
    return obs.host if obs.rank is None else f"{obs.host}:{obs.rank}"


def fold(incident: dict[str, Any] | None, finding: Finding, obs: Observation,
         cooldown_ms: int) -> tuple[dict[str, Any], AlertChange | None]:
    """The incident after this finding, and the alert change to write (None: nothing new)."""
    rank = _rank_label(obs)
    if finding.clears:
        if incident is None or incident.get("resolved_ms") is not None:
            return incident or {}, None
        incident["resolved_ms"] = finding.ts_ms
        incident["resolution"] = finding.headline
        incident["last_seen"] = max(incident["last_seen"], finding.ts_ms)
        incident["details"].update(finding.details)
        return incident, AlertChange(to_alert(incident), new=True)
    if (incident is None or incident.get("resolved_ms") is not None
            or finding.ts_ms - incident["raised_ms"] >= cooldown_ms
            or finding.ts_ms < incident["raised_ms"] - cooldown_ms):
        incident = {
            "alert_id": alert_id(obs.project, obs.task_key, finding.rule, finding.opened_ms),
            "rule": finding.rule, "severity": finding.severity, "project": obs.project, "task_id": obs.task_id,
            "task_key": obs.task_key, "raised_ms": finding.ts_ms,
            "first_seen": min(finding.opened_ms, finding.ts_ms), "last_seen": finding.ts_ms, "count": 1,
            "event_ids": [obs.event_id], "ranks": [rank] if rank else [], "headline": finding.headline,
            "details": dict(finding.details),
        }
        return incident, AlertChange(to_alert(incident), new=True)
    if obs.event_id in incident["event_ids"]:
        return incident, None  # redelivered, or a second rule-firing of the same record
    incident["count"] += 1
    incident["first_seen"] = min(incident["first_seen"], finding.ts_ms)
    incident["last_seen"] = max(incident["last_seen"], finding.ts_ms)
    if len(incident["event_ids"]) < MAX_EVENT_IDS:
        incident["event_ids"].append(obs.event_id)
    if rank and rank not in incident["ranks"] and len(incident["ranks"]) < MAX_RANKS:
        incident["ranks"].append(rank)
    incident["details"].update(finding.details)
    return incident, AlertChange(to_alert(incident), new=False)


def to_alert(incident: dict[str, Any]) -> dict[str, Any]:
    """An incident as a ``sluice.v1.Alert``."""
    ranks = incident["ranks"]
    where = f" on {len(ranks)} rank(s)" if len(ranks) > 1 else (f" on {ranks[0]}" if ranks else "")
    task = incident["task_id"] or incident["task_key"].split("/", 1)[-1]
    resolved = incident.get("resolved_ms")
    state = "resolved" if resolved is not None else incident["severity"]
    summary = f"[{state}] {incident['rule']} in {task} ({incident['project']}){where}: " \
              f"{incident['headline']}" + (f"; {incident['resolution']}" if resolved is not None else "")
    details = {**incident["details"], "task_key": incident["task_key"]}
    if ranks:
        details["ranks"] = ",".join(sorted(ranks))
    return {
        "alert_id": incident["alert_id"], "rule": incident["rule"], "severity": incident["severity"],
        "timestamp": incident["raised_ms"], "project": incident["project"], "task_id": incident["task_id"],
        "summary": summary, "count": incident["count"], "first_seen": incident["first_seen"],
        "last_seen": incident["last_seen"], "event_ids": list(incident["event_ids"]), "details": details,
        "status": "firing" if resolved is None else "resolved", "resolved_at": resolved,
    }
