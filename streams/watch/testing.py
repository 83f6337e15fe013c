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

    def add_utilisation(self, key: str, ts_ms: int, sample: UtilSample) -> None:
        for start in window_starts(ts_ms, self.size_ms, self.step_ms):
            self.windows[key, start] = merge_samples(self.windows.get((key, start)), sample)

    def utilisation(self, key: str, window_start_ms: int) -> UtilSample | None:
        return self.windows.get((key, window_start_ms))
