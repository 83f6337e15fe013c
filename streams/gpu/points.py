"""A GPU reading -> a ``sluice.v1.MetricPoint`` for ``logs.metrics`` (pure).

The point's ``metrics`` map holds the figures (:data:`~streams.gpu.reading.METRIC_FIELDS`), its
``gpu`` record the device, its processes, throttle reasons and XIDs, and its task fields the
attribution's labels. ``event_id`` is derived from the node, the device and the sample time, so a
sample sent twice is one document downstream. ``raw`` names the reader (``gpu/nvml``), the device
index and the sample time: a sample has no raw Kafka record behind it.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from streams.gpu.attribution import Attribution
from streams.gpu.reading import METRIC_FIELDS, GpuReading

DEFAULT_PROJECT = "default"


def sample_event_id(host: str, reading: GpuReading, ts_ms: int) -> str:
    device = reading.uuid or reading.device_key
    digest = hashlib.blake2b(f"{host}\x00{device}\x00{reading.mig_instance or ''}".encode(), digest_size=8)
    return f"gpu-{digest.hexdigest()}-{ts_ms}"


def sample_key(host: str, reading: GpuReading) -> bytes:
    """The Kafka key: one device's samples stay in one partition, in order."""
    return f"{host}/gpu{reading.device_key}".encode()


def _rank(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    text = str(value) if value is not None else ""
    return int(text) if text.lstrip("-").isdigit() and -(2 ** 31) <= int(text) < 2 ** 31 else None


def metric_point(reading: GpuReading, who: Attribution, host: str, node_labels: dict[str, str], ts_ms: int,
                 reader: str) -> dict[str, Any]:
    labels = {**node_labels, **who.labels}
    metrics = {name: float(value) for name, attr in METRIC_FIELDS
               if (value := getattr(reading, attr)) is not None and math.isfinite(value)}
    src = who.source
    return {
        "event_id": sample_event_id(host, reading, ts_ms),
        "timestamp": ts_ms,
        "project": labels.get("project") or DEFAULT_PROJECT,
        "task_id": labels.get("task_id") if who.how else None,
        "task_type": labels.get("task_type"),
        "model_name": labels.get("model_name"),
        "phase": None,
        "step": None,
        "max_steps": None,
        "epoch": None,
        "metrics": metrics,
        "source": {
            "host": host, "namespace": src.get("namespace"), "pod": src.get("pod"), "container": src.get("container"),
            "file": None, "stream": None, "node_role": src.get("node_role") or labels.get("node_role"),
            "rank": _rank(src.get("rank")),
        },
        "labels": {k: v for k, v in labels.items() if isinstance(v, str)},
        "raw": {"topic": f"gpu/{reader}", "partition": reading.index, "first_offset": ts_ms, "last_offset": ts_ms,
                "first_file_offset": None, "last_file_offset": None},
        "gpu": {
            "index": reading.index, "uuid": reading.uuid, "name": reading.name,
            "mig_instance": reading.mig_instance, "reader": reader, "pids": list(reading.pids),
            "throttle_reasons": list(reading.throttle_reasons), "xids": list(reading.xids),
            "attribution": who.how,
            "task_log_ms": None if who.how is None or who.last_log_s is None else int(who.last_log_s * 1000),
        },
    }
