"""Rotation: when the objects of one partition are cut. Pure: decided on the records alone.

A *segment* is a run of consecutive records of one topic-partition. All objects of a segment (one
per ``(project, task_id, date, node_role)`` group) are cut together, and the segment's records are
acknowledged together once every object is stored. The commit point therefore always lands on a
segment boundary, and a worker restarted there rebuilds the next segment from the same first record,
with the same rules, into the same objects. (Cutting groups independently would let a commit land
inside another group's object; the replay would then start that object at a different offset and
store its first events twice.)

A segment is closed *before* a record that would break a rule, so every decision depends only on the
records of the segment and the rules:

- count: the segment holds ``rotate_records`` records;
- bytes: the record would take the segment past ``rotate_bytes`` (record sizes as read from Kafka);
- record time: the record's ingest time reaches the end of the segment's interval. Intervals are
  aligned to ``interval`` plus a per-partition stagger, so partitions do not rotate in step;
- a recorded cut (see :class:`~streams.sinks.objectstore.sink.ColdSink`): the segment starting at
  offset S was cut at E by an earlier run, and is cut at E again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from streams.sinks.base import SinkRecord
from streams.sinks.objectstore.partition import GroupKey, stagger_s


@dataclass(frozen=True)
class RotationRules:
    max_records: int = 100_000
    max_bytes: int = 64 * 1024 * 1024
    interval_s: float = 600.0
    stagger: bool = True

    def window_end_ms(self, topic: str, partition: int, time_ms: int) -> int:
        """End of the interval that holds ``time_ms`` for this partition (exclusive)."""
        interval = max(1, int(self.interval_s * 1000))
        shift = int(stagger_s(topic, partition, self.interval_s) * 1000) if self.stagger else 0
        return shift + ((time_ms - shift) // interval + 1) * interval


@dataclass
class Segment:
    topic: str
    partition: int
    window_end_ms: int
    forced_end: int | None = None  # last offset of a recorded cut for this segment's start
    records: list[SinkRecord] = field(default_factory=list)
    groups: list[GroupKey] = field(default_factory=list)  # parallel to records
    nbytes: int = 0
    reason: str = ""  # why it closed: records, bytes, time, recorded_cut, idle, drain

    @property
    def first_offset(self) -> int:
        return self.records[0].offset

    @property
    def last_offset(self) -> int:
        return self.records[-1].offset

    def by_group(self) -> dict[GroupKey, list[SinkRecord]]:
        out: dict[GroupKey, list[SinkRecord]] = {}
        for rec, group in zip(self.records, self.groups, strict=True):
            out.setdefault(group, []).append(rec)
        return out


class PartitionSegments:
    """The open segment of one topic-partition and the rules that close it."""

    def __init__(self, topic: str, partition: int, rules: RotationRules, cuts: dict[int, int] | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.rules = rules
        self.cuts = dict(cuts or {})  # first offset -> last offset, recorded by earlier runs
        self.open: Segment | None = None

    def close_reason(self, record: SinkRecord, time_ms: int) -> str | None:
        """Why the open segment must close before ``record`` joins it (None: it may join)."""
        seg = self.open
        if seg is None or not seg.records:
            return None
        if seg.forced_end is not None and record.offset > seg.forced_end:
            return "recorded_cut"
        if len(seg.records) >= self.rules.max_records:
            return "records"
        if seg.nbytes + record.size > self.rules.max_bytes:
            return "bytes"
        if time_ms >= seg.window_end_ms:
            return "time"
        return None

    def add(self, record: SinkRecord, group: GroupKey, time_ms: int) -> list[Segment]:
        """Place a record (in offset order); returns the segments this closed."""
        closed = []
        reason = self.close_reason(record, time_ms)
        if reason is not None:
            closed.append(self._close(reason))
        if self.open is None:
            self.open = Segment(self.topic, self.partition,
                                self.rules.window_end_ms(self.topic, self.partition, time_ms),
                                forced_end=self.cuts.get(record.offset))
        seg = self.open
        seg.records.append(record)
        seg.groups.append(group)
        seg.nbytes += record.size
        if seg.forced_end is not None and record.offset >= seg.forced_end:
            # Close at once: waiting for the next record (or the idle timer) would only delay it.
            closed.append(self._close("recorded_cut"))
        return closed

    def cut(self, reason: str) -> Segment | None:
        """Close the open segment now (idle partition or shutdown); the caller records the cut."""
        if self.open is None or not self.open.records:
            return None
        return self._close(reason)

    def _close(self, reason: str) -> Segment:
        seg = self.open
        if seg is None:
            raise ValueError("no open segment to close")
        seg.reason = reason
        self.open = None
        return seg

    @property
    def buffered(self) -> int:
        return len(self.open.records) if self.open else 0

    @property
    def buffered_bytes(self) -> int:
        return self.open.nbytes if self.open else 0
