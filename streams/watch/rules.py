"""The rules: each reads one observation and the task's state, updates the state, and may find
something wrong. Pure: time is the observation's own, state is plain dicts (table values).

A :class:`Finding` is one rule firing once; :mod:`streams.watch.incidents` folds findings into
incidents (cooldown, de-duplication) and those into alerts. A finding with ``clears`` set says the
condition is over (a GPU busy again): it resolves the open incident of its rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streams.watch.observation import Observation
from streams.watch.settings import WatchSettings
from streams.watch.windows import UtilSample, last_closed_start

# A killed rank reports twice: the launcher's "failed (exitcode: -9)" line and the ChildFailedError
# traceback that carries the same signal. Both are one incident: the signal.
SIGNAL_CARRIERS = frozenset(("python_exception", "signal"))


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    ts_ms: int  # when it was seen (event time)
    opened_ms: int  # when the incident began: names the incident (its alert_id)
    headline: str
    details: dict[str, str] = field(default_factory=dict)
    clears: bool = False


def incident_rule(obs: Observation, classes: dict[str, str]) -> Finding | None:
    """OOM, CUDA error, NCCL timeout, a killed rank...: an alert at once."""
    if obs.kind != "event" or not obs.error_class:
        return None
    rule = "signal" if obs.signal and obs.error_class in SIGNAL_CARRIERS else obs.error_class
    severity = classes.get(rule)
    if severity is None:
        return None
    details = {k: v for k, v in (("error_class", obs.error_class), ("error_type", obs.error_type),
                                 ("signal", obs.signal)) if v}
    return Finding(rule, severity, obs.ts_ms, obs.ts_ms, obs.headline or obs.error_class, details)


def loss_rule(obs: Observation, state: dict[str, Any], conf: WatchSettings) -> Finding | None:
    """NaN/inf loss at once; a spike beyond ``factor`` x the mean of the recent losses.

    The spike joins the history: a lasting shift of level becomes the new baseline instead of
    alerting forever.
    """
    if obs.loss is None or obs.phase == "eval":
        return None
    if not math.isfinite(obs.loss):
        return Finding("loss_nan", "critical", obs.ts_ms, obs.ts_ms, f"loss is {obs.loss} at step {obs.step}",
                       {"loss": str(obs.loss), "step": str(obs.step)})
    history: list[float] = state.setdefault("losses", [])
    found = None
    if len(history) >= conf.loss_min_history:
        baseline = sum(history) / len(history)
        if baseline > 0 and obs.loss > conf.loss_spike_factor * baseline:
            found = Finding("loss_spike", "warning", obs.ts_ms, obs.ts_ms,
                            f"loss {obs.loss:.4g} at step {obs.step} is {obs.loss / baseline:.1f}x "
                            f"the mean of the last {len(history)} ({baseline:.4g})",
                            {"loss": str(obs.loss), "baseline": f"{baseline:.6g}", "step": str(obs.step),
                             "factor": str(conf.loss_spike_factor)})
    history.append(obs.loss)
    del history[:-conf.loss_history]
    return found


def stall_rule(obs: Observation, state: dict[str, Any], conf: WatchSettings) -> Finding | None:
    """No step change for ``stall_after_s`` while the task still logs (any record of it counts).

    Any change of step is progress: a job restarted from a checkpoint goes back, then forward.
    A task that never reported a step, or reached ``max_steps``, cannot stall.
    """
    if obs.max_steps is not None:
        state["max_steps"] = obs.max_steps
    progress_ms = state.get("progress_ms")
    if obs.step is not None and obs.step != state.get("step"):
        if progress_ms is None or obs.ts_ms >= progress_ms:  # a late, older record is not progress
            state["step"], state["progress_ms"] = obs.step, obs.ts_ms
        return None
    if progress_ms is None or obs.ts_ms < progress_ms:
        return None
    max_steps = state.get("max_steps")
    if max_steps is not None and state["step"] >= max_steps:
        return None
    quiet_ms = obs.ts_ms - progress_ms
    if quiet_ms < conf.stall_after_s * 1000:
        return None
    return Finding("training_stalled", "warning", obs.ts_ms, progress_ms,
                   f"no step progress for {quiet_ms // 60000} min (stuck at step {state['step']}) "
                   "while the task still logs",
                   {"step": str(state["step"]), "stalled_for_s": str(quiet_ms // 1000)})


def _newly_closed_window(obs: Observation, state: dict[str, Any], conf: WatchSettings,
                         window_value: Callable[[int], UtilSample | None]) -> tuple[int, float, UtilSample] | None:
    """(start, average, value) of the newest window closed ``gpu_idle_grace_s`` ago, once per window, when it
    holds enough samples over enough of its length to judge; else None."""
    size_ms, step_ms = conf.gpu_idle_window_s * 1000, conf.gpu_idle_step_s * 1000
    start = last_closed_start(obs.ts_ms - conf.gpu_idle_grace_s * 1000, size_ms, step_ms)
    if start <= state.get("checked_ms", -(1 << 62)):
        return None
    state["checked_ms"] = start
    value = window_value(start)
    if not value or value["n"] < conf.gpu_idle_min_samples:
        return None
    if value["last_ms"] - value["first_ms"] < conf.gpu_idle_min_coverage * size_ms:
        return None  # too little of the window observed: a job starting or a gap in reporting
    return start, value["sum"] / value["n"], value


def idle_rule(obs: Observation, state: dict[str, Any], conf: WatchSettings,
              window_value: Callable[[int], UtilSample | None], last_line_ms: int | None = None) -> Finding | None:
    """The newest closed window of this GPU (or rank) averaged under ``gpu_idle_pct``.

    Checked once per window, when the first sample ``gpu_idle_grace_s`` past its end arrives. ``state`` is the
    GPU's (``checked_ms``: the last window checked; ``idle_since``: start of the idle stretch, which names the
    incident). ``window_value(start_ms)`` reads the windowed table. A GPU sample (``kind == "gpu"``) counts
    only while its task runs: its newest log record, at most ``gpu_idle_task_quiet_s`` before the window's end.
    That is ``last_line_ms`` as the watch has seen the task's records, or the sample's own ``task_log_ms``
    (when the task's files last grew on the node), whichever is later: a task's lines and its GPU samples
    reach this stage through different topics, in no set order. A window back at or above the threshold
    after an idle one clears the GPU.
    """
    if obs.gpu_util_pct is None:
        return None
    judged = _newly_closed_window(obs, state, conf, window_value)
    if judged is None:
        return None
    start, avg, value = judged
    end = start + conf.gpu_idle_window_s * 1000
    where = f"{obs.host or '?'} " + (f"GPU {obs.gpu}" if obs.gpu is not None else f"rank {obs.rank}")
    details = {"avg_pct": f"{avg:.2f}", "samples": str(value["n"]), "window_start": str(start),
               "window_end": str(end), "first_sample": str(value["first_ms"])}
    if avg >= conf.gpu_idle_pct:
        since = state.pop("idle_since", None)
        return None if since is None else Finding(
            "gpu_idle", "info", obs.ts_ms, since, f"GPU utilisation back to {avg:.1f}% on {where}",
            {**details, "cleared_ms": str(obs.ts_ms)}, clears=True)
    logged = max((t for t in (last_line_ms, obs.task_log_ms) if t is not None), default=None)
    running = obs.kind != "gpu" or (logged is not None and logged >= end - conf.gpu_idle_task_quiet_s * 1000)
    if not running:
        return None  # the task ended (or never logged): its GPUs are free, not idle
    since = state.setdefault("idle_since", start)
    return Finding("gpu_idle", "warning", obs.ts_ms, since,
                   f"GPU utilisation averaged {avg:.1f}% (< {conf.gpu_idle_pct:g}%) over "
                   f"{conf.gpu_idle_window_s // 60} min on {where}", details)


# Short names of the XID errors (NVIDIA's XID catalogue) for alert headlines.
XID_NAMES = {
    13: "graphics engine exception", 31: "GPU memory page fault", 43: "GPU stopped processing",
    45: "preemptive cleanup after earlier errors", 48: "double-bit ECC error", 61: "internal micro-controller warning",
    62: "internal micro-controller halt", 63: "ECC page retirement or row remap recorded",
    64: "ECC page retirement or row remap failed", 74: "NVLink error", 79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate", 94: "contained ECC error", 95: "uncontained ECC error",
    109: "context switch timeout", 119: "GSP RPC timeout", 120: "GSP error",
}
SEVERITY_ORDER = ("info", "warning", "critical")


def xid_rule(obs: Observation, conf: WatchSettings) -> Finding | None:
    """A GPU sample that carries XID errors: an alert at once, at the severity of its worst XID."""
    if obs.kind != "gpu" or not obs.xids:
        return None
    severities = [conf.xid_severity.get(x, "warning") for x in obs.xids]
    severity = max(severities, key=SEVERITY_ORDER.index)
    worst = obs.xids[severities.index(severity)]
    named = ", ".join(f"{x} ({XID_NAMES.get(x, 'see the XID catalogue')})" for x in dict.fromkeys(obs.xids))
    return Finding("gpu_xid", severity, obs.ts_ms, obs.ts_ms, f"XID {named} on {obs.host or '?'} GPU {obs.gpu}",
                   {"xids": ",".join(map(str, obs.xids)), "xid": str(worst), "gpu": str(obs.gpu)})


def ecc_rule(obs: Observation, state: dict[str, Any], conf: WatchSettings) -> Finding | None:
    """A GPU's uncorrected (volatile) ECC count went up since its previous sample. The first sample only
    sets the baseline: errors from before the watch saw the GPU are in its figures, not news."""
    if obs.kind != "gpu" or obs.ecc_uncorrected is None:
        return None
    before = state.get("ecc_uncorrected")
    state["ecc_uncorrected"] = obs.ecc_uncorrected
    if before is None or obs.ecc_uncorrected <= before:
        return None
    added = obs.ecc_uncorrected - before
    return Finding("gpu_ecc", conf.ecc_severity, obs.ts_ms, obs.ts_ms,
                   f"{added:g} uncorrected ECC error(s) on {obs.host or '?'} GPU {obs.gpu} "
                   f"({obs.ecc_uncorrected:g} since the driver loaded)",
                   {"ecc_uncorrected": f"{obs.ecc_uncorrected:g}", "added": f"{added:g}", "gpu": str(obs.gpu)})
