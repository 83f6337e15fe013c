"""One GPU at one moment, whichever reader saw it, and the protocol every reader follows (pure).

Readers report what the driver reports and nothing else: a figure the device does not support is
None, never a zero, so that an average over a day does not count a missing value as an idle GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from streams.errors import SluiceError

# NVML's clock event reasons (``nvmlClocksEventReason*``, formerly ``nvmlClocksThrottleReason*``):
# bit -> the name a sample carries. DCGM reports the same mask (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
THROTTLE_REASONS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)

# Metric name in a sample's ``metrics`` map -> the GpuReading attribute it comes from.
METRIC_FIELDS: tuple[tuple[str, str], ...] = (
    ("gpu_utilization_pct", "utilization_pct"),
    ("gpu_memory_mb", "memory_used_mb"),
    ("gpu_memory_total_mb", "memory_total_mb"),
    ("gpu_power_w", "power_w"),
    ("gpu_temperature_c", "temperature_c"),
    ("gpu_sm_clock_mhz", "sm_clock_mhz"),
    ("gpu_ecc_corrected", "ecc_corrected"),
    ("gpu_ecc_uncorrected", "ecc_uncorrected"),
)


def throttle_names(mask: int | None) -> tuple[str, ...]:
    if not mask:
        return ()
    return tuple(name for bit, name in THROTTLE_REASONS if mask & bit)


@dataclass(frozen=True, slots=True)
class PodRef:
    """The pod a reader itself attributes a GPU to (the DCGM exporter's Kubernetes labels)."""

    namespace: str | None
    pod: str
    container: str | None


@dataclass(frozen=True, slots=True)
class GpuReading:
    index: int
    uuid: str | None = None
    name: str | None = None
    mig_instance: str | None = None
    utilization_pct: float | None = None
    memory_used_mb: float | None = None
    memory_total_mb: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    ecc_corrected: float | None = None  # volatile: since the driver loaded
    ecc_uncorrected: float | None = None
    throttle_reasons: tuple[str, ...] = ()
    xids: tuple[int, ...] = ()  # XID errors since the previous read
    pids: tuple[int, ...] = ()  # host pids of the compute processes on the device
    pod: PodRef | None = None

    @property
    def device_key(self) -> str:
        """Names the device within its node: index, and the MIG instance when there is one."""
        return f"{self.index}" if self.mig_instance is None else f"{self.index}/{self.mig_instance}"


class GpuReadError(SluiceError):
    """The GPUs of a node could not be read (NVML failed, the DCGM exporter did not answer)."""


class GpuReader(Protocol):
    """Reads every GPU of the node. ``read`` raises :class:`GpuReadError` when nothing could be read."""

    name: str  # "nvml" or "dcgm": written into each sample

    def read(self) -> list[GpuReading]: ...

    def close(self) -> None: ...
