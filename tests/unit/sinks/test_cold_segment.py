"""Rotation decisions: count, bytes, record time (staggered), recorded cuts; never the clock."""

from __future__ import annotations

from streams.sinks.base import SinkRecord
from streams.sinks.objectstore.partition import GroupKey
from streams.sinks.objectstore.segment import PartitionSegments, RotationRules

G = GroupKey("p", "t", "2026-11-29", "trainer")
H = GroupKey("p", "t", "2026-11-29", "launcher")


def rec(offset: int, size: int = 100) -> SinkRecord:
    return SinkRecord("logs.events.p", 0, offset, None, {}, b"", "p", size)


def feed(segs: PartitionSegments, items: list[tuple[int, int]], group: GroupKey = G) -> list[list[int]]:
    closed = []
    for offset, time_ms in items:
        closed += segs.add(rec(offset), group, time_ms)
    return [[r.offset for r in s.records] for s in closed]


def test_count_rotation_closes_before_the_record_that_overflows() -> None:
    segs = PartitionSegments("logs.events.p", 0, RotationRules(max_records=3, interval_s=10**6, stagger=False))
    assert feed(segs, [(i, 0) for i in range(7)]) == [[0, 1, 2], [3, 4, 5]]
    assert segs.buffered == 1


def test_bytes_rotation() -> None:
    segs = PartitionSegments("logs.events.p", 0, RotationRules(max_bytes=250, interval_s=10**6, stagger=False))
    assert feed(segs, [(i, 0) for i in range(5)]) == [[0, 1], [2, 3]]


def test_time_rotation_follows_record_time_and_aligned_boundaries() -> None:
    segs = PartitionSegments("logs.events.p", 0, RotationRules(interval_s=600, stagger=False))
    minute = 60_000
    # Boundaries at 0, 10, 20 min: 9 min and 10 min are in different windows; a late record stays.
    closed = feed(segs, [(0, 1 * minute), (1, 9 * minute), (2, 10 * minute), (3, 5 * minute), (4, 25 * minute)])
    assert closed == [[0, 1], [2, 3]]


def test_stagger_shifts_boundaries_per_partition() -> None:
    rules = RotationRules(interval_s=600, stagger=True)
    ends = {rules.window_end_ms("logs.events.p", p, 0) for p in range(6)}
    assert len(ends) == 6
    assert all(0 < e <= 600_000 for e in ends)


def test_groups_of_one_segment_are_cut_together() -> None:
    segs = PartitionSegments("logs.events.p", 0, RotationRules(max_records=4, interval_s=10**6, stagger=False))
    closed = []
    for offset in range(6):
        closed += segs.add(rec(offset), G if offset % 2 else H, 0)
    assert len(closed) == 1
    by_group = closed[0].by_group()
    assert [r.offset for r in by_group[H]] == [0, 2]
    assert [r.offset for r in by_group[G]] == [1, 3]


def test_a_recorded_cut_is_honoured_on_replay() -> None:
    rules = RotationRules(max_records=100, interval_s=10**6, stagger=False)
    segs = PartitionSegments("logs.events.p", 0, rules, cuts={10: 12})
    closed = feed(segs, [(i, 0) for i in range(10, 16)])
    assert closed == [[10, 11, 12]], "closed as soon as the recorded last offset is in"
    assert segs.open is not None and segs.open.first_offset == 13


def test_a_recorded_cut_whose_last_offset_never_arrives_still_cuts_before_later_records() -> None:
    segs = PartitionSegments("logs.events.p", 0, RotationRules(interval_s=10**6, stagger=False), cuts={0: 5})
    assert feed(segs, [(0, 0), (3, 0), (7, 0)]) == [[0, 3]]  # 4-5 were dead-lettered upstream


def test_same_records_same_cuts_regardless_of_how_they_are_fed() -> None:
    rules = RotationRules(max_records=5, max_bytes=10**9, interval_s=60, stagger=True)
    items = [(i, i * 7_000) for i in range(40)]
    a = feed(PartitionSegments("logs.events.p", 0, rules), items)
    b = PartitionSegments("logs.events.p", 0, rules)
    first = feed(b, items[:17])
    assert first + feed(b, items[17:]) == a
