"""GPUs through NVML: the ``pynvml`` module of ``nvidia-ml-py`` (the optional ``gpu`` extra).

The reader takes the module as an argument and calls only its public functions, so tests hand it a
fake with the same names that replays recorded ``nvidia-smi`` output (nvidia-smi is an NVML client:
what it prints is what these calls return). Every call that can fail on one device is made alone:
a device without ECC, or a driver without the newer clock-event call, loses that figure only.

XID errors arrive as NVML events (``nvmlEventTypeXidCriticalError``): the reader registers every
device once and drains the event set without waiting on each read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from streams.gpu.reading import GpuReadError, GpuReading, throttle_names

log = logging.getLogger(__name__)

MIB = 1024 * 1024
MAX_EVENTS_PER_READ = 256  # an XID storm is reported, not drained forever


class NvmlReader:
    name = "nvml"

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        try:
            nvml.nvmlInit()
            count = nvml.nvmlDeviceGetCount()
            self.handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except nvml.NVMLError as exc:
            raise GpuReadError(f"NVML: {exc}; no GPU is sampled (set SLUICE_SHIP__GPU__ENABLED=off on nodes "
                               "without GPUs, or point SLUICE_SHIP__GPU__DCGM_URL at a DCGM exporter)") from exc
        self.identity = [(self._call(nvml.nvmlDeviceGetUUID, h), self._call(nvml.nvmlDeviceGetName, h))
                         for h in self.handles]
        self._reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None)
        self.events = self._register_xids()

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """One NVML call; None when the device does not support it or it failed."""
        try:
            return fn(*args)
        except self.nvml.NVMLError:
            return None

    def _register_xids(self) -> Any:
        nvml = self.nvml
        try:
            events = nvml.nvmlEventSetCreate()
        except nvml.NVMLError as exc:
            log.info("NVML events unavailable (%s): XID errors are not reported", exc)
            return None
        for index, handle in enumerate(self.handles):
            try:
                nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, events)
            except nvml.NVMLError as exc:
                log.info("GPU %d: XID events not supported (%s)", index, exc)
        return events

    def _drain_xids(self) -> dict[int, list[int]]:
        nvml = self.nvml
        found: dict[int, list[int]] = {}
        if self.events is None:
            return found
        for _ in range(MAX_EVENTS_PER_READ):
            try:
                data = nvml.nvmlEventSetWait_v2(self.events, 0)
            except nvml.NVMLError_Timeout:
                break
            except nvml.NVMLError as exc:
                log.warning("NVML event wait failed: %s", exc)
                break
            if data.eventType & nvml.nvmlEventTypeXidCriticalError:
                index = self._call(nvml.nvmlDeviceGetIndex, data.device)
                found.setdefault(-1 if index is None else int(index), []).append(int(data.eventData))
        return found

    def read(self) -> list[GpuReading]:
        xids = self._drain_xids()
        unplaced = xids.pop(-1, [])
        readings = [self._read_one(i, h, tuple(xids.get(i, ()))) for i, h in enumerate(self.handles)]
        if unplaced:
            log.warning("XID %s reported for a device NVML could not name", unplaced)
        return readings

    def _read_one(self, index: int, handle: Any, xids: tuple[int, ...]) -> GpuReading:
        nvml, call = self.nvml, self._call
        util = call(nvml.nvmlDeviceGetUtilizationRates, handle)
        memory = call(nvml.nvmlDeviceGetMemoryInfo, handle)
        power_mw = call(nvml.nvmlDeviceGetPowerUsage, handle)
        processes = call(nvml.nvmlDeviceGetComputeRunningProcesses, handle) or []
        uuid, name = self.identity[index]
        return GpuReading(
            index=index, uuid=_text(uuid), name=_text(name),
            utilization_pct=None if util is None else float(util.gpu),
            memory_used_mb=None if memory is None else memory.used / MIB,
            memory_total_mb=None if memory is None else memory.total / MIB,
            power_w=None if power_mw is None else power_mw / 1000.0,
            temperature_c=_float(call(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)),
            sm_clock_mhz=_float(call(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)),
            ecc_corrected=_float(call(nvml.nvmlDeviceGetTotalEccErrors, handle,
                                      nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC)),
            ecc_uncorrected=_float(call(nvml.nvmlDeviceGetTotalEccErrors, handle,
                                        nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)),
            throttle_reasons=throttle_names(call(self._reasons, handle) if self._reasons else None),
            xids=xids,
            pids=tuple(sorted({int(p.pid) for p in processes})),
        )

    def close(self) -> None:
        nvml = self.nvml
        if self.events is not None:
            self._call(nvml.nvmlEventSetFree, self.events)
        self._call(nvml.nvmlShutdown)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def open_nvml() -> NvmlReader:
    """The reader over the real library; :class:`GpuReadError` when it is not installed or finds no GPU."""
    try:
        import pynvml
    except ImportError as exc:
        raise GpuReadError("nvidia-ml-py is not installed (pip install 'sluice[gpu]'); no GPU is sampled") from exc
    reader = NvmlReader(pynvml)
    if not reader.handles:
        reader.close()
        raise GpuReadError("NVML found no GPU on this node")
    return reader
