"""Builders shared by the watch unit tests: real corpus events, synthetic metric points."""

from __future__ import annotations

from typing import Any

from devtools.testing.watch import corpus_events  # noqa: F401 - re-exported for the unit tests
from streams.watch.observation import Observation, from_record

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, on every minute boundary
MIN = 60_000




def point(task: str, ts_ms: int, step: int | None = None, rank: int = 0, host: str = "node-1",
          project: str = "default", **metrics: float) -> dict[str, Any]:
    """A MetricPoint dict as logs.metrics carries it."""
    return {
        "event_id": f"{task}/{host}/{rank}/{ts_ms}/{step}", "timestamp": ts_ms, "project": project,
        "task_id": task, "task_type": "sft", "model_name": None, "phase": "train", "step": step,
        "max_steps": None, "epoch": None, "metrics": dict(metrics),
        "source": {"host": host, "namespace": None, "pod": None, "container": None, "file": None,
                   "stream": None, "node_role": "trainer", "rank": rank},
        "labels": {"task_id": task}, "raw": {"topic": "t", "partition": 0, "first_offset": 0, "last_offset": 0,
                                             "first_file_offset": None, "last_file_offset": None},
    }


def obs(record: dict[str, Any]) -> Observation:
    return from_record(record)
