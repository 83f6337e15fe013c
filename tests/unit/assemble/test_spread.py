"""A source whose records arrive on several raw partitions is counted and warned about once."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from corpus_helpers import lines

from streams import observability as obs
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.spread import SourcePartitions
from streams.config import Settings
from streams.rdkafka import Message
from streams.workers.assemble import AssembleStage

TEXTS = lines("vllm_worker_nccl_illegal_memory_watchdog_chained.log", 1, 12)


def test_a_source_on_a_second_partition_is_reported_once() -> None:
    seen = SourcePartitions()
    assert not seen.observe("node-1/train.log", 0)
    assert not seen.observe("node-1/train.log", 0)
    assert seen.observe("node-1/train.log", 2)
    assert not seen.observe("node-1/train.log", 1)  # once per source
    assert not seen.observe("node-2/train.log", 1)
    msg = seen.message("node-1/train.log", 2, "logs.raw")
    assert "partition 2 after partition 0" in msg and "message_key_field" in msg and "key_field" in msg


def test_the_tracker_is_bounded() -> None:
    seen = SourcePartitions(max_sources=10)
    for i in range(25):
        seen.observe(f"s{i}", 0)
    assert len(seen) <= 10


def _fluent_bit(text: str) -> bytes:
    # what Fluent Bit's tail + kafka output sends without message_key_field: no key
    return json.dumps({"@timestamp": 1796123248.3, "path": "/var/log/train/job.log", "log": text}).encode()


def test_assemblers_of_two_partitions_report_keyless_and_keyed_sources() -> None:
    seen = SourcePartitions()
    reported: list[tuple[str, int]] = []

    def note(sid: str, partition: int) -> None:
        if seen.observe(sid, partition):
            reported.append((sid, partition))

    asm = {p: Assembler(on_new_source=note) for p in (0, 1)}
    for i, text in enumerate(TEXTS):
        p = i % 2  # no key: the producer spreads the file's lines
        asm[p].feed(RawRecord("logs.raw", p, i, _fluent_bit(text), None, 0))
        asm[0].feed(RawRecord("logs.raw", 0, 100 + i, text.encode(), b"node-1/keyed.log", 0))
    assert reported == [("||||/var/log/train/job.log|", 1)]


@pytest.mark.parametrize("partitions", [(0,), (0, 1)])
def test_the_worker_counts_and_warns(partitions: tuple[int, ...], caplog: pytest.LogCaptureFixture) -> None:
    stage = AssembleStage(Settings(), registry=None)

    async def commit(outputs: list[Any], touched: set[int]) -> None:
        return None

    stage.commit = commit  # type: ignore[method-assign]  # no Kafka here: the turn's writes are not under test
    def counted() -> float:
        return obs.REGISTRY.get_sample_value("sluice_sources_split_total", {"stage": "assemble"}) or 0.0

    before = counted()
    batch = [Message(topic="logs.raw", partition=partitions[i % len(partitions)], offset=i, value=_fluent_bit(t),
                     key=None, timestamp=1_700_000_000.0, headers=None, generation_id=0) for i, t in enumerate(TEXTS)]
    with caplog.at_level(logging.WARNING, "streams.workers.assemble"):
        asyncio.run(stage.on_batch(batch))
    split = counted() - before
    warnings = [r.getMessage() for r in caplog.records if "cannot be merged in order" in r.getMessage()]
    if len(partitions) == 1:
        assert split == 0 and warnings == []
    else:
        assert split == 1 and len(warnings) == 1
        assert "/var/log/train/job.log" in warnings[0] and "message_key_field" in warnings[0]
