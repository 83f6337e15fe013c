"""What the rules need from a LogEvent or a MetricPoint: a small, JSON-able ``Observation``.

The router turns every record of the source topics into one and re-keys it by task, so that all
of a task's records (every rank, events and metrics alike) meet in one partition and one table
shard. Keeping it small keeps the by-task topic cheap: a 100-line traceback becomes one headline.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

from streams.watch.incident_rules import failure_sign

HEADLINE_CHARS = 200
# Where an agent puts the node's clock offset (milliseconds, node minus true time, as `chronyc
# tracking` reports "fast of NTP time"): a label (`sluice ship --label`, a Kubernetes annotation, an
# agent's record field), else a key of the line's own record.
CLOCK_OFFSET_KEYS = ("sluice.io/clock-offset-ms", "clock_offset_ms")
MAX_CLOCK_OFFSET_MS = 24 * 3600 * 1000
UTILISATION_KEYS = ("gpu_utilization_pct", "gpu_util_pct", "gpu_util")


@dataclass(frozen=True, slots=True)
class Observation:
    kind: str  # "event" | "metric" (both from the task's log lines) | "gpu" (a GPU sample from `sluice ship`)
    ts_ms: int  # the record's own time: every rule runs on event time, never the wall clock
    project: str
    task_id: str | None
    event_id: str
    host: str | None = None  # host, else pod
    rank: int | None = None
    origin: str | None = None  # host, pod or file: names a task that has no task_id label
    step: int | None = None
    max_steps: int | None = None
    phase: str | None = None
    loss: float | None = None
    gpu_util_pct: float | None = None
    error_class: str | None = None
    error_type: str | None = None
    signal: str | None = None
    headline: str | None = None
    # The job-failure view (streams.watch.incident_rules): the kind of an error event and what its
    # message says about the rank; the node's clock offset; when the router saw the record. An untimed
    # failure (a bare traceback) needs no time of its own here: the assemble core gave it its rank's.
    fail_kind: str | None = None
    fail_rank: int | None = None
    fail_host: str | None = None
    fail_proc: str | None = None
    fail_signal: str | None = None
    waited_ms: int | None = None
    clock_offset_ms: int | None = None
    seen_ms: int | None = None  # wall clock, stamped by the router: the incident's quiet period in real time
    gpu: str | None = None  # the device of a GPU sample: its index, "<index>/<MIG instance>" for an instance
    xids: tuple[int, ...] = ()
    ecc_uncorrected: float | None = None
    task_log_ms: int | None = None  # a GPU sample's word for when its task last logged (the node's view)

    @property
    def task_key(self) -> str:
        """The unit of alerting: the task, else (no task label) the host or file that logged it."""
        return f"{self.project}/{self.task_id}" if self.task_id else f"{self.project}/source:{self.origin or '?'}"

    @property
    def true_ms(self) -> int:
        """Event time corrected for the node's clock offset (the node's clock minus true time)."""
        return self.ts_ms - (self.clock_offset_ms or 0)

    @property
    def rank_key(self) -> str:
        """One GPU stream within a task: utilisation is averaged per GPU (a sample's device) or per rank
        (a figure the job logged), never across a job."""
        if self.gpu is not None:
            return f"{self.task_key}|{self.host or ''}|gpu{self.gpu}"
        return f"{self.task_key}|{self.host or ''}|{'' if self.rank is None else self.rank}"

    @property
    def from_log(self) -> bool:
        """A record of the task's own output: it shows the task is still running."""
        return self.kind in ("event", "metric")

    def to_json(self) -> bytes:
        # allow_nan: a NaN loss is exactly what the loss rule looks for.
        return json.dumps(asdict(self), allow_nan=True, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Observation:
        # A key this version does not know (written by a router of another version, mid-upgrade) is
        # dropped: one stale field must not stop the watch agent.
        doc = json.loads(data)
        doc["xids"] = tuple(doc.get("xids") or ())
        return cls(**{k: v for k, v in doc.items() if k in _FIELD_NAMES})


_FIELD_NAMES = frozenset(f.name for f in fields(Observation))


def _headline(event: dict[str, Any]) -> str:
    """The line that names the error (a traceback's ``Type: message`` line), else the first line."""
    lines = [line.strip() for line in (event.get("message") or "").splitlines() if line.strip()]
    error_type = event.get("error_type")
    if error_type:
        short = error_type.rsplit(".", 1)[-1]
        named = next((line for line in reversed(lines) if short in line), None)
        return (named or error_type)[:HEADLINE_CHARS]
    return lines[0][:HEADLINE_CHARS] if lines else ""


# Times a date holds (years 1 to 9999), a day in from either end so that the clock offset's correction
# stays inside: the contract lets any long through, and the rules print the times they see.
FIRST_MS = -62_135_596_800_000 + MAX_CLOCK_OFFSET_MS
LAST_MS = 253_402_300_799_999 - MAX_CLOCK_OFFSET_MS


def to_ms(value: Any) -> int:
    """A record's time in ms, held to what a date holds. Avro ``timestamp-millis`` decodes to an aware
    datetime; dicts from the pipeline carry ints."""
    ms = round(value.timestamp() * 1000) if isinstance(value, datetime) else int(value)
    return min(max(ms, FIRST_MS), LAST_MS)


def _finite_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def clock_offset_ms(record: dict[str, Any]) -> int | None:
    """The node's clock offset in milliseconds (positive: the node's clock is ahead), from the first of
    :data:`CLOCK_OFFSET_KEYS` among the record's labels, then its attributes; None when absent or not a number."""
    for where in ("labels", "attributes"):
        values = record.get(where) or {}
        for key in CLOCK_OFFSET_KEYS:
            text = values.get(key)
            if text is not None:
                try:
                    value = float(text)
                except (TypeError, ValueError):
                    return None
                return round(value) if math.isfinite(value) and abs(value) < MAX_CLOCK_OFFSET_MS else None
    return None


def from_log_event(event: dict[str, Any]) -> Observation:
    source = event.get("source") or {}
    host = source.get("host") or source.get("pod")
    sign = failure_sign(event)
    return Observation(
        kind="event", ts_ms=to_ms(event["timestamp"]), project=event["project"], task_id=event.get("task_id"),
        event_id=event["event_id"], host=host, rank=source.get("rank"), origin=host or source.get("file"),
        step=event.get("step"),
        max_steps=event.get("max_steps"), phase=event.get("phase"), loss=_finite_or_none(event.get("loss")),
        gpu_util_pct=_finite_or_none(event.get("gpu_utilization_pct")), error_class=event.get("error_class"),
        error_type=event.get("error_type"), signal=event.get("signal"),
        headline=(sign.line if sign and sign.line else _headline(event)) if event.get("error_class") or sign else None,
        fail_kind=sign.kind if sign else None, fail_rank=sign.rank if sign else None,
        fail_host=sign.host if sign else None, fail_proc=sign.proc if sign else None,
        fail_signal=sign.signal if sign else None, waited_ms=sign.waited_ms if sign else None,
        clock_offset_ms=clock_offset_ms(event),
    )


def device_key(gpu: dict[str, Any]) -> str:
    mig = gpu.get("mig_instance")
    return f"{gpu['index']}" if mig is None else f"{gpu['index']}/{mig}"


def from_metric_point(point: dict[str, Any]) -> Observation:
    source = point.get("source") or {}
    metrics = point.get("metrics") or {}
    gpu = point.get("gpu")
    util = next((metrics[k] for k in UTILISATION_KEYS if k in metrics), None)
    return Observation(
        kind="gpu" if gpu else "metric", ts_ms=to_ms(point["timestamp"]), project=point["project"],
        task_id=point.get("task_id"), event_id=point["event_id"], host=source.get("host") or source.get("pod"),
        rank=source.get("rank"), origin=source.get("host") or source.get("pod") or source.get("file"),
        step=point.get("step"), max_steps=point.get("max_steps"),
        phase=point.get("phase"), loss=_finite_or_none(metrics.get("loss")), gpu_util_pct=_finite_or_none(util),
        clock_offset_ms=clock_offset_ms(point),
        gpu=device_key(gpu) if gpu else None, xids=tuple(gpu.get("xids") or ()) if gpu else (),
        ecc_uncorrected=_finite_or_none(metrics.get("gpu_ecc_uncorrected")) if gpu else None,
        task_log_ms=to_ms(gpu["task_log_ms"]) if gpu and gpu.get("task_log_ms") is not None else None,
    )


def from_record(value: dict[str, Any]) -> Observation:
    """A decoded LogEvent or MetricPoint (metric points are the ones without a ``message``)."""
    return from_log_event(value) if "message" in value else from_metric_point(value)


def is_bad_loss(loss: float | None) -> bool:
    return loss is not None and not math.isfinite(loss)
