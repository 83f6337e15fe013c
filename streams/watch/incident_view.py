"""An incident for a person: the root cause event whole, a timeline by rank, the collateral. Pure.

``render(record, root_event)`` takes an ``Incident`` (as indexed) and the root ``LogEvent`` document
(None when the events index no longer has it) and returns the text ``sluice incident TASK`` prints.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

MAX_TIMELINE = 64  # ranks shown; the rest are counted
MAX_ROOT_LINES = 200


def _ms(value: Any) -> int | None:
    """Epoch milliseconds from what the index gives back (a number, or an ISO text)."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        return round(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1000)


def iso(value: Any) -> str:
    ms = _ms(value)
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def offset(ms: int | None, since: int | None) -> str:
    if ms is None or since is None:
        return ""
    d = ms - since
    sign, d = ("-" if d < 0 else "+"), abs(d)
    s = d / 1000
    if s < 60:
        return f"{sign}{s:.3f}s"
    return f"{sign}{int(s // 60)}m{s % 60:06.3f}s"


def _where(event: dict[str, Any]) -> str:
    source = event.get("source") or {}
    parts = [f"{k} {source[k]}" for k in ("host", "pod", "rank", "file") if source.get(k) not in (None, "")]
    return ", ".join(parts) or "?"


def render(record: dict[str, Any], root_event: dict[str, Any] | None) -> str:
    out = [f"incident {record['incident_id']}  task {record.get('task_id') or record['task_key']}  "
           f"[{record['severity']}]", record["summary"], ""]
    root_ms = _ms(record.get("root_time"))
    if record.get("root_known"):
        out.append(f"Root cause: {record['root_class']}"
                   + (f" ({record['root_error_type']})" if record.get("root_error_type") else "")
                   + (f", {record['root_signal']}" if record.get("root_signal") else "")
                   + f" at {iso(root_ms)}"
                   + ("  (from the launcher's report)" if record.get("root_role") == "report" else ""))
        if root_event is not None:
            out.append(f"event {root_event['event_id']} ({_where(root_event)}, {iso(root_event.get('timestamp'))}):")
            lines = str(root_event.get("message", "")).splitlines()
            out += [f"  {line}" for line in lines[:MAX_ROOT_LINES]]
            if len(lines) > MAX_ROOT_LINES:
                out.append(f"  ... {len(lines) - MAX_ROOT_LINES} more lines")
        else:
            out.append(f"event {record.get('root_event_id')}: not in the events index (expired, or not indexed "
                       f"yet); its line: {record.get('root_message') or '-'}")
    else:
        out.append("Root cause: unknown (only collateral errors: no rank reported an error of its own)")
        if record.get("blocked_since") is not None:
            out.append(f"the first timed-out collective began at {iso(record['blocked_since'])}")
    out.append("")
    timeline = record.get("timeline") or []
    since = root_ms if root_ms is not None else _ms(record.get("opened"))
    out.append(f"Timeline: first error per rank ({len(timeline)} of {record['ranks']}), times from "
               + ("the root cause" if root_ms is not None else "the first error"))
    width = max([len(t["rank_label"]) for t in timeline[:MAX_TIMELINE]] + [4])
    for t in timeline[:MAX_TIMELINE]:
        head = (t.get("headline") or "").replace("\n", " ")
        out.append(f"  {offset(_ms(t['time']), since):>14}  {t['rank_label']:<{width}}  {t['role']:<10}  "
                   f"{t['kind']:<18}  {head[:100]}")
    if len(timeline) > MAX_TIMELINE:
        out.append(f"  ... {len(timeline) - MAX_TIMELINE} more ranks")
    out.append("")
    kinds = record.get("collateral_kinds") or {}
    if kinds:
        after = record.get("time_to_first_collateral_ms")
        out.append(f"Collateral: {record['collateral_ranks']} rank(s) besides the root's"
                   + (f", the first {offset(after, 0).lstrip('+')} after the root" if after is not None else ""))
        for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  {kind:<18} {n} rank(s)")
    else:
        out.append("Collateral: none")
    if record.get("failures", 1) > 1:
        out.append(f"The task failed this way {record['failures']} times within the cooldown.")
    return "\n".join(out)


def summary_line(record: dict[str, Any]) -> str:
    """One incident in a list: when, where, what."""
    where = record.get("first_node") or "?"
    if record.get("first_rank") is not None:
        where += f":{record['first_rank']}"
    elif record.get("first_process"):
        where += f":{record['first_process']}"
    return (f"{iso(record.get('opened'))}  {record['incident_id']}  {record.get('root_class') or 'unknown':<18} "
            f"{where:<28} {record['ranks']} rank(s)")
