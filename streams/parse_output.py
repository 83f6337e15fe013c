"""How `sluice parse` prints what the assemble stage makes of a file: JSON lines for a program, or
text, one block per event, for a person. Pure: a dict in, text out.

Every output says what it is (``kind``: ``event``, ``metric`` or ``dead_letter``); fields without a
value are left out rather than printed as ``null``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any


def kind_of(value: dict[str, Any]) -> str:
    if "kind" in value:
        return str(value["kind"])
    return "metric" if "metrics" in value and "message" not in value else "event"


def without_nulls(value: Any) -> Any:
    """The value with every None (and every mapping left empty by that) taken out, at any depth."""
    if isinstance(value, dict):
        out = {k: without_nulls(v) for k, v in value.items() if v is not None}
        return {k: v for k, v in out.items() if v != {}}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):  # a dead letter's original and key
        return value.decode("utf-8", "backslashreplace")
    return str(value)


def as_json(value: dict[str, Any]) -> str:
    return json.dumps({"kind": kind_of(value), **without_nulls(value)}, ensure_ascii=False, default=_json_default)


def _time(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return str(ms)
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_text(value: dict[str, Any]) -> str:
    """One block: a head line (time, level, what it is), then the event's text as it was written."""
    kind = kind_of(value)
    if kind == "dead_letter":
        return f"dead letter ({value.get('error_type')}): {value.get('error')}"
    when = _time(value.get("timestamp"))
    where = " ".join(f"{k}={value[k]}" for k in ("project", "task_id") if value.get(k))
    if kind == "metric":
        figures = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in sorted((value.get("metrics") or {}).items()))
        step = f" step={value['step']}" if value.get("step") is not None else ""
        return f"{when} metric{step} {figures}  {where}".rstrip()
    head = [when, value.get("level") or "-"]
    if value.get("error_class"):
        head.append(value["error_class"] + (f" ({value['error_type']})" if value.get("error_type") else ""))
    lines = value.get("line_count") or 1
    if lines > 1:
        head.append(f"{lines} lines" + (f", {value['multiline_kind']}" if value.get("multiline_kind") else ""))
    if value.get("truncated"):
        head.append("truncated")
    if where:
        head.append(where)
    body = "\n".join(f"    {line}" for line in str(value.get("message", "")).splitlines() or [""])
    return "  ".join(head) + "\n" + body
