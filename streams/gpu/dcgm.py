"""GPUs through the DCGM exporter's Prometheus endpoint, where one runs on the node.

The exposition text is parsed here (pure): one series per GPU, or per MIG instance
(``GPU_I_ID``), each DCGM field mapped by the table below. The exporter in Kubernetes mode labels
a GPU with the pod that holds it (``pod``/``namespace``/``container``; older versions
``pod_name``/``pod_namespace``/``container_name``): that is the attribution it hands us.

``DCGM_FI_DEV_XID_ERRORS`` is a gauge of the *last* XID seen, not a count: a new XID is a change of
that value to a non-zero one. The same XID twice in a row cannot be told apart from no new XID.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from streams.gpu.reading import GpuReadError, GpuReading, PodRef, throttle_names

# DCGM field -> GpuReading attribute (or a key handled below).
FIELDS = {
    "DCGM_FI_DEV_GPU_UTIL": "utilization_pct",
    "DCGM_FI_DEV_FB_USED": "memory_used_mb",
    "DCGM_FI_DEV_FB_TOTAL": "memory_total_mb",
    "DCGM_FI_DEV_FB_FREE": "_fb_free",
    "DCGM_FI_DEV_FB_RESERVED": "_fb_reserved",
    "DCGM_FI_DEV_POWER_USAGE": "power_w",
    "DCGM_FI_DEV_GPU_TEMP": "temperature_c",
    "DCGM_FI_DEV_SM_CLOCK": "sm_clock_mhz",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "ecc_corrected",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ecc_uncorrected",
    "DCGM_FI_DEV_XID_ERRORS": "_xid",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "_reasons",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "_reasons",
}
POD_LABELS = (("namespace", "pod", "container"), ("pod_namespace", "pod_name", "container_name"))

_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def parse_exposition(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """(name, labels, value) of every sample line; comments and lines that do not parse are skipped."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            continue
        name, body, value = match.groups()
        labels = {k: re.sub(r'\\[\\"n]', lambda m: _UNESCAPE[m.group()], v)
                  for k, v in _LABEL.findall(body or "")}
        try:
            number = float(value)
        except ValueError:
            continue
        yield name.upper(), labels, number


def readings_from_exposition(text: str) -> tuple[list[GpuReading], dict[str, float]]:
    """The GPUs in one scrape, and each device's last-XID gauge (keyed by device) for the reader's state."""
    devices: dict[tuple[int, str | None], dict[str, Any]] = {}
    for name, labels, value in parse_exposition(text):
        field = FIELDS.get(name)
        gpu = labels.get("gpu", "")
        # ASCII digits only, and an index a device can have: str.isdigit() also takes "²", which int() refuses,
        # and one such hostile sample must not cost the scrape's other GPUs
        if field is None or not (gpu.isascii() and gpu.isdigit() and len(gpu) <= 9):
            continue
        key = (int(labels["gpu"]), labels.get("GPU_I_ID") or None)
        device = devices.setdefault(key, {"uuid": labels.get("UUID") or labels.get("uuid"),
                                          "name": labels.get("modelName"), "pod": _pod(labels)})
        if math.isfinite(value):
            device[field] = value
    readings, xids = [], {}
    for (index, mig), d in sorted(devices.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        total = d.get("memory_total_mb")
        if total is None and "_fb_free" in d and "memory_used_mb" in d:
            total = d["memory_used_mb"] + d["_fb_free"] + d.get("_fb_reserved", 0.0)
        reading = GpuReading(
            index=index, uuid=d["uuid"], name=d["name"], mig_instance=mig,
            utilization_pct=d.get("utilization_pct"), memory_used_mb=d.get("memory_used_mb"), memory_total_mb=total,
            power_w=d.get("power_w"), temperature_c=d.get("temperature_c"), sm_clock_mhz=d.get("sm_clock_mhz"),
            ecc_corrected=d.get("ecc_corrected"), ecc_uncorrected=d.get("ecc_uncorrected"),
            throttle_reasons=throttle_names(int(d["_reasons"])) if "_reasons" in d else (), pod=d["pod"])
        readings.append(reading)
        if "_xid" in d:
            xids[reading.device_key] = d["_xid"]
    return readings, xids


def _pod(labels: dict[str, str]) -> PodRef | None:
    for ns_key, pod_key, container_key in POD_LABELS:
        if labels.get(pod_key):
            return PodRef(labels.get(ns_key) or None, labels[pod_key], labels.get(container_key) or None)
    return None


def new_xids(previous: dict[str, float], current: dict[str, float]) -> dict[str, tuple[int, ...]]:
    """Devices whose last-XID gauge changed to a non-zero value since the previous scrape."""
    return {key: (int(value),) for key, value in current.items()
            if value and previous.get(key, 0.0) != value}


class DcgmReader:
    """Scrapes ``url`` (the exporter's /metrics) once per read."""

    name = "dcgm"

    def __init__(self, url: str, timeout_s: float = 2.0, client: Any | None = None) -> None:
        import httpx

        self.url = url
        self.client = client or httpx.Client(timeout=timeout_s)
        self._last_xid: dict[str, float] | None = None

    def read(self) -> list[GpuReading]:
        import httpx

        try:
            response = self.client.get(self.url)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise GpuReadError(f"DCGM exporter {self.url}: {type(exc).__name__}: {exc}; the sample is skipped "
                               "(is the exporter running on this node?)") from exc
        readings, gauges = readings_from_exposition(response.text)
        # The first scrape only learns the gauges: an XID from before the shipper started is not news.
        fresh = new_xids(self._last_xid, gauges) if self._last_xid is not None else {}
        self._last_xid = gauges
        return [_with_xids(r, fresh.get(r.device_key, ())) for r in readings]

    def close(self) -> None:
        self.client.close()


def _with_xids(reading: GpuReading, xids: tuple[int, ...]) -> GpuReading:
    return replace(reading, xids=xids) if xids else reading
