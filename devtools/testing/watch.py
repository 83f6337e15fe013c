"""Test helpers: an in-memory :class:`~streams.watch.engine.WatchStore` with the worker's semantics."""

from __future__ import annotations

import copy
from typing import Any

from streams.watch.settings import WatchSettings
from streams.watch.windows import UtilSample, merge_samples, window_starts


class MemoryWatchStore:
    """Dicts instead of Faust tables. Values are copied in and out, as a changelogged table would."""

    def __init__(self, conf: WatchSettings) -> None:
        self.size_ms = conf.gpu_idle_window_s * 1000
        self.step_ms = conf.gpu_idle_step_s * 1000
        self.state: dict[str, dict[str, Any]] = {}
        self.incidents: dict[str, dict[str, Any]] = {}
        self.windows: dict[tuple[str, int], UtilSample] = {}

    def get_state(self, key: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.state.get(key))

    def put_state(self, key: str, value: dict[str, Any]) -> None:
        self.state[key] = copy.deepcopy(value)

    def get_incident(self, key: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.incidents.get(key))

    def put_incident(self, key: str, value: dict[str, Any]) -> None:
        self.incidents[key] = copy.deepcopy(value)

    def drop_incident(self, key: str) -> None:
        self.incidents.pop(key, None)

    def add_utilisation(self, key: str, ts_ms: int, sample: UtilSample) -> None:
        for start in window_starts(ts_ms, self.size_ms, self.step_ms):
            self.windows[key, start] = merge_samples(self.windows.get((key, start)), sample)

    def utilisation(self, key: str, window_start_ms: int) -> UtilSample | None:
        return self.windows.get((key, window_start_ms))


def corpus_events(path: Any, task_id: str, rank: int | None = None, host: str | None = None,
                  project: str | None = None) -> list[dict[str, Any]]:
    """A real log as the LogEvents of one task (for tests of the watch stage).

    Untimed lines get the time of the timed line before them (the first ones the first timed line's),
    as a shipper stamps a line when it is written, right after its neighbours. With ``rank``, the
    events are one rank's copy: their own source rank and host, and their own ids.
    """
    from pathlib import Path

    from streams.assemble.pipeline import parse_files

    path = Path(path)
    untimed = int(path.stat().st_mtime * 1000)  # what parse_files gives a line without a time
    events = [e for e in parse_files([path], labels={"task_id": task_id}, default_ts_ms=untimed)
              if "message" in e]
    timed = [e["timestamp"] for e in events if e["timestamp"] != untimed]
    last = timed[0] if timed else untimed
    for event in events:
        if event["timestamp"] == untimed:
            event["timestamp"] = last
        last = event["timestamp"]
        if project is not None:
            event["project"] = project
        if rank is not None:
            event["source"] = {**event["source"], "rank": rank, "host": host}
            event["event_id"] = f"{event['event_id']}@r{rank}"
    return events
