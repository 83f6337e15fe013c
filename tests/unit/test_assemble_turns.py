"""A turn of the assemble stage ends early once its records hold ``turn_max_bytes``.

Each part is a transaction of its own: the outputs of its records, and the offset after its last one.
Together the parts give what one turn gives. Kafka is not here: the first test records the stage's
``commit`` calls, the second puts a fake broker behind its real ``commit`` (the writer, the state
topic read back, the seek), rolls back one part in the middle of a batch, and compares what ends up
committed with a run where nothing was rolled back.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from devtools import CORPUS_DIR
from streams.config import AssembleSettings, Settings
from streams.rdkafka import Message
from streams.workers.assemble import AssembleStage

CORPUS = CORPUS_DIR
LINES = (CORPUS / "training" / "bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log").read_bytes()


def lines_of(data: bytes) -> list[bytes]:
    return [ln for ln in data.split(b"\n") if ln]


def stage_with(turn_max_bytes: int, registry: Any = None) -> AssembleStage:
    return AssembleStage(Settings(assemble=AssembleSettings(turn_max_bytes=turn_max_bytes)), registry=registry)


def record(offset: int, key: bytes, line: bytes) -> Any:
    """A record of logs.raw partition 0: one plain-text line (what a Filebeat-style agent sends)."""
    return Message(topic="logs.raw", partition=0, offset=offset, value=line + b"\n", key=key,
                   timestamp=1_700_000_000.0, headers=None, generation_id=0)


def events() -> list[Any]:
    """One line per record, one source."""
    return [record(100 + i, b"node-1/train.log", line) for i, line in enumerate(lines_of(LINES))]


def run(turn_max_bytes: int) -> tuple[list[tuple[list[str], set[int], int]], list[str]]:
    """on_batch over the records: per transaction, its output ids, partitions and the offset it commits;
    then the ids of the blocks still open."""
    stage = stage_with(turn_max_bytes)
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
        size += len(e.value)
        if size >= limit:
            cuts.append(e.offset + 1)
            size = 0
    if size:
        cuts.append(records[-1].offset + 1)
    assert len(cuts) >= 4

    parts, still_open = run(limit)
    assert [offset for _ids, _p, offset in parts] == cuts
    assert all(p == {0} for _ids, p, _o in parts)
    whole, whole_open = run(10 * len(LINES))
    assert len(whole) == 1 and whole[0][2] == records[-1].offset + 1
    # the same outputs, in the same order, whether the blocks closed in one turn or across several
    assert [i for ids, _p, _o in parts for i in ids] + still_open == whole[0][0] + whole_open
    assert len(whole[0][0] + whole_open) > len(cuts)


class Broker:
    """What the transactions committed: outputs in order, the state topic, the group's offsets. Write
    number ``fail_at`` (1-based) is rolled back, as when the broker restarts mid-transaction."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at, self.writes = fail_at, 0
        self.outputs: list[tuple[str, bytes | None, bytes | None]] = []
        self.state: dict[bytes, bytes | None] = {}
        self.offsets: dict[int, int] = {}
        self.committed: list[int] = []  # partition 0's offset after each transaction that went through

    def write(self, messages: list[tuple[str, bytes | None, bytes | None, int]], offsets: dict[tuple[str, int], int],
              _metadata: bytes | None) -> None:
        from streams.workers.transactions import TransactionAborted

        self.writes += 1
        if self.writes == self.fail_at:
            raise TransactionAborted("rolled back (test)")
        for topic, key, value, _partition in messages:
            if topic.endswith("-state"):
                self.state[key or b""] = value
            else:
                self.outputs.append((topic, key, value))
        self.offsets.update({p: o for (_t, p), o in offsets.items()})
        self.committed.append(self.offsets[0])

    def load_state(self, partition: int) -> tuple[dict[bytes, bytes | None], int | None]:
        mine = {k: v for k, v in self.state.items() if k.startswith(f"{partition}\x00".encode())}
        return mine, self.offsets.get(partition)


def interleaved() -> list[Any]:
    """Two real logs, one line per record, their records interleaved on one partition."""
    other = (CORPUS / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log").read_bytes()
    a, b = lines_of(LINES), lines_of(other)
    pairs = [(b"node-1/a.log", ln) for ln in a]
    for i, ln in enumerate(b):
        pairs.insert(2 * i + 1, (b"node-2/b.log", ln))
    return [record(100 + i, key, ln) for i, (key, ln) in enumerate(pairs)]


def run_against(broker: Broker, turn_max_bytes: int, records: list[Any]) -> tuple[AssembleStage, list[int]]:
    stage = stage_with(turn_max_bytes, SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(schema_id=1)))
    stage.writer = broker  # type: ignore[assignment]
    stage.load_state = broker.load_state
    stage.group_metadata = lambda: "member-1 of generation 1"
    seeks: list[int] = []

    async def seek(_partition: int, offset: int) -> None:
        seeks.append(offset)

    stage.seek = seek

    async def go() -> None:
        await stage.on_batch(records)
        if seeks:  # the consumer reads again from where it was sent back to
            await stage.on_batch([r for r in records if r.offset >= seeks[-1]])

    asyncio.run(go())
    return stage, seeks


def test_a_part_rolled_back_mid_batch_is_read_again_with_nothing_lost_or_doubled() -> None:
    records = interleaved()
    clean, rolled = Broker(), Broker(fail_at=2)
    clean_stage, clean_seeks = run_against(clean, 10 * sum(len(r.value) for r in records), records)
    stage, seeks = run_against(rolled, 600, records)

    assert clean_seeks == [] and clean.writes == 1
    assert seeks == [rolled.committed[0]]  # sent back once, to what the first part committed
    assert rolled.writes > 3  # parts before, the rolled-back one, and the parts read again
    assert rolled.outputs == clean.outputs  # the same outputs, byte for byte, in the same order: none twice
    assert rolled.offsets == clean.offsets == {0: records[-1].offset + 1}
    still_open = [o.value["event_id"] for o in stage.states[0].assembler.flush_all()]
    assert still_open == [o.value["event_id"] for o in clean_stage.states[0].assembler.flush_all()]
