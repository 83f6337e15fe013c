"""Pure request builder: decoded events and metric points in, bulk action lines out. No I/O.

Index layout (daily indices, which every Elasticsearch distribution has):

- events: ``<index_prefix>-<task_type or "general">-YYYY.MM.DD``, ``index_prefix`` from the routing
  table, default ``<hot.events_index_prefix>-<project>`` (``sluice-logs-<project>``);
- metrics: ``<hot.metrics_index_prefix>-<project>-YYYY.MM.DD`` (``sluice-metrics-<project>-...``).

The ``sluice-`` prefixes keep clear of Elasticsearch's built-in ``logs-*-*`` and ``metrics-*-*`` data
stream templates, which Fleet and Elastic Agent use on a shared cluster.

The day is the event's own timestamp in UTC, so a replay lands in the same index. ``_id`` is the
deterministic ``event_id`` and the action is ``index`` (create-or-overwrite): replaying a range
overwrites the same documents instead of adding copies.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from streams.config import RoutingSettings
from streams.sinks.elasticsearch.settings import HotSinkSettings

GENERAL = "general"
_HOT_DEFAULTS = HotSinkSettings()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_UNSAFE = re.compile(r"[^a-z0-9_]+")
# Characters Elasticsearch refuses in index names, plus '-' which separates our name parts.
_PROJECT_UNSAFE = re.compile(r"[^a-z0-9_-]+")


def segment(value: str | None, default: str = GENERAL) -> str:
    """A task type as one index-name segment: lowercase ``[a-z0-9_]``, never containing ``-``.

    Keeping ``-`` out of the task type is what lets the retention job read the project prefix back
    from an index name (``sluice-logs-a-b-sft-...`` can only be project ``a-b``, task ``sft``).
    """
    if not value:
        return default
    cleaned = _UNSAFE.sub("_", value.lower()).strip("_")
    return cleaned[:64] or default


def project_segment(project: str) -> str:
    cleaned = _PROJECT_UNSAFE.sub("_", project.lower()).lstrip("-_")
    return cleaned[:64] or "default"


def epoch_ms(value: Any) -> int:
    """Avro ``timestamp-millis`` arrives as a UTC datetime from the deserializer, or as int ms."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return (value - _EPOCH) // _MS
    return int(value)


def day_of(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y.%m.%d")


def is_metric(value: Mapping[str, Any]) -> bool:
    """A ``sluice.v1.MetricPoint`` (has a ``metrics`` map and no message) rather than a LogEvent."""
    return isinstance(value.get("metrics"), Mapping) and "message" not in value


@dataclass(frozen=True)
class IndexNamer:
    """Turns an event into its index name, from the routing table and the hot sink's index prefixes."""

    routing: RoutingSettings
    events_base: str = _HOT_DEFAULTS.events_index_prefix
    metrics_base: str = _HOT_DEFAULTS.metrics_index_prefix

    @classmethod
    def of(cls, routing: RoutingSettings, hot: HotSinkSettings) -> IndexNamer:
        return cls(routing, hot.events_index_prefix, hot.metrics_index_prefix)

    def events_prefix(self, project: str) -> str:
        route = self.routing.projects.get(project)
        if route is not None and route.index_prefix:
            return route.index_prefix
        return f"{self.events_base}-{project_segment(project)}"

    def metrics_prefix(self, project: str) -> str:
        return f"{self.metrics_base}-{project_segment(project)}"

    def index_for(self, value: Mapping[str, Any], ts_ms: int) -> str:
        project = str(value.get("project") or self.routing.default_project)
        day = day_of(ts_ms)
        if is_metric(value):
            return f"{self.metrics_prefix(project)}-{day}"
        return f"{self.events_prefix(project)}-{segment(value.get('task_type'))}-{day}"


def _clean(value: Any, path: str, non_finite: list[str]) -> Any:
    """Drop nulls (Elasticsearch treats them as missing) and replace NaN/inf, which JSON cannot carry."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        non_finite.append(f"{path}={value}")
        return None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if v is None:
                continue
            cleaned = _clean(v, f"{path}.{k}" if path else k, non_finite)
            if cleaned is not None:
                out[k] = cleaned
        return out
    if isinstance(value, datetime):
        return epoch_ms(value)
    return value


def document(value: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The indexed document and its timestamp (ms).

    A loss of NaN is a real training event (divergence), so it must not cost the event: non-finite
    numbers become missing values and their names are kept, searchable, in ``non_finite``.
    """
    non_finite: list[str] = []
    doc = _clean(dict(value), "", non_finite)
    ts = epoch_ms(value["timestamp"])
    doc["timestamp"] = ts
    if "ingest_ts" in value and value["ingest_ts"] is not None:
        doc["ingest_ts"] = epoch_ms(value["ingest_ts"])
    if non_finite:
        doc["non_finite"] = non_finite
    return doc, ts


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@dataclass(frozen=True)
class Action:
    index: str
    doc_id: str
    lines: bytes  # the action line and the source line, each ending in "\n"


def encode(value: Mapping[str, Any], namer: IndexNamer) -> Action:
    """One ``index`` action (op_type index: a replay overwrites) as NDJSON bytes."""
    doc, ts = document(value)
    index = namer.index_for(value, ts)
    doc_id = str(value["event_id"])
    head = _dumps({"index": {"_index": index, "_id": doc_id}})
    return Action(index, doc_id, head + b"\n" + _dumps(doc) + b"\n")


def bulk_body(actions: list[Action]) -> bytes:
    return b"".join(a.lines for a in actions)
