"""Step metrics -> ``sluice.v1.MetricPoint`` dicts for ``logs.metrics``.

Decision: a step-metric line (an ms-swift ``logging.jsonl`` record, an HF Trainer ``{'loss': ...}``
dict, a Megatron ``iteration N/ M | lm loss`` line) goes to ``logs.metrics`` ONLY, not to
``logs.events.<project>``: these lines come once per step per rank, they are the high-frequency
part of a training log, and every number in them is kept in the metric point. A line is a step
metric when it carries at least one of ``loss``, ``learning_rate`` or ``grad_norm`` and is a single
line (a multiline block is never split away from the events).
"""

from __future__ import annotations

STEP_KEYS = frozenset(("loss", "learning_rate", "grad_norm", "eval_loss"))
GIB_TO_MB = 1024.0


def is_step_metric(metrics: dict, line_count: int) -> bool:
    return line_count == 1 and not STEP_KEYS.isdisjoint(metrics)


def metric_point(event_id: str, timestamp: int, project: str, parsed, *, source: dict, labels: dict,
                 raw: dict) -> dict:
    m = dict(parsed.metrics)
    if "gpu_memory_gib" in m:  # logs.metrics speaks MB for GPU memory, as log_event.gpu_memory_mb
        m["gpu_memory_mb"] = m.pop("gpu_memory_gib") * GIB_TO_MB
    return {
        "event_id": event_id,
        "timestamp": timestamp,
        "project": project,
        "task_id": labels.get("task_id"),
        "task_type": labels.get("task_type"),
        "model_name": labels.get("model_name"),
        "phase": "eval" if "eval_loss" in m else "train",
        "step": parsed.step,
        "max_steps": parsed.max_steps,
        "epoch": parsed.epoch,
        "metrics": m,
        "source": source,
        "labels": labels,
        "raw": raw,
    }
