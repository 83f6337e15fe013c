"""Hopping-window arithmetic on event time (milliseconds), matching Faust's hopping tables.

A window ``[start, start + size)`` starts every ``step``. Faust's ``HoppingWindow`` puts a timestamp
into every window that contains it and names a window by ``(start_s, start_s + size_s - 0.1)``;
:func:`faust_range` converts, so the pure rules and the Faust table agree on which window is which.
"""

from __future__ import annotations

from typing import TypedDict


class UtilSample(TypedDict):
    """GPU utilisation folded over one window: sum and count of samples, their time span, and the
    sample times themselves, which make the fold idempotent (see :func:`merge_samples`)."""

    sum: float
    n: int
    first_ms: int
    last_ms: int
    ts: list[int]


def empty_sample() -> UtilSample:
    return {"sum": 0.0, "n": 0, "first_ms": 0, "last_ms": 0, "ts": []}


def sample_of(pct: float, ts_ms: int) -> UtilSample:
    return {"sum": pct, "n": 1, "first_ms": ts_ms, "last_ms": ts_ms, "ts": [ts_ms]}


def merge_samples(a: UtilSample | None, b: UtilSample) -> UtilSample:
    """Fold one rank's sample ``b`` into window ``a``; a sample already in the window is ignored.

    At-least-once delivery re-reads records after a crash or a rebalance. A rank reports one
    sample per timestamp, so the window's own list of sample times recognises a redelivery, in
    the same table write as the sum: no second table has to agree with this one after a restart.
    """
    if not a or not a["n"]:
        return {**b, "ts": list(b["ts"])}
    if not b["n"] or any(t in a["ts"] for t in b["ts"]):
        return {**a, "ts": list(a["ts"])}
    return {"sum": a["sum"] + b["sum"], "n": a["n"] + b["n"], "first_ms": min(a["first_ms"], b["first_ms"]),
            "last_ms": max(a["last_ms"], b["last_ms"]), "ts": a["ts"] + b["ts"]}


def window_starts(ts_ms: int, size_ms: int, step_ms: int) -> list[int]:
    """Starts of every window that contains ``ts_ms``, oldest first."""
    newest = ts_ms // step_ms * step_ms
    return list(range(newest - size_ms + step_ms, newest + 1, step_ms))


def last_closed_start(ts_ms: int, size_ms: int, step_ms: int) -> int:
    """Start of the newest window that ended at or before ``ts_ms``."""
    return (ts_ms - size_ms) // step_ms * step_ms


def faust_range(start_ms: int, size_ms: int) -> tuple[float, float]:
    start = start_ms / 1000
    return (start, start + size_ms / 1000 - 0.1)
