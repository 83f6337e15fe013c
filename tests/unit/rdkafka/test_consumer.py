"""Faust's consumer on the driver, run on a fake librdkafka consumer: what Faust gets from
``_getmany`` and ``_to_message`` around seeks, holds, markers, rebalances and failures, and the
librdkafka properties made from Faust's settings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import faust
import pytest
from confluent_kafka import KafkaError
from fake_librdkafka import FakeLibrdkafka
from faust.types import TP

from streams.rdkafka import RecordBatch, Transport, use_client_config
from streams.rdkafka.consumer import Consumer, ConsumerClosed, consumer_config

T = "logs"
TP0, TP1 = TP(T, 0), TP(T, 1)
WAIT_S = 5.0


class ConsumerOnFake(Consumer):
    consumer_factory = FakeLibrdkafka


async def nothing(*_args: Any, **_kwargs: Any) -> None:
    return None


async def eventually(predicate: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT_S} s waiting for {what}")
        await asyncio.sleep(0.002)


class OnFake:
    def __init__(self, consumer: ConsumerOnFake) -> None:
        self.consumer = consumer
        fake = consumer.client.consumer
        assert isinstance(fake, FakeLibrdkafka)
        self.fake = fake

    async def assign(self, *tps: TP) -> None:
        self.fake.rebalance("assign", [(tp.topic, tp.partition) for tp in tps])
        await eventually(lambda: self.consumer.assignment() == set(tps), f"the assignment of {tps}")
        await eventually(lambda: self.consumer.app.consumer_generation_id == self.consumer.client.generation,
                         "Faust told the assignment's generation")

    async def records(self, tps: set[TP], count: int) -> list[Any]:
        """Call ``_getmany`` until ``count`` records (or batches) came; the messages Faust makes of them."""
        out: list[Any] = []
        deadline = time.monotonic() + WAIT_S
        while len(out) < count:
            assert time.monotonic() < deadline, f"timed out waiting for {count} records of {tps}: {out}"
            got = await self.consumer._getmany(tps, 0.05)
            out.extend(self.consumer._to_message(tp, record) for tp, records in got.items() for record in records)
        return out


@asynccontextmanager
async def on_fake(*batched: str, **settings: Any) -> AsyncIterator[OnFake]:
    app = faust.App("unit-rdkafka", broker="rdkafka://127.0.0.1:1", **settings)
    assert isinstance(app.transport, Transport)
    app.transport.batched.update(batched)
    consumer = ConsumerOnFake(app.transport, callback=nothing, on_partitions_revoked=nothing,
                              on_partitions_assigned=nothing, loop=asyncio.get_running_loop())
    consumer.client.start()
    try:
        await consumer.subscribe([T])
        yield OnFake(consumer)
    finally:
        await asyncio.get_running_loop().run_in_executor(None, consumer.client.stop, WAIT_S)


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(test(), 30)

    asyncio.run(bounded())


def test_a_topic_is_looked_up_through_the_consumers_own_thread() -> None:
    async def test() -> None:
        async with on_fake() as f:
            f.fake.produce(T, 0, b"v0")
            assert await asyncio.to_thread(f.consumer.topic_exists, T)
            assert f.fake.metadata_asked_from == "rdkafka-consumer", "asked by the consumer, never a producer"
            assert not await asyncio.to_thread(f.consumer.topic_exists, "logs.events.nobody")

    run(test)


# -- records as Faust gets them ----------------------------------------------------------------------
def test_records_of_a_plain_topic_come_one_by_one_with_their_fields() -> None:
    async def test() -> None:
        async with on_fake() as f:
            await f.assign(TP0)
            f.fake.produce(T, 0, b"v0", b"v1")
            messages = await f.records({TP0}, 2)
            assert [(m.offset, m.key, m.value) for m in messages] == [(0, b"k0", b"v0"), (1, b"k1", b"v1")]
            assert messages[1].timestamp == pytest.approx(1_700_000_000.001)
            assert {m.generation_id for m in messages} == {f.consumer.client.generation}

    run(test)


def test_records_fetched_before_a_seek_are_handed_out_below_it() -> None:
    async def test() -> None:
        async with on_fake() as f:
            await f.assign(TP0)
            f.fake.produce(T, 0, b"v0", b"v1", b"v2", b"v3")
            f.consumer.client.set_active({(T, 0)})  # as _getmany does: fetched, not yet taken
            await eventually(lambda: f.consumer.client.highwaters.get((T, 0)) == 4, "the records fetched")
            fetched = await f.consumer._getmany({TP0}, WAIT_S)
            await f.consumer.seek(TP0, 2)
            stale = [f.consumer._to_message(tp, r) for tp, records in fetched.items() for r in records]
            assert stale, "records were fetched before the seek"
            # Faust's read-offset check hands a record on only at or above the seek's offset.
            assert all(m.offset < 2 for m in stale), [m.offset for m in stale]
            assert [m.offset for m in await f.records({TP0}, 2)] == [2, 3]

    run(test)


def test_a_batch_fetched_before_a_seek_comes_empty_below_it() -> None:
    async def test() -> None:
        async with on_fake(T) as f:
            await f.assign(TP0)
            f.fake.produce(T, 0, b"v0", b"v1", b"v2")
            f.consumer.client.set_active({(T, 0)})  # as _getmany does: fetched, not yet taken
            await eventually(lambda: f.consumer.client.highwaters.get((T, 0)) == 3, "the records fetched")
            (old,) = (await f.consumer._getmany({TP0}, WAIT_S))[TP0]
            assert isinstance(old, RecordBatch)
            current = f.consumer._to_message(TP0, old)
            assert current.offset == old.records[-1].offset(), "a batch stands at its last record"
            assert current.value is old

            await f.consumer.seek(TP0, 1)
            stale = f.consumer._to_message(TP0, old)
            assert stale.offset < 1, "below the seek: Faust's read-offset check drops it"
            assert isinstance(stale.value, RecordBatch)
            assert stale.value.records == []
            (again,) = await f.records({TP0}, 1)
            assert [r.offset() for r in again.value.records] == [1, 2]

    run(test)


def test_a_marker_only_batch_stands_at_the_marker() -> None:
    async def test() -> None:
        async with on_fake(T) as f:
            await f.assign(TP0)
            await f.consumer.seek(TP0, 0)
            f.fake.mark(T, 0)
            (advance,) = await f.records({TP0}, 1)
            assert advance.value.records == []
            assert advance.offset == 0, "acked, it commits offset 1: past the marker"

    run(test)


# -- recovery holds, offsets -------------------------------------------------------------------------
def test_a_seek_refused_for_a_partition_being_revoked_does_not_stop_recovery() -> None:
    async def test() -> None:
        async with on_fake(consumer_auto_offset_reset="earliest") as f:
            f.fake.committed_offsets[(T, 0)] = 2
            f.fake.committed_offsets[(T, 1)] = 1
            f.fake.produce(T, 1, b"w0", b"w1")
            await f.assign(TP0, TP1)
            f.consumer.stop_flow()
            f.fake.refuse_seek.add((T, 0))
            assert await f.consumer.seek_to_committed() == {TP0: 2, TP1: 1}, "raises nothing"
            assert (T, 1) in f.fake.seeks, "the other partitions are sought"

    run(test)


def test_partitions_sought_to_their_commits_are_held_until_flow_resumes() -> None:
    async def test() -> None:
        async with on_fake(consumer_auto_offset_reset="earliest") as f:
            f.fake.committed_offsets[(T, 0)] = 2  # partition 1 has no commit: read from its beginning
            f.fake.produce(T, 0, b"v0", b"v1", b"v2", b"v3")
            f.fake.produce(T, 1, b"w0")
            await f.assign(TP0, TP1)
            f.consumer.stop_flow()
            assert await f.consumer.seek_to_committed() == {TP0: 2, TP1: None}, "no commit is None to Faust"
            assert await f.consumer._getmany({TP0, TP1}, 0.3) == {}, "held until Faust resumes the flow"
            f.consumer.resume_flow()
            messages = await f.records({TP0, TP1}, 3)
            assert sorted((m.partition, m.offset) for m in messages) == [(0, 2), (0, 3), (1, 0)]
            assert await f.consumer.position(TP0) == 4
            assert await f.consumer.highwaters(TP0, TP1) == {TP0: 4, TP1: 1}
            assert await f.consumer.earliest_offsets(TP0) == {TP0: 0}
            assert f.consumer.highwater(TP0) == 4
            assert await f.consumer._commit({TP0: 4})
            assert f.fake.committed_offsets[(T, 0)] == 4

    run(test)


# -- rebalances and failures -------------------------------------------------------------------------
def test_group_metadata_is_none_between_assignments() -> None:
    async def test() -> None:
        async with on_fake() as f:
            assert f.consumer.group_metadata() is None
            await f.assign(TP0, TP1)
            assert f.consumer.group_metadata() == "group-metadata-of-generation-1"
            f.fake.rebalance("revoke", [(T, 0), (T, 1)])
            await eventually(lambda: not f.consumer.assignment(), "the revocation")
            assert f.consumer.group_metadata() is None
            await f.assign(TP1)
            assert f.consumer.group_metadata() == "group-metadata-of-generation-2"
            assert f.consumer.app.consumer_generation_id == 2

    run(test)


def test_a_fatal_error_makes_getmany_raise() -> None:
    async def test() -> None:
        async with on_fake() as f:
            await f.assign(TP0)
            waiting = asyncio.ensure_future(f.consumer._getmany({TP0}, 60.0))
            await asyncio.sleep(0.05)
            f.fake.fail(KafkaError(KafkaError._FATAL, "fenced by a newer instance", fatal=True))
            with pytest.raises(ConsumerClosed, match="fenced by a newer instance"):
                await asyncio.wait_for(waiting, WAIT_S)
            with pytest.raises(ConsumerClosed):
                await f.consumer.position(TP0)

    run(test)


# -- librdkafka's properties -------------------------------------------------------------------------
def test_consumer_config_maps_faust_settings_and_client_config_overrides_them() -> None:
    app = faust.App("unit-config", broker="rdkafka://kafka-a:9093;kafka-b", broker_session_timeout=45.0,
                    broker_heartbeat_interval=4.5, broker_max_poll_interval=300.0,
                    consumer_max_fetch_size=2_097_152, consumer_auto_offset_reset="latest",
                    broker_client_id="sluice-unit")
    config = consumer_config(app.transport)
    assert config["bootstrap.servers"] == "kafka-a:9093,kafka-b:9092"
    assert config["group.id"] == "unit-config"
    assert config["client.id"] == "sluice-unit"
    assert config["session.timeout.ms"] == 45_000
    assert config["heartbeat.interval.ms"] == 4_500
    assert config["max.poll.interval.ms"] == 300_000
    assert config["max.partition.fetch.bytes"] == 2_097_152
    assert config["auto.offset.reset"] == "latest"
    assert config["isolation.level"] == "read_committed"
    assert config["enable.auto.commit"] is False
    assert "group.instance.id" not in config

    use_client_config(app, {"session.timeout.ms": 10_000, "security.protocol": "SASL_SSL"})
    config = consumer_config(app.transport)
    assert config["session.timeout.ms"] == 10_000, "the transport's client_config has the last word"
    assert config["security.protocol"] == "SASL_SSL"
    assert config["max.poll.interval.ms"] == 300_000


def test_consumer_config_carries_a_static_membership() -> None:
    app = faust.App("unit-config", broker="rdkafka://kafka", consumer_group_instance_id="assemble-3")
    assert consumer_config(app.transport)["group.instance.id"] == "assemble-3"
