"""``routing.projects.<p>.events_per_s`` is a cap: that many events per second at most, the rest to others."""

from __future__ import annotations

import asyncio

from streams.config import Settings
from streams.sinks.base import SinkRecord, SinkRunner
from streams.sinks.ratecontrol import Capacity, Demand, RateController
from streams.workers.hot import project_caps
from tests.unit.sinks.test_runner import FakeDLQ, FakeSource, FakeStore


def _records(project: str, n: int, start: int) -> list[SinkRecord]:
    return [SinkRecord(f"logs.events.{project}", 0, start + i, b"k", {"i": i}, b"raw", project, 100)
            for i in range(n)]


def test_the_controller_grants_a_capped_project_its_cap_and_the_others_the_rest() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=0.1, project_caps={"capped": 100})  # budget 800/s
    got = {"capped": 0, "free": 0}
    now = 0.0
    while now < 10.0:
        grants = rc.grant({"capped": Demand(10_000, 10**6), "free": Demand(10_000, 10**6)}, now)
        rc.consume(sum(g.events for g in grants.values()), 0, now, {p: g.events for p, g in grants.items()})
        for p, g in grants.items():
            got[p] += g.events
        now += 0.01
    assert 900 <= got["capped"] <= 100 * 10 + 10, got
    assert got["free"] >= (800 - 100) * 10 * 0.95, got


def test_a_cap_below_one_event_per_window_still_holds() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=0.1, project_caps={"slow": 2})
    sent = 0
    now = 0.0
    while now < 10.0:
        grant = rc.grant({"slow": Demand(100, 10**4)}, now)["slow"]
        rc.consume(grant.events, 0, now, {"slow": grant.events})
        sent += grant.events
        now += 0.05
    assert 19 <= sent <= 21


def test_the_runner_keeps_a_capped_project_at_its_cap_while_another_takes_the_rest() -> None:
    """The bug this replaces: a project given 100 took 99% of the budget (a raw weight against 1)."""
    clock = [0.0]
    store = FakeStore()
    source = FakeSource([r for pair in zip(_records("capped", 5000, 0), _records("free", 5000, 100_000), strict=True)
                         for r in pair])
    runner = SinkRunner(source, store, RateController(Capacity(1000, 10**9), window_s=0.1,
                                                      project_caps={"capped": 100}),
                        FakeDLQ(), "hot_sink", clock=lambda: clock[0], ack_cap=True)

    async def go() -> None:
        while clock[0] < 5.0:
            await runner.step(poll_timeout_s=0)
            clock[0] += 0.01

    asyncio.run(go())
    capped = sum(1 for off in store.written if off < 100_000)
    free = len(store.written) - capped
    assert 450 <= capped <= 100 * 5 + 10, (capped, free)
    assert free >= (800 - 100) * 5 * 0.9, (capped, free)


def test_caps_come_from_the_routing_table() -> None:
    settings = Settings.model_validate({"routing": {"projects": {"default": {}, "noisy": {"events_per_s": 250}}}})
    assert project_caps(settings) == {"noisy": 250}
