"""Windowed, adaptive, per-project rate control for the sinks (pure arithmetic, clock injected).

The sink asks once per window how many events and bytes each project may write
(:meth:`RateController.grant`). The budget starts at ``utilisation`` (80%) of the store's declared
capacity, falls multiplicatively when the store pushes back (HTTP 429, 5xx, a slow response) and
climbs additively while it is healthy (AIMD, as TCP does), never above the declared capacity.

Fair sharing is max-min (water-filling): projects that want less than an equal share get all they
want, the rest split what is left. A quiet project therefore always gets its small demand served
in the next window, however hard another project bursts: its wait is bounded by one window.
A project may also have a cap (``routing.projects.<p>.events_per_s``): a token bucket per project
that fills at the cap, so it never gets more than that many events per second, and what the cap
leaves unused goes to the others. Nothing is dropped here: what is not granted stays in Kafka and
is asked for again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Capacity:
    """What the store is declared to take per second (from its specification or a benchmark)."""

    events_per_s: float
    bytes_per_s: float


@dataclass(frozen=True)
class Demand:
    events: int
    bytes: int


@dataclass(frozen=True)
class Grant:
    events: int
    bytes: int


def water_fill(total: float, wants: Mapping[str, float]) -> dict[str, float]:
    """Max-min fair split of ``total`` over ``wants``."""
    remaining = {k: float(v) for k, v in wants.items() if v > 0}
    out = dict.fromkeys(wants, 0.0)
    left = float(total)
    while remaining and left > 1e-9:
        share = dict.fromkeys(remaining, left / len(remaining))
        satisfied = [k for k, want in remaining.items() if want <= share[k]]
        if not satisfied:
            for k in remaining:
                out[k] += share[k]
            return out
        for k in satisfied:
            out[k] += remaining[k]
            left -= remaining.pop(k)
    return out


class RateController:
    """Budget per window, AIMD-adapted, max-min shared between projects.

    ``window_s`` is the accounting window: a budget granted at the start of a window is the most the
    sink writes until the next one starts, which is what keeps the store under its limit in every
    second rather than on average.
    """

    def __init__(
        self,
        capacity: Capacity,
        window_s: float = 1.0,
        utilisation: float = 0.8,
        min_fraction: float = 0.05,
        increase_fraction: float = 0.05,
        decrease_factor: float = 0.5,
        slow_response_s: float = 2.0,
        project_caps: Mapping[str, float] | None = None,
        carry_windows: int = 0,
    ) -> None:
        if not 0 < utilisation <= 1:
            raise ValueError("utilisation must be in (0, 1]")
        self.capacity = capacity
        self.window_s = window_s
        self.ceiling = utilisation  # fraction of capacity the budget may reach
        self.fraction = utilisation  # current fraction (AIMD state)
        self.min_fraction = min_fraction
        self.increase_fraction = increase_fraction
        self.decrease_factor = decrease_factor
        self.slow_response_s = slow_response_s
        # Events per second at most, per project; each project's allowance is a token bucket that holds
        # at most one window's worth (or one event, for caps under one event a window).
        self.project_caps = dict(project_caps or {})
        self._tokens: dict[str, float] = {}
        self._tokens_at: dict[str, float] = {}
        self.carry_windows = carry_windows
        self._window_start: float | None = None
        self._used_events = 0
        self._used_bytes = 0
        self._unmet = False  # the last grant left some project wanting more: a backlog is waiting
        self.throttle_events = 0

    # -- budget ----------------------------------------------------------------------------
    @property
    def events_budget(self) -> int:
        return max(1, int(self.capacity.events_per_s * self.window_s * self.fraction))

    @property
    def bytes_budget(self) -> int:
        return max(1, int(self.capacity.bytes_per_s * self.window_s * self.fraction))

    def _roll(self, now: float) -> None:
        if self._window_start is None or now - self._window_start >= self.window_s:
            # Windows are aligned to the first use, then advance in whole steps.
            if self._window_start is None:
                self._window_start = now
                steps = 0
            else:
                steps = int((now - self._window_start) // self.window_s)
                self._window_start += steps * self.window_s
            # Budget left unused while the sink was busy (a bulk slower than a window) carries over, up
            # to ``carry_windows`` windows: the rate holds at the budget when responses are slower than a
            # window, and no second can see more than (1 + carry_windows * window_s) of the budget.
            # Only while a backlog waits: budget nobody wanted (the quiet hours before a burst) is not
            # saved up, else a burst's first grant would be three windows' worth at once, all of it
            # ahead of any other project's next bulk in the store's queue.
            carry_e = carry_b = 0
            if self.carry_windows and steps and self._unmet:
                carry_e = min(self.carry_windows * self.events_budget,
                              max(0, self.events_budget - self._used_events) + (steps - 1) * self.events_budget)
                carry_b = min(self.carry_windows * self.bytes_budget,
                              max(0, self.bytes_budget - self._used_bytes) + (steps - 1) * self.bytes_budget)
            self._used_events = -carry_e
            self._used_bytes = -carry_b

    def wait_s(self, now: float) -> float:
        """Seconds until budget is available again (0 when some is left in this window)."""
        self._roll(now)
        if self._used_events < self.events_budget and self._used_bytes < self.bytes_budget:
            return 0.0
        start = self._window_start if self._window_start is not None else now
        return max(0.0, start + self.window_s - now)

    def grant(self, demands: Mapping[str, Demand], now: float) -> dict[str, Grant]:
        """Split what is left of this window's budget between the projects that want some."""
        self._roll(now)
        events_left = self.events_budget - self._used_events
        bytes_left = self.bytes_budget - self._used_bytes
        if events_left <= 0 or bytes_left <= 0:
            return {p: Grant(0, 0) for p in demands}
        wants = {p: min(d.events, self.cap_room(p, now)) for p, d in demands.items()}
        ev = water_fill(events_left, wants)
        by = water_fill(bytes_left, {p: d.bytes for p, d in demands.items()})
        grants = {}
        for p in demands:
            # An event is indivisible: a project whose share rounds to zero but which fits gets one.
            events = min(wants[p], int(ev[p]))
            if events == 0 and wants[p] > 0 and events_left >= 1:
                events = 1
            grants[p] = Grant(events, int(by[p]))
        self._unmet = any(grants[p].events < d.events for p, d in demands.items())
        return grants

    def consume(self, events: int, nbytes: int, now: float, by_project: Mapping[str, int] | None = None) -> None:
        """Record what was actually sent in this window (``by_project``: the events of each project)."""
        self._roll(now)
        self._used_events += events
        self._used_bytes += nbytes
        for project, n in (by_project or {}).items():
            if project in self.project_caps:
                self.cap_room(project, now)
                self._tokens[project] -= n

    def cap_room(self, project: str, now: float) -> int:
        """Events ``project`` may still send now under its cap (a large number when it has none)."""
        cap = self.project_caps.get(project)
        if cap is None:
            return 1 << 62
        burst = max(1.0, cap * self.window_s)
        last = self._tokens_at.get(project)
        tokens = burst if last is None else min(burst, self._tokens[project] + cap * max(0.0, now - last))
        self._tokens[project], self._tokens_at[project] = tokens, now
        return max(0, int(tokens))

    # -- feedback (AIMD) ------------------------------------------------------------------------
    def on_success(self, latency_s: float) -> None:
        if latency_s >= self.slow_response_s:
            self._decrease()
        else:
            self.fraction = min(self.ceiling, self.fraction + self.increase_fraction * self.ceiling)

    def on_throttled(self) -> None:
        """The store said 429 / 503 / too many requests."""
        self.throttle_events += 1
        self._decrease()

    def _decrease(self) -> None:
        self.fraction = max(self.min_fraction * self.ceiling, self.fraction * self.decrease_factor)
