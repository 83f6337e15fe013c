"""Builders shared by the watch unit tests: real corpus events, synthetic metric points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streams.assemble.pipeline import parse_files
from streams.watch.observation import Observation, from_record

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, on every minute boundary
MIN = 60_000


def corpus_events(path: Path, task_id: str, rank: int | None = None, host: str | None = None) -> list[dict[str, Any]]:
    """A real log as LogEvents of one task; untimed lines get the time of the timed line before them
    (a shipper stamps a line when it is written, right after its neighbours)."""
    untimed = int(path.stat().st_mtime * 1000)  # what parse_files gives a line without a time
    events = [e for e in parse_files([path], labels={"task_id": task_id}, default_ts_ms=untimed)
              if "message" in e]
    timed = [e["timestamp"] for e in events if e["timestamp"] != untimed]
    last = timed[0] if timed else untimed
    for event in events:
        if event["timestamp"] == untimed:
            event["timestamp"] = last
        last = event["timestamp"]
        if rank is not None:
            event["source"] = {**event["source"], "rank": rank, "host": host}
            event["event_id"] = f"{event['event_id']}@r{rank}"
    return events


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
