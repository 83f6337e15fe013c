"""A job incident's state as its record (``sluice.v1.Incident``) and its alert. Pure.

:func:`decide` names the root (the earliest root-role evidence, else the earliest launcher report
that stands for one, else unknown), counts the collateral, orders the timeline and writes the one-line
summary; :func:`to_alert` makes the alert whose first line is that summary. The state is the one
:mod:`streams.watch.firstfail` keeps per task.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from streams.watch.incident_rules import COLLATERAL, REPORT, ROLES, ROOT
from streams.watch.settings import WatchSettings

MAX_EVIDENCE = 200
RULE = "job_failure"  # the alert's rule


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def _duration(ms: int) -> str:
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    s = ms // 1000
    if s < 60:
        return f"{sign}{ms / 1000:.1f}s"
    return f"{sign}{s // 3600}h{s // 60 % 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{sign}{s // 60}m{s % 60:02d}s"


def label(ev: dict[str, Any]) -> str:
    """How the timeline names where an error came from: ``node-1:3``, ``node-1:VllmWorkerProcess
    pid=350``, ``rank 3``, ``node-1``."""
    where = ev["rank"] if ev["rank"] is not None else ev["proc"]
    if ev["host"] and where is not None:
        return f"{ev['host']}:{where}"
    if where is not None:
        return f"rank {where}" if ev["rank"] is not None else str(where)
    return ev["host"] or "?"


def signature(state: dict[str, Any]) -> str:
    root = state["root"] or state["report"]
    if root is None:
        return "unknown"
    kind = root["rep"] if root["role"] == REPORT else root["kind"]
    return f"{kind}|{root['type'] or root['sig'] or ''}"


def _collateral(state: dict[str, Any], root_rank: str | None) -> tuple[dict[str, int], int]:
    """Ranks per collateral (and report) kind, and how many ranks besides the root's had collateral."""
    kinds: dict[str, int] = {}
    ranks = 0
    for name, entry in state["ranks"].items():
        extra = [k for k in entry["kinds"] if ROLES.get(k, ROOT) != ROOT]
        for k in extra:
            kinds[k] = kinds.get(k, 0) + 1
        if extra and name != root_rank and any(ROLES.get(k) == COLLATERAL for k in extra):
            ranks += 1
    return dict(sorted(kinds.items())), ranks


def _describe_root(root: dict[str, Any]) -> str:
    via = root["role"] == REPORT
    kind = root["rep"] if via else root["kind"]
    what = kind
    if kind == "killed" and root["sig"]:
        what = f"killed by {root['sig']}"
    elif root["type"] and root["type"] not in (kind,):
        what = f"{kind} ({root['type']})"
    where = label(root)
    text = f"{what} on {where}"
    if via:
        text += " (as its launcher reported)"
    if root["head"] and not via:
        text += f": {root['head']}"
    return text


def decide(state: dict[str, Any], conf: WatchSettings) -> dict[str, Any]:
    """The incident record (``sluice.v1.Incident``) of the state as it stands."""
    root = state["root"] or state["report"]
    root_rank = label(root) if root else None
    coll_kinds, coll_ranks = _collateral(state, root_rank)
    first = state["coll"]
    timeline = sorted((e["first"] for e in state["ranks"].values()), key=lambda e: (e["ts"], e["id"]))
    ranks_n = len(state["ranks"]) + state["more_ranks"]
    if root is not None:
        kind = root["rep"] if root["role"] == REPORT else root["kind"]
        headline = f"{state['task_id'] or state['task_key']} failed: {_describe_root(root)}"
    else:
        kind = None
        seen = sorted(coll_kinds.items(), key=lambda kv: -kv[1])
        what = ", ".join(f"{k} on {n} rank(s)" for k, n in seen) or "errors"
        since = first["ts"] if first else state["opened_ms"]
        headline = (f"{state['task_id'] or state['task_key']} failed, root cause unknown: {what} since "
                    f"{_iso(since)}; no rank reported an error of its own")
        if state["blocked_ms"] is not None:
            headline += f" (the first timed-out collective began at {_iso(state['blocked_ms'])})"
    evidence = ([root["id"]] if root else []) + [e["id"] for e in timeline if not root or e["id"] != root["id"]]
    return {
        "incident_id": state["id"], "alert_id": state["alert_id"], "project": state["project"],
        "task_id": state["task_id"], "task_key": state["task_key"],
        "opened": state["opened_ms"], "last_error": state["last_ms"], "decided": state["closed_ms"] or state["last_ms"],
        "decided_wall": state["closed_seen_ms"], "last_error_seen": state["seen_ms"], "summary": headline,
        "root_known": root is not None,
        "root_class": kind, "root_role": root["role"] if root else None,
        "root_error_class": root["cls"] if root else None, "root_error_type": root["type"] if root else None,
        "root_signal": root["sig"] if root else None, "root_message": root["head"] if root else None,
        "root_event_id": root["id"] if root else None, "root_time": root["ts"] if root else None,
        "first_rank": root["rank"] if root else None, "first_node": root["host"] if root else None,
        "first_process": root["proc"] if root else None,
        "first_collateral_time": first["ts"] if first else None,
        "time_to_first_collateral_ms": first["ts"] - root["ts"] if first and root else None,
        "blocked_since": state["blocked_ms"], "ranks": ranks_n, "collateral_ranks": coll_ranks,
        "collateral_kinds": coll_kinds,
        "timeline": [{"rank_label": label(e), "host": e["host"], "rank": e["rank"], "time": e["ts"],
                      "kind": e["kind"], "role": e["role"], "event_id": e["id"], "headline": e["head"]}
                     for e in timeline],
        "evidence": evidence[:MAX_EVIDENCE], "failures": state["failures"],
        "repeats": state["prev"]["id"] if state.get("prev") and state.get("recurrence") else None,
        "clock_corrected": any(e["first"].get("offset") for e in state["ranks"].values()),
        "severity": _severity(state, root, conf),
    }


def died_visibly(state: dict[str, Any]) -> bool:
    """Did the job visibly die: a launcher report, or collateral on a rank other than the root's?"""
    root = state["root"] or state["report"]
    return bool(_collateral(state, label(root) if root else None)[1]) or any(
        ROLES.get(k) == REPORT for e in state["ranks"].values() for k in e["kinds"])


def _severity(state: dict[str, Any], root: dict[str, Any] | None, conf: WatchSettings) -> str:
    """Critical when the job visibly died (collateral on other ranks, a launcher report) or its cause is
    critical on its own; else the severity of the root's error class (a lone exception may be survived)."""
    if died_visibly(state):
        return "critical"
    if root is None:
        return "warning"
    kind = root["rep"] if root["role"] == REPORT else root["kind"]
    cls = "signal" if kind == "killed" else (root["cls"] or kind)
    return conf.incident_classes.get(cls, conf.incident_classes.get(kind, "warning"))


def to_alert(record: dict[str, Any], count: int = 1) -> dict[str, Any]:
    """The incident's alert: its first line is the root cause."""
    lines = [f"[{record['severity']}] {record['summary']}"]
    if record["collateral_kinds"]:
        after = record["time_to_first_collateral_ms"]
        lines.append("collateral: " + ", ".join(f"{k} on {n} rank(s)" for k, n in record["collateral_kinds"].items())
                     + (f"; first {_duration(after)} after the root" if after is not None else ""))
    if count > 1:
        lines.append(f"the task failed this way {count} times")
    task = record["task_id"] or record["task_key"]
    lines.append(f"details: sluice incident {task}")
    details = {"incident_id": record["incident_id"], "task_key": record["task_key"],
               "root_class": record["root_class"] or "unknown", "ranks": str(record["ranks"]),
               "collateral_ranks": str(record["collateral_ranks"])}
    for key in ("first_rank", "first_node", "root_error_type", "root_signal", "root_event_id"):
        if record[key] is not None:
            details[key] = str(record[key])
    return {
        "alert_id": record["alert_id"], "rule": RULE, "severity": record["severity"],
        "timestamp": record["decided"], "project": record["project"], "task_id": record["task_id"],
        "summary": "\n".join(lines), "count": count, "first_seen": record["opened"],
        "last_seen": record["last_error"], "event_ids": record["evidence"][:50], "details": details,
    }
