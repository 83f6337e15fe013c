"""A turn of the assemble stage ends early once its records hold ``turn_max_bytes``.

Each part is a transaction of its own: the outputs of its records, and the offset after its last one.
Together the parts give what one turn gives. The transaction itself (``commit``, Kafka) is recorded
here, not run: what is tested is how ``on_batch`` cuts a batch.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from streams.config import AssembleSettings, Settings
from streams.workers.assemble import AssembleStage

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
LINES = (CORPUS / "training" / "bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log").read_bytes()


def events() -> list[Any]:
    """One plain-text line per record, one source, one partition (what a Filebeat-style agent sends)."""
    return [SimpleNamespace(message=SimpleNamespace(topic="logs.raw", partition=0, offset=100 + i, value=line + b"\n",
                                                    key=b"node-1/train.log", timestamp=1_700_000_000.0))
            for i, line in enumerate(LINES.split(b"\n")) if line]


def run(turn_max_bytes: int) -> tuple[list[tuple[list[str], set[int], int]], list[str]]:
    """on_batch over the records: per transaction, its output ids, partitions and the offset it commits;
    then the ids of the blocks still open."""
    settings = Settings(assemble=AssembleSettings(turn_max_bytes=turn_max_bytes))
    stage = AssembleStage(settings, registry=None)
    commits: list[tuple[list[str], set[int], int]] = []

    async def commit(outputs: list[Any], partitions: set[int]) -> None:
        if not outputs and not partitions:
            return  # the real one writes nothing then either
        ids = [o.value.get("event_id") or o.value.get("error") for o in outputs]
        commits.append((ids, set(partitions), stage.states[0].next_offset))

    stage.commit = commit  # type: ignore[method-assign]

    asyncio.run(stage.on_batch(events()))
    return commits, [o.value["event_id"] for o in stage.states[0].assembler.flush_all()]


def test_a_turn_is_cut_where_its_records_reach_the_byte_limit() -> None:
    records = events()
    limit = 600
    cuts, size = [], 0  # the offset after each record that brings its part to the limit
    for e in records:
        size += len(e.message.value)
        if size >= limit:
            cuts.append(e.message.offset + 1)
            size = 0
    if size:
        cuts.append(records[-1].message.offset + 1)
    assert len(cuts) >= 4

    parts, still_open = run(limit)
    assert [offset for _ids, _p, offset in parts] == cuts
    assert all(p == {0} for _ids, p, _o in parts)
    whole, whole_open = run(10 * len(LINES))
    assert len(whole) == 1 and whole[0][2] == records[-1].message.offset + 1
    # the same outputs, in the same order, whether the blocks closed in one turn or across several
    assert [i for ids, _p, _o in parts for i in ids] + still_open == whole[0][0] + whole_open
    assert len(whole[0][0] + whole_open) > len(cuts)
