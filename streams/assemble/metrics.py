"""Step metrics -> ``sluice.v1.MetricPoint`` dicts for ``logs.metrics``.

Decision: a step-metric line (an ms-swift ``logging.jsonl`` record, an HF Trainer ``{'loss': ...}``
dict, a Megatron ``iteration N/ M | lm loss`` line, a DeepSpeed-Chat ``act_loss: ...`` line, a vLLM
stats line, a record of GPU figures) goes to ``logs.metrics`` ONLY, not to ``logs.events.<project>``:
these lines come once per step per rank, they are the high-frequency part of a training log, and
every number in them is kept in the metric point. A line is a step metric when it is a single line
(a multiline block is never split away from the events) and carries a loss (any metric named
``*loss``), ``grad_norm``, ``gpu_utilization_pct`` or a vLLM generation throughput, or a learning rate
with a step or epoch (a learning rate alone is a configuration dump: ``Namespace(..., learning_rate=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping

from streams.assemble.keys import GIB_TO_MB
from streams.assemble.keys import STEP_METRICS as STEP_KEYS

__all__ = ["GIB_TO_MB", "STEP_KEYS", "is_step_metric", "metric_point"]


def is_step_metric(metrics: Mapping[str, float], line_count: int, counted: bool = False) -> bool:
    """``counted``: the line names its step or epoch."""
    if line_count != 1:
        return False
    if not STEP_KEYS.isdisjoint(metrics) or (counted and "learning_rate" in metrics):
        return True
    return any(k.endswith("loss") for k in metrics)


def metric_point(event_id: str, timestamp: int, project: str, parsed, *, task: Mapping[str, str | None],
                 source: dict, labels: dict, raw: dict) -> dict:
    m = parsed.metrics
    phase = task.get("phase") or ("eval" if "eval_loss" in m else "train")
    return {
        "event_id": event_id,
        "timestamp": timestamp,
        "project": project,
        "task_id": task.get("task_id"),
        "task_type": task.get("task_type"),
        "model_name": task.get("model_name"),
        "phase": phase,
        "step": parsed.step,
        "max_steps": parsed.max_steps,
        "epoch": parsed.epoch,
        "metrics": dict(m),
        "source": source,
        "labels": labels,
        "raw": raw,
        "gpu": None,  # set on the samples of `sluice ship`'s GPU sampler only; present, so the fast writer applies
    }
