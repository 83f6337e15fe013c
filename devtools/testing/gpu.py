"""Recorded GPUs for tests on machines without one (tests/fixtures/gpu/, sources in its README).

:func:`parse_smi_query` reads ``nvidia-smi -q`` text; :class:`RecordedNvml` is a stand-in for the
``pynvml`` module (same function names, constants and error classes, checked against the real
binding by the tests) whose devices replay those recordings. What is recorded and what a test
arranges is kept apart:

- recorded: every figure of a device in a state (``idle``, ``load``): name, UUID, memory, power,
  temperature, clocks, ECC counters, clock event reasons, processes (``nvidia-smi -q``), and the
  per-second variation within the state (``nvidia-smi dmon`` rows, replayed in turn);
- arranged by the test: which state each device is in at each sample (:meth:`RecordedNvml.set_state`),
  how many copies of the recorded device the node has and their indices/UUIDs, XID events
  (:meth:`inject_xid`, codes taken from recorded kernel lines by :func:`recorded_xids`) and ECC
  counts added to match them (:meth:`add_ecc`).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "gpu"

# `nvidia-smi -q` "Clocks Event Reasons" (older drivers: "Clocks Throttle Reasons") -> NVML bit.
REASON_BITS = {
    "Idle": 0x1, "Applications Clocks Setting": 0x2, "SW Power Cap": 0x4, "HW Slowdown": 0x8,
    "Sync Boost": 0x10, "SW Thermal Slowdown": 0x20, "HW Thermal Slowdown": 0x40,
    "HW Power Brake Slowdown": 0x80, "Display Clock Setting": 0x100,
}


def parse_smi_query(text: str) -> list[dict[str, Any]]:
    """Each GPU block of ``nvidia-smi -q`` as nested dicts (sections by indentation, values as text).
    Repeated entries under ``Processes`` become a list of dicts, one per ``Process ID``."""
    gpus: list[dict[str, Any]] = []
    stack: list[tuple[int, dict[str, Any]]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("="):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            if raw.startswith("GPU "):
                gpus.append({"_bus_id": raw[4:].strip()})
                stack = [(0, gpus[-1])]
            continue
        key, sep, value = raw.strip().partition(":")
        key, value = key.strip(), value.strip()
        if not stack:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if "_processes" in parent:  # inside Processes: entries repeat
            if key == "Process ID":
                parent["_processes"].append({})
            if parent["_processes"] or key == "Process ID":
                parent["_processes"][-1][key] = value
            continue
        if sep and value:
            parent[key] = value
        else:
            child: dict[str, Any] = {"_processes": []} if key == "Processes" else {}
            parent[key] = child
            stack.append((indent, child))
    return gpus


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    match = re.match(r"\s*(-?[\d.]+)", text)
    return float(match.group(1)) if match else None


@dataclass(frozen=True)
class DeviceState:
    """One recorded device in one state, in the units NVML returns."""

    uuid: str
    name: str
    bus_id: str
    util_gpu: int
    util_memory: int
    memory_total: int  # bytes
    memory_used: int
    power_mw: int
    temperature_c: int
    sm_clock_mhz: int
    ecc_corrected: int | None
    ecc_uncorrected: int | None
    reasons: int
    processes: tuple[tuple[int, int], ...]  # (pid, used bytes)

    @classmethod
    def from_smi(cls, gpu: dict[str, Any]) -> DeviceState:
        mib = 1024 * 1024
        fb, util, temp = gpu["FB Memory Usage"], gpu["Utilization"], gpu["Temperature"]
        power = gpu.get("GPU Power Readings") or gpu.get("Power Readings") or {}
        draw = power.get("Instantaneous Power Draw") or power.get("Power Draw") or power.get("Average Power Draw")
        volatile = (gpu.get("ECC Errors") or {}).get("Volatile") or {}
        corrected = [v for k, v in volatile.items() if "Correctable" in k and "Uncorrectable" not in k]
        uncorrected = [v for k, v in volatile.items() if "Uncorrectable" in k]
        reasons_block = gpu.get("Clocks Event Reasons") or gpu.get("Clocks Throttle Reasons") or {}
        reasons = 0
        for name, bit in REASON_BITS.items():
            if _find(reasons_block, name) == "Active":
                reasons |= bit
        listed = gpu.get("Processes")  # "None" when there is none
        processes = tuple((int(p["Process ID"]), int((_number(p.get("Used GPU Memory")) or 0) * mib))
                          for p in (listed.get("_processes", []) if isinstance(listed, dict) else []))
        return cls(
            uuid=gpu["GPU UUID"], name=gpu["Product Name"], bus_id=gpu["_bus_id"],
            util_gpu=int(_number(util["GPU"]) or 0), util_memory=int(_number(util["Memory"]) or 0),
            memory_total=int((_number(fb["Total"]) or 0) * mib), memory_used=int((_number(fb["Used"]) or 0) * mib),
            power_mw=int((_number(draw) or 0) * 1000), temperature_c=int(_number(temp["GPU Current Temp"]) or 0),
            sm_clock_mhz=int(_number(gpu["Clocks"]["SM"]) or 0),
            ecc_corrected=int(sum(_number(v) or 0 for v in corrected)) if corrected else None,
            ecc_uncorrected=int(sum(_number(v) or 0 for v in uncorrected)) if uncorrected else None,
            reasons=reasons, processes=processes,
        )


def _find(block: dict[str, Any], name: str) -> Any:
    """A key anywhere in a nested block (HW Thermal Slowdown sits under HW Slowdown)."""
    for key, value in block.items():
        if key == name and not isinstance(value, dict):
            return value
        if isinstance(value, dict):
            found = _find(value, name)
            if found is not None:
                return found
    return None


def parse_dmon(text: str) -> dict[str, list[dict[str, int]]]:
    """``nvidia-smi dmon`` rows per recorded state (the fixture's ``# state: <name>`` lines)."""
    states: dict[str, list[dict[str, int]]] = {}
    state, columns = None, []
    for line in text.splitlines():
        if line.startswith("# state:"):
            state = line.split(":", 1)[1].split()[0]
            states[state] = []
        elif line.startswith("# gpu"):
            columns = line[1:].split()
        elif line.strip() and not line.startswith("#") and state:
            states[state].append({c: int(v) for c, v in zip(columns, line.split(), strict=True) if v.isdigit()})
    return states


def recorded_states(model: str = "h100") -> tuple[dict[str, DeviceState], dict[str, list[dict[str, int]]]]:
    states = {}
    for state in ("idle", "load"):
        (gpu,) = parse_smi_query((FIXTURES / f"nvidia-smi-q.{model}.{state}.txt").read_text())
        states[state] = DeviceState.from_smi(gpu)
    return states, parse_dmon((FIXTURES / f"nvidia-smi-dmon.{model}.txt").read_text())


def recorded_xids() -> list[tuple[str, int, str]]:
    """(PCI bus, XID, message) of every ``NVRM: Xid`` line in the recorded kernel logs."""
    found = []
    for line in (FIXTURES / "xid.kernel.log").read_text().splitlines():
        match = re.search(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+), (.*)", line)
        if match:
            found.append((match.group(1), int(match.group(2)), match.group(3)))
    return found


class NVMLError(Exception):
    pass


class NVMLError_Timeout(NVMLError):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


@dataclass
class _Device:
    index: int
    uuid: str
    state: str
    reads: int = 0
    ecc: dict[str, int] = field(default_factory=lambda: {"corrected": 0, "uncorrected": 0})
    extra_pids: tuple[tuple[int, int], ...] | None = None


def _expect(valid: bool) -> None:
    """Only the arguments the recordings answer for; others are what NVML calls an invalid argument."""
    if not valid:
        raise NVMLError("Invalid Argument")


class RecordedNvml:
    """A stand-in for the ``pynvml`` module: ``n`` copies of a recorded device, each in a state the test
    sets. Only the calls :class:`~streams.gpu.nvml.NvmlReader` makes are here, under pynvml's names."""

    NVMLError = NVMLError
    NVMLError_Timeout = NVMLError_Timeout
    NVMLError_NotSupported = NVMLError_NotSupported
    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_SM = 1
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
    NVML_VOLATILE_ECC = 0
    nvmlEventTypeXidCriticalError = 0x8

    def __init__(self, count: int = 1, state: str = "load", model: str = "h100", ecc: bool = True) -> None:
        self.states, self.dmon = recorded_states(model)
        # Arranged: copies of the one recorded device, told apart by index and a UUID of the masked form.
        base = self.states[state].uuid
        self.devices = [_Device(i, base[:-3] + f"{i:03d}" if count > 1 else base, state) for i in range(count)]
        self.ecc_supported = ecc
        self.events: deque[SimpleNamespace] = deque()
        self.initialised = False
        self.calls = 0

    # -- arranging ---------------------------------------------------------------------------
    def set_state(self, index: int, state: str) -> None:
        self.devices[index].state = state

    def set_processes(self, index: int, processes: tuple[tuple[int, int], ...] | None) -> None:
        """Replace the recorded processes of a device (None: as recorded for its state)."""
        self.devices[index].extra_pids = processes

    def inject_xid(self, index: int, xid: int) -> None:
        self.events.append(SimpleNamespace(device=index, eventType=self.nvmlEventTypeXidCriticalError,
                                           eventData=xid, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF))

    def add_ecc(self, index: int, corrected: int = 0, uncorrected: int = 0) -> None:
        self.devices[index].ecc["corrected"] += corrected
        self.devices[index].ecc["uncorrected"] += uncorrected

    def _now(self, handle: int) -> DeviceState:
        self.calls += 1
        device = self.devices[handle]
        recorded = self.states[device.state]
        rows = self.dmon.get(device.state) or []
        if rows:  # the recorded per-second variation of this state, replayed in turn
            row = rows[max(device.reads - 1, 0) % len(rows)]
            recorded = replace(recorded, util_gpu=row["sm"], power_mw=row["pwr"] * 1000,
                               temperature_c=row["gtemp"], sm_clock_mhz=row["pclk"])
        return recorded

    # -- the pynvml calls ----------------------------------------------------------------------
    def nvmlInit(self) -> None:
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetIndex(self, handle: int) -> int:
        return handle

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return self.devices[handle].uuid

    def nvmlDeviceGetName(self, handle: int) -> str:
        return self.states[self.devices[handle].state].name

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        self.devices[handle].reads += 1  # a reader asks for utilisation first: one read, one recorded row
        state = self._now(handle)
        return SimpleNamespace(gpu=state.util_gpu, memory=state.util_memory)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        state = self._now(handle)
        return SimpleNamespace(total=state.memory_total, used=state.memory_used,
                               free=state.memory_total - state.memory_used)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return self._now(handle).power_mw

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        _expect(sensor == self.NVML_TEMPERATURE_GPU)
        return self._now(handle).temperature_c

    def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> int:
        _expect(clock == self.NVML_CLOCK_SM)
        return self._now(handle).sm_clock_mhz

    def nvmlDeviceGetTotalEccErrors(self, handle: int, kind: int, counter: int) -> int:
        state = self._now(handle)
        if not self.ecc_supported or state.ecc_corrected is None:
            raise NVMLError_NotSupported("Not Supported")
        _expect(counter == self.NVML_VOLATILE_ECC)
        if kind == self.NVML_MEMORY_ERROR_TYPE_CORRECTED:
            return state.ecc_corrected + self.devices[handle].ecc["corrected"]
        return (state.ecc_uncorrected or 0) + self.devices[handle].ecc["uncorrected"]

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:
        return self._now(handle).reasons

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[SimpleNamespace]:
        processes = self.devices[handle].extra_pids
        if processes is None:
            processes = self._now(handle).processes
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in processes]

    def nvmlEventSetCreate(self) -> str:
        return "event-set"

    def nvmlDeviceRegisterEvents(self, handle: int, kinds: int, event_set: str) -> None:
        _expect(bool(kinds & self.nvmlEventTypeXidCriticalError))

    def nvmlEventSetWait_v2(self, event_set: str, timeout_ms: int) -> SimpleNamespace:
        if not self.events:
            raise NVMLError_Timeout("Timeout")
        return self.events.popleft()

    def nvmlEventSetFree(self, event_set: str) -> None:
        pass


def fake_proc(root: Path, cgroups: dict[int, str]) -> Path:
    """A /proc with ``<pid>/cgroup`` files holding the recorded cgroup texts (tests/fixtures/gpu/cgroup/)."""
    for pid, name in cgroups.items():
        (root / str(pid)).mkdir(parents=True, exist_ok=True)
        (root / str(pid) / "cgroup").write_text((FIXTURES / "cgroup" / name).read_text())
    return root
