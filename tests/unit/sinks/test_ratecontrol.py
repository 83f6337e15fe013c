from __future__ import annotations

import pytest

from streams.sinks.ratecontrol import Capacity, Demand, RateController, water_fill


def test_water_fill_gives_small_demands_in_full() -> None:
    out = water_fill(100, {"quiet": 5, "burst": 10_000})
    assert out["quiet"] == 5
    assert out["burst"] == pytest.approx(95)


def test_water_fill_splits_evenly_when_all_want_more() -> None:
    out = water_fill(90, {"a": 1000, "b": 1000, "c": 1000})
    assert all(v == pytest.approx(30) for v in out.values())


def test_budget_is_80_percent_of_capacity_by_default() -> None:
    rc = RateController(Capacity(events_per_s=1000, bytes_per_s=1_000_000), window_s=1.0)
    assert rc.events_budget == 800
    assert rc.bytes_budget == 800_000


def test_grants_never_exceed_the_window_budget() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=1.0)
    total = 0
    for _ in range(10):  # many calls in one window
        g = rc.grant({"p": Demand(500, 500)}, now=0.5)
        rc.consume(g["p"].events, g["p"].bytes, now=0.5)
        total += g["p"].events
    assert total == 800
    assert rc.wait_s(now=0.6) == pytest.approx(0.9)  # windows start at the first use (0.5)
    # Next window: budget again.
    assert rc.grant({"p": Demand(500, 500)}, now=1.5)["p"].events == 500


def test_quiet_project_is_served_in_the_next_window_during_a_burst() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=1.0)
    g = rc.grant({"burst": Demand(100_000, 10**8), "quiet": Demand(3, 300)}, now=0.0)
    assert g["quiet"].events == 3
    assert g["burst"].events == 797


def test_aimd_halves_on_throttle_and_recovers_additively() -> None:
    rc = RateController(Capacity(1000, 10**9))
    rc.on_throttled()
    assert rc.events_budget == 400
    rc.on_throttled()
    assert rc.events_budget == 200
    for _ in range(3):
        rc.on_success(latency_s=0.05)
    assert rc.events_budget == 200 + 3 * 40
    for _ in range(100):
        rc.on_success(latency_s=0.05)
    assert rc.events_budget == 800, "never above the 80% ceiling"
    rc.on_success(latency_s=5.0)  # a slow response counts as push-back
    assert rc.events_budget == 400


def test_budget_never_reaches_zero() -> None:
    rc = RateController(Capacity(1000, 10**9))
    for _ in range(50):
        rc.on_throttled()
    assert rc.events_budget >= 1


def test_budget_unused_during_a_slow_write_carries_over_but_is_capped() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=0.1, carry_windows=2)  # 80 per window
    g = rc.grant({"p": Demand(10_000, 1)}, now=0.0)
    rc.consume(g["p"].events, 1, now=0.0)
    assert g["p"].events == 80
    # The sink was busy for 0.35 s (three windows passed unused): two windows carry over, not three.
    g = rc.grant({"p": Demand(10_000, 1)}, now=0.35)
    assert g["p"].events == 80 + 2 * 80
    # Over a whole second of back-to-back slow writes, admission stays near the budget.
    admitted, now = 0, 0.35
    rc.consume(g["p"].events, 1, now)
    admitted += g["p"].events
    while now < 1.35:
        now += 0.3
        g = rc.grant({"p": Demand(10_000, 1)}, now)
        rc.consume(g["p"].events, 1, now)
        admitted += g["p"].events
    assert admitted <= 800 * 1.0 * 1.2 + 240


def test_budget_nobody_wanted_is_not_saved_up_for_a_burst() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=0.1, carry_windows=2)  # 80 per window
    now = 0.0
    for _ in range(10):  # a quiet project alone: 2 events a window, all granted
        g = rc.grant({"quiet": Demand(2, 1)}, now)
        rc.consume(g["quiet"].events, 1, now)
        now += 0.1
    # Another project starts bursting: it gets what is left of one window, not three.
    g = rc.grant({"quiet": Demand(2, 1), "noisy": Demand(10_000, 1)}, now + 0.05)
    assert g["quiet"].events == 2
    assert g["noisy"].events == 78


def test_without_carry_a_slow_sink_gets_one_window_per_grant() -> None:
    rc = RateController(Capacity(1000, 10**9), window_s=0.1)
    rc.consume(rc.grant({"p": Demand(10_000, 1)}, now=0.0)["p"].events, 1, 0.0)
    assert rc.grant({"p": Demand(10_000, 1)}, now=0.35)["p"].events == 80
