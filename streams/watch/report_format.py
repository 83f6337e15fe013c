"""A daily report as a message: text, and the payload of each webhook style (pure).

- Slack incoming webhooks take ``{"text": ..., "blocks": [...]}``; a ``section`` block's mrkdwn text holds
  at most 3,000 characters, a message at most 50 blocks (Slack's Block Kit limits);
- a WeCom group robot takes ``{"msgtype": "markdown", "markdown": {"content": ...}}``, content at most
  4,096 bytes of UTF-8 (the robot's webhook documentation), so the text is cut to fit, with a link to
  the rest;
- ``json`` posts the report itself with its text rendering beside it, for any receiver.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

WECOM_MAX_BYTES = 4096
SLACK_SECTION_CHARS = 3000
SLACK_MAX_BLOCKS = 50
MAX_TASK_ROWS = 20  # the busiest tasks; the rest are in the JSON and the dashboard


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def _hhmm(ms: int | None) -> str:
    return "-" if not ms else datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%H:%M")


def headline(report: dict[str, Any]) -> str:
    return (f"Sluice daily report: {report['project']}, {report['day']} (UTC): {report['jobs_seen']} job(s), "
            f"{report['jobs_started']} started, {report['jobs_finished']} finished, {report['jobs_failed']} failed")


def sections(report: dict[str, Any]) -> list[str]:
    """The report as markdown sections (headline, jobs, GPUs, idle incidents, errors, links)."""
    out = [f"**{headline(report)}**"]
    failed = ", ".join(f"{c} {n}" for c, n in report["jobs_failed_by_class"].items()) or "none"
    out.append(f"Jobs failed by class: {failed}\nGPU-hours: {report['gpu_hours']:.1f}, mean GPU utilisation: "
               f"{_pct(report['mean_gpu_util_pct'])}, idle incidents: {len(report['idle_incidents'])}")
    tasks = sorted(report["tasks"], key=lambda t: (-t["gpu_hours"], t["task_id"]))[:MAX_TASK_ROWS]
    if tasks:
        links = (report.get("links") or {}).get("tasks", {})
        rows = []
        for t in tasks:
            name = f"[{t['task_id']}]({links[t['task_id']]})" if t["task_id"] in links else t["task_id"]
            status = t["status"] + (f" ({t['failed_class']})" if t["failed_class"] else "")
            rows.append(f"- {name}: {status}, {t['gpu_hours']:.2f} GPU-h, util {_pct(t['mean_gpu_util_pct'])}, "
                        f"{t['idle_incidents']} idle incident(s)")
        more = len(report["tasks"]) - len(tasks)
        out.append("Tasks:\n" + "\n".join(rows) + (f"\n- ... {more} more" if more > 0 else ""))
    if report["idle_incidents"]:
        rows = [f"- {i['task_id'] or '?'} on {i['gpus'] or '?'}: from {_hhmm(i['first_seen'])} "
                + (f"for {i['minutes']:g} min" if i["minutes"] is not None else "(still open)")
                for i in report["idle_incidents"][:MAX_TASK_ROWS]]
        out.append("GPU idle incidents:\n" + "\n".join(rows))
    if report["top_errors"]:
        out.append("Top errors:\n" + "\n".join(f"- {e['error']}: {e['count']}" for e in report["top_errors"]))
    dashboard = (report.get("links") or {}).get("dashboard")
    if dashboard:
        out.append(f"[Dashboard for the day]({dashboard})")
    return out


def text(report: dict[str, Any]) -> str:
    return "\n\n".join(sections(report))


def _fit_bytes(content: str, limit: int, tail: str) -> str:
    if len(content.encode()) <= limit:
        return content
    room = limit - len(tail.encode())
    cut = content.encode()[:room].decode(errors="ignore")
    return cut[: cut.rfind("\n")] + tail if "\n" in cut else cut + tail


def payload(report: dict[str, Any], style: str) -> dict[str, Any]:
    if style == "wecom":
        dashboard = (report.get("links") or {}).get("dashboard")
        tail = f"\n... (cut; [the whole day]({dashboard}))" if dashboard else "\n... (cut)"
        return {"msgtype": "markdown", "markdown": {"content": _fit_bytes(text(report), WECOM_MAX_BYTES, tail)}}
    if style == "slack":
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": _slack_markdown(part)[:SLACK_SECTION_CHARS]}}
                  for part in sections(report)][:SLACK_MAX_BLOCKS]
        return {"text": headline(report), "blocks": blocks}
    return {"report": report, "text": text(report)}


def _slack_markdown(part: str) -> str:
    """Slack's mrkdwn: *bold*, <url|label> links."""
    import re

    part = re.sub(r"\*\*(.+?)\*\*", r"*\1*", part)
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"<\2|\1>", part)


def email(report: dict[str, Any]) -> tuple[str, str]:
    """(subject, plain-text body)."""
    return headline(report), text(report).replace("**", "") + "\n"
