"""The rules: each reads one observation and the task's state, updates the state, and may find
something wrong. Pure: time is the observation's own, state is plain dicts (table values).

A :class:`Finding` is one rule firing once; :mod:`streams.watch.incidents` folds findings into
incidents (cooldown, de-duplication) and those into alerts.
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


def idle_rule(obs: Observation, state: dict[str, Any], conf: WatchSettings,
              window_value: Callable[[int], UtilSample | None]) -> Finding | None:
    """The newest closed window of this rank averaged under ``gpu_idle_pct``.

    Checked once per window, when the first sample ``gpu_idle_grace_s`` past its end arrives. ``state`` is the rank's
    (``checked_ms``: the last window checked; ``idle_since``: start of the idle stretch, which
    names the incident). ``window_value(start_ms)`` reads the windowed table.
    """
    if obs.gpu_util_pct is None:
        return None
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
    avg = value["sum"] / value["n"]
    if avg >= conf.gpu_idle_pct:
        state.pop("idle_since", None)
        return None
    since = state.setdefault("idle_since", start)
    return Finding("gpu_idle", "warning", obs.ts_ms, since,
                   f"GPU utilisation averaged {avg:.1f}% (< {conf.gpu_idle_pct:g}%) over "
                   f"{conf.gpu_idle_window_s // 60} min on {obs.host or '?'} rank {obs.rank}",
                   {"avg_pct": f"{avg:.2f}", "samples": str(value["n"]), "window_start": str(start),
                    "window_end": str(start + size_ms), "first_sample": str(value["first_ms"])})
