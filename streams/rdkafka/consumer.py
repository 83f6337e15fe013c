"""Faust's consumer on librdkafka: the driver's side of Faust's ``Consumer`` contract.

The thread and its buffer are :class:`~streams.rdkafka.client.ConsumerClient`. Here they are wired
to what Faust expects of a driver, through the abstract methods of
:class:`faust.transport.consumer.Consumer`:

- ``_getmany`` takes what the buffer holds for the partitions Faust has active (a copy of its set,
  taken at the call). A batched topic's records come as one :class:`~streams.rdkafka.batch.RecordBatch`
  per partition, other topics' records one by one;
- a rebalance is Faust's own sequence: ``app.on_rebalance_start()`` and ``on_partitions_revoked``,
  then the generation and ``on_partitions_assigned`` (librdkafka's first assignment comes with no
  revocation before it; Faust is given an empty one, as aiokafka gives it);
- ``seek_to_committed`` (Faust's recovery, when it hands the stream partitions back) seeks them and
  *holds* them, unfetched, until Faust next calls ``resume_flow()``. In between, Faust empties the
  streams' queues (``flow_control.resume()``); a record fetched after the seek and queued before
  that would be thrown away with the reader already past it (faust-streaming issue #596);
- a record fetched before a seek of its partition and handed out after it is handed out at an
  offset just below the seek's, so that Faust's own read-offset check drops it (a stale batch comes
  empty). Delivered at its own offset, it would move Faust's read offset past records that the seek
  is about to fetch again, and Faust would drop those instead.

Every partition is read ``read_committed`` (the events topics are written in transactions). The
consumer's group metadata for a transactional offset commit is :meth:`Consumer.group_metadata`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from faust.transport import consumer as faust_consumer
from faust.types import TP, ConsumerMessage

from streams.rdkafka.batch import RecordBatch
from streams.rdkafka.client import ASSIGN, OFFSET_BEGINNING, OFFSET_END, ConsumerClient, ConsumerClosed, TopicPart

log = logging.getLogger(__name__)

BROKER_CALL_TIMEOUT_S = 10.0


def consumer_config(transport: Any) -> dict[str, Any]:
    """librdkafka consumer properties from Faust's settings and the transport's own."""
    conf = transport.app.conf
    config: dict[str, Any] = {
        "bootstrap.servers": transport.bootstrap_servers(),
        "group.id": conf.id,
        "client.id": conf.broker_client_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": conf.consumer_auto_offset_reset,
        "isolation.level": "read_committed",
        "max.partition.fetch.bytes": conf.consumer_max_fetch_size,
        "session.timeout.ms": int(conf.broker_session_timeout * 1000),
        "heartbeat.interval.ms": int(conf.broker_heartbeat_interval * 1000),
        "max.poll.interval.ms": int(conf.broker_max_poll_interval * 1000),
        # Range: partitions of topics with as many partitions go to the same member, so a table's
        # changelog partitions go where its source partitions go (Faust's own assignor is aiokafka's).
        "partition.assignment.strategy": "range",
    }
    if conf.consumer_group_instance_id:
        config["group.instance.id"] = conf.consumer_group_instance_id
    return {**config, **transport.client_config}


class Consumer(faust_consumer.Consumer):
    """Faust's consumer over one librdkafka consumer (see the module's text)."""

    consumer_stopped_errors = (ConsumerClosed,)
    #: Makes the librdkafka consumer from its properties: confluent-kafka's ``Consumer`` when None
    #: (a subclass may run the driver on something else, as its tests run it on a fake).
    consumer_factory: Callable[[dict[str, Any]], Any] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._client: ConsumerClient | None = None
        self._ready: asyncio.Event | None = None
        self._revoked_since_assign = False

    # -- lifecycle -----------------------------------------------------------------------------------
    async def on_start(self) -> None:
        await super().on_start()
        self.client.start()

    async def on_stop(self) -> None:
        await super().on_stop()
        if self._client is not None:
            await self.loop.run_in_executor(None, self._client.stop)

    def close(self) -> None:
        if self._client is not None:
            self._client.stop()

    @property
    def client(self) -> ConsumerClient:
        if self._client is None:
            loop = self.loop
            self._ready = asyncio.Event()
            ready = self._ready

            def wakeup() -> None:
                loop.call_soon_threadsafe(ready.set)

            self._client = ConsumerClient(consumer_config(self.transport), on_rebalance=self._rebalance,
                                          wakeup=wakeup, consumer_factory=self.consumer_factory)
        return self._client

    async def _on_client(self, future: concurrent.futures.Future[Any]) -> Any:
        return await asyncio.wrap_future(future, loop=self.loop)

    # -- what the application may ask of the consumer ----------------------------------------------
    def group_metadata(self) -> Any:
        """The consumer group's metadata as of the current assignment (librdkafka's own, for
        ``send_offsets_to_transaction``), or None between assignments. Its generation is the
        assignment's: a turn of a worker that has since lost its partitions is fenced by the broker."""
        client = self.client
        return client.group_metadata if client.member_id else None

    # -- rebalances (librdkafka's callbacks run on the client's thread) ------------------------------
    def _rebalance(self, kind: str, tps: list[TopicPart]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(self._on_rebalance(kind, {TP(t, p) for t, p in tps}), self.loop)

    async def _on_rebalance(self, kind: str, tps: set[TP]) -> None:
        if kind == ASSIGN:
            if not self._revoked_since_assign:
                self.app.on_rebalance_start()
                await self.on_partitions_revoked(set())
            self._revoked_since_assign = False
            generation = self.client.generation
            self.app.consumer_generation_id = generation
            await self.on_partitions_assigned(tps, generation_id=generation)
        else:
            self._revoked_since_assign = True
            self.app.on_rebalance_start()
            await self.on_partitions_revoked(tps)

    # -- Faust's driver contract ---------------------------------------------------------------------
    async def subscribe(self, topics: Iterable[str]) -> None:
        client = self.client
        client.batched_topics = frozenset(getattr(self.transport, "batched", ()))
        await self._on_client(client.call(client.subscribe, sorted(set(topics))))

    async def _getmany(self, active_partitions: set[TP] | None, timeout: float) -> Mapping[TP, list[Any]]:
        client = self.client
        wanted = client.assigned if active_partitions is None else frozenset(
            (tp.topic, tp.partition) for tp in active_partitions)
        client.set_active(wanted)
        ready = self._ready
        if ready is None:  # made with the client, just above
            raise ConsumerClosed("the consumer has no client")
        deadline = self.loop.time() + timeout
        while True:
            batches = client.take(wanted)
            if batches:
                break
            if client.error is not None:
                raise ConsumerClosed(f"the Kafka consumer's thread failed: {client.error!r}")
            left = deadline - self.loop.time()
            if left <= 0:
                return {}
            ready.clear()
            try:
                await asyncio.wait_for(ready.wait(), left)
            except TimeoutError:
                return {}
        batched = client.batched_topics
        records: dict[TP, list[Any]] = {}
        for batch in batches:
            tp = TP(batch.topic, batch.partition)
            if batch.topic in batched:
                records[tp] = [batch]
            else:
                records[tp] = [(batch.epoch, batch.generation, r) for r in batch.records]
        return records

    def _to_message(self, tp: TP, record: Any) -> ConsumerMessage:
        if isinstance(record, RecordBatch):
            stale = self.client.stale_offset(tp.topic, tp.partition, record.epoch)
            if stale is not None:
                empty: Any = RecordBatch(tp.topic, tp.partition, [], -1, record.epoch, record.generation)
                return ConsumerMessage(tp.topic, tp.partition, stale, 0.0, 0, [], None, empty,
                                       None, 0, 0, tp, generation_id=record.generation)
            last = record.records[-1] if record.records else None
            ts = last.timestamp()[1] / 1000 if last is not None else 0.0
            batch: Any = record  # the message's value is the batch itself (BatchSchema hands it over)
            return ConsumerMessage(tp.topic, tp.partition, last.offset() if last is not None else record.end - 1,
                                   ts, 0, [], None, batch, None, 0, 0, tp, generation_id=record.generation)
        epoch, generation, msg = record
        stale = self.client.stale_offset(tp.topic, tp.partition, epoch)
        ts_type, ts_ms = msg.timestamp()
        key, value = msg.key(), msg.value()
        return ConsumerMessage(tp.topic, tp.partition, msg.offset() if stale is None else stale,
                               ts_ms / 1000 if ts_ms else 0.0, ts_type, msg.headers() or [], key, value, None,
                               len(key) if key else 0, len(value) if value else 0, tp, generation_id=generation)

    def _new_topicpartition(self, topic: str, partition: int) -> TP:
        return TP(topic, partition)

    def assignment(self) -> set[TP]:
        return {TP(t, p) for t, p in self.client.assigned}

    async def seek_to_committed(self) -> Mapping[TP, int | None]:  # type: ignore[override]  # perform_seek reads None
        from confluent_kafka import KafkaError, KafkaException, TopicPartition

        client = self.client
        assigned = sorted(client.assigned)
        if not assigned:
            return {}
        committed = await self._on_client(client.call(
            client.consumer.committed, [TopicPartition(t, p) for t, p in assigned], BROKER_CALL_TIMEOUT_S))
        reset = OFFSET_BEGINNING if self.app.conf.consumer_auto_offset_reset == "earliest" else OFFSET_END

        def seek_all() -> None:
            for where in committed:
                if (where.topic, where.partition) in client.assigned:
                    offset = where.offset if where.offset >= 0 else reset
                    try:
                        client.seek(where.topic, where.partition, offset, hold=True)
                    except KafkaException as exc:
                        # librdkafka refuses a seek of a partition a rebalance is taking away (_STATE): the
                        # partition's next owner reads it from its commit, so recovery goes on with the others
                        if exc.args[0].code() != KafkaError._STATE:
                            raise
                        log.warning("seek of %s [%d] to its committed offset %d failed (%s); the partition is "
                                    "being revoked and its next owner reads it from there", where.topic,
                                    where.partition, offset, exc.args[0].str())

        await self._on_client(client.call(seek_all))
        # None where the group has no commit: Faust takes any other number for a committed offset, and
        # librdkafka's -1001 would make it wait for ever for the acked offsets to close the gap to it.
        return {TP(where.topic, where.partition): where.offset if where.offset >= 0 else None for where in committed}

    def resume_flow(self) -> None:
        super().resume_flow()
        if self._client is not None:
            self._client.release()  # Faust has emptied the streams' queues: held partitions may be read

    async def _seek(self, partition: TP, offset: int) -> None:
        client = self.client
        await self._on_client(client.call(client.seek, partition.topic, partition.partition, offset))

    async def seek_wait(self, partitions: Mapping[TP, int]) -> None:
        for tp, offset in partitions.items():
            await self._seek(tp, offset)

    async def position(self, tp: TP) -> int | None:
        from confluent_kafka import TopicPartition

        client = self.client
        (where,) = await self._on_client(client.call(client.consumer.position,
                                                     [TopicPartition(tp.topic, tp.partition)]))
        return int(where.offset) if where.offset >= 0 else None

    def topic_exists(self, topic: str, timeout_s: float = BROKER_CALL_TIMEOUT_S) -> bool:
        """Does the broker know ``topic``? Blocking. Asked through the consumer: a producer's metadata
        request makes a broker that allows it create the topic it asks about."""
        client = self.client
        meta = client.call(client.consumer.list_topics, topic, timeout_s).result(timeout_s + 5)
        found = meta.topics.get(topic)
        return found is not None and found.error is None

    def highwater(self, tp: TP) -> int:
        """The partition's end as the last fetch response gave it (no broker call); -1 if not known yet."""
        return self.client.highwaters.get((tp.topic, tp.partition), -1)

    async def highwaters(self, *partitions: TP) -> Mapping[TP, int]:
        return await self._watermarks(partitions, 1)

    async def earliest_offsets(self, *partitions: TP) -> Mapping[TP, int]:
        return await self._watermarks(partitions, 0)

    async def _watermarks(self, partitions: Iterable[TP], which: int) -> Mapping[TP, int]:
        from confluent_kafka import TopicPartition

        client = self.client
        consumer = client.consumer

        def ask() -> dict[TP, int]:
            return {tp: int(consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition),
                                                           BROKER_CALL_TIMEOUT_S)[which]) for tp in partitions}

        return await self._on_client(client.call(ask))

    async def _commit(self, offsets: Mapping[TP, int]) -> bool:
        from confluent_kafka import KafkaException, TopicPartition

        client = self.client
        tps = [TopicPartition(tp.topic, tp.partition, offset) for tp, offset in offsets.items()]
        try:
            await self._on_client(client.call(lambda: client.consumer.commit(offsets=tps, asynchronous=False)))
        except KafkaException as exc:
            log.warning("committing offsets %s failed (%s); they are committed again later or read again",
                        dict(offsets), exc.args[0])
            return False
        return True

    def topic_partitions(self, topic: str) -> int | None:
        return None

    def key_partition(self, topic: str, key: bytes | None, partition: int | None = None) -> int | None:
        if partition is not None:
            return partition
        return self.app.producer.key_partition(topic, key or b"").partition

    async def create_topic(self, topic: str, partitions: int, replication: int, **kwargs: Any) -> None:
        if self.app.conf.topic_allow_declare:
            await self.transport.create_topic(topic, partitions, replication, **kwargs)  # type: ignore[attr-defined]
        else:
            log.warning("topic %s is not declared by Faust (topic_allow_declare is off): it must exist", topic)
