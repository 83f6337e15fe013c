"""A turn of the assemble stage is never committed while its consumer is between generations.

Kafka accepts a transactional offset commit that carries generation -1 and no member id from anyone
(ClassicGroup.validateOffsetCommit): a consumer holds that before it has joined, and between an expired
session (a broker restart, a worker frozen past the session timeout) and its rejoin; the stage's driver
then has no group metadata to give. A turn committed with it would not be fenced, and the partition's
new owner would emit the same blocks: events twice on the events topic. Such a turn is dropped and read
again from what is committed, as a rolled-back one is (tests/integration/test_unfenced_commit.py shows
the broker taking the unfenced commit).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from tests.unit.test_assemble_turns import Broker, interleaved, stage_with


def test_a_turn_between_generations_is_not_written_and_is_read_again() -> None:
    records = interleaved()
    turn_bytes = 600  # several transactions over the batch
    registry = SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(schema_id=1))

    def run(rejoining_at: int | None) -> tuple[Broker, list[int], list[bytes | None]]:
        broker = Broker()
        stage = stage_with(turn_bytes, registry)
        stage.writer = broker  # type: ignore[assignment]
        stage.load_state = broker.load_state
        calls = {"n": 0}

        def group_metadata() -> str | None:
            calls["n"] += 1
            return None if calls["n"] == rejoining_at else "member-1 of generation 3"

        stage.group_metadata = group_metadata
        seeks: list[int] = []

        async def seek(_partition: int, offset: int) -> None:
            seeks.append(offset)

        stage.seek = seek

        async def go() -> None:
            await stage.on_batch(records)
            if seeks:
                await stage.on_batch([r for r in records if r.offset >= seeks[-1]])

        asyncio.run(go())
        still_open = [o.value["event_id"].encode() for o in stage.states[0].assembler.flush_all()]
        return broker, seeks, still_open

    clean, clean_seeks, clean_open = run(None)
    broker, seeks, still_open = run(rejoining_at=2)
    assert clean_seeks == [] and len(clean.committed) > 3
    assert seeks == [broker.committed[0]]  # the second turn was not written: back to what the first committed
    assert broker.outputs == clean.outputs  # every output once, in the same order
    assert broker.offsets == clean.offsets and still_open == clean_open
