"""Pieces of the assemble stage's exactly-once writing that need no broker."""

from __future__ import annotations

from types import SimpleNamespace

from confluent_kafka import Consumer

from streams.workers.assemble import PartitionState
from streams.workers.transactions import group_metadata


def test_group_metadata_is_what_librdkafka_writes() -> None:
    # librdkafka serialises its own consumer's metadata the same way; before joining, generation -1
    # and no member id. (With a joined member: tests/integration/test_transactions.py.)
    consumer = Consumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "sluice-assemble"})
    try:
        assert bytes(consumer.consumer_group_metadata()) == group_metadata("sluice-assemble", -1, "")
    finally:
        consumer.close()
    assert group_metadata("g", 7, "m-1") == b"CGMDv2:\x07\x00\x00\x00g\x00m-1\x00\x01"


def test_partition_state_skips_what_comes_before_its_start_and_what_it_has_read() -> None:
    state = PartitionState(SimpleNamespace(), expect=100, strict=True)  # type: ignore[arg-type]
    assert not state.admits(140), "rewound: fetched before the seek, comes again in order"
    assert not state.admits(99)
    assert state.admits(100)
    state.next_offset = 101
    assert not state.admits(100), "re-delivered: already read"
    assert state.admits(101) and state.admits(105), "a gap (compaction, markers) is fine"


def test_a_take_over_resumes_past_a_committed_offset_that_retention_deleted() -> None:
    state = PartitionState(SimpleNamespace(), expect=100)  # type: ignore[arg-type]
    assert not state.admits(97), "before the committed offset (a stale committed offset read by Faust)"
    assert state.admits(250), "offsets 100-249 are gone: the partition must not wait for them for ever"
    state.next_offset = 251
    assert not state.admits(250)
