from __future__ import annotations

from streams.sinks.offsets import OffsetTracker


def test_commit_point_stops_at_first_unacked() -> None:
    t = OffsetTracker()
    for o in range(10, 15):
        t.add("raw", 0, o)
    t.ack("raw", 0, 11)
    t.ack("raw", 0, 12)
    assert t.commit_points() == {}  # 10 is still in flight
    t.ack("raw", 0, 10)
    assert t.commit_points() == {("raw", 0): 13}
    assert t.commit_points() == {}, "the same point is not reported twice"
    t.ack("raw", 0, 14)
    t.ack("raw", 0, 13)
    assert t.commit_points() == {("raw", 0): 15}
    assert t.in_flight("raw", 0) == 0


def test_partitions_are_independent_and_revocation_forgets() -> None:
    t = OffsetTracker()
    t.add("a", 0, 0)
    t.add("a", 1, 0)
    t.ack("a", 1, 0)
    assert t.commit_points() == {("a", 1): 1}
    t.forget("a", 0)
    assert t.total_in_flight() == 0


def test_redelivered_offsets_are_not_tracked_twice() -> None:
    t = OffsetTracker()
    t.add("a", 0, 5)
    t.add("a", 0, 5)
    t.ack("a", 0, 5)
    assert t.commit_points() == {("a", 0): 6}


def test_position_past_a_transaction_marker_is_committed_once_nothing_is_in_flight() -> None:
    t = OffsetTracker()
    t.add("ev", 0, 10)
    t.advance({("ev", 0): 12})  # record 10, then the commit marker at 11: the consumer stands at 12
    assert t.commit_points() == {}, "record 10 is still in flight"
    t.ack("ev", 0, 10)
    assert t.commit_points() == {("ev", 0): 11}
    t.advance({("ev", 0): 12, ("ev", 1): -1001})  # -1001: no position yet
    assert t.commit_points() == {("ev", 0): 12}
    t.advance({("ev", 0): 12})
    assert t.commit_points() == {}
