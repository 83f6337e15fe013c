"""The assemble stage as a Faust agent over logs.raw.

One :class:`~streams.assemble.pipeline.Assembler` per raw partition. Records are taken in small
batches with acks disabled (``noack_take``); outputs are sent and their delivery awaited, and only
then are the raw records acknowledged, and only those below the oldest line still held in an open
multiline block (``Assembler.committable_offset``). After a kill -9 or a rebalance the next owner
re-reads from there and rebuilds the open blocks: no line is lost and no block is split. Blocks it
re-emits carry the same deterministic event ids, so the stores overwrite instead of duplicating.

An open block is emitted once its source has been quiet for ``idle_timeout_ms``: a timer advances
each partition's stream time by the wall time passed since its last record. That is what emits the
last traceback of a job that died (no line ever follows it).
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import faust

from streams import observability as obs
from streams.assemble.outputs import OutputEncoder, registry_schema_lookup
from streams.assemble.pipeline import Assembler, Output, RawRecord
from streams.assemble.route import ProjectRouter
from streams.clients import faust_broker_credentials
from streams.config import Settings
from streams.errors import SluiceError

log = logging.getLogger(__name__)


class PartitionState:
    """An Assembler and the raw events it has not acknowledged yet, for one partition."""

    def __init__(self, assembler: Assembler) -> None:
        self.assembler = assembler
        self.pending: list[Any] = []  # faust events, in offset order
        self.newest_ts_ms = 0  # stream time: the newest record timestamp seen
        self.last_seen = time.monotonic()  # wall time of the last record, for the idle timer
        self.next_offset = -1  # the offset after the last record read


class AssembleStage:
    """Per-partition assemblers, delivery of their outputs, and acks below the open blocks."""

    def __init__(self, settings: Settings, registry: Any) -> None:
        from confluent_kafka import Producer

        self.settings = settings
        self.conf = settings.assemble
        # Outputs go through librdkafka, not Faust's producer: about one output per input line, and
        # per-message cost in the asyncio producer was the stage's bottleneck (tests/perf/assemble_bench.py).
        self.producer = Producer({
            **settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 5,
            "compression.type": "zstd", "message.max.bytes": 16 * 1024 * 1024,
        })
        self._delivery_errors: list[str] = []
        self.encoder = OutputEncoder(settings, registry)
        self.lookup = registry_schema_lookup(registry)
        self.router = ProjectRouter(settings.routing.default_project, topic_prefix=settings.topics.events_prefix,
                                    known=settings.projects())
        self.states: dict[int, PartitionState] = {}
        # partition -> the broker's end offset as last fetched (set by build_app; None in unit use)
        self.highwater: Any = None
        self.lock = asyncio.Lock()  # the agent and the idle timer both touch the assemblers

    def state_of(self, partition: int) -> PartitionState:
        if partition not in self.states:
            self.states[partition] = PartitionState(Assembler(
                self.lookup, self.router, max_lines=self.conf.max_lines, max_bytes=self.conf.max_bytes,
                idle_timeout_ms=self.conf.idle_timeout_ms,
            ))
        return self.states[partition]

    def _on_delivery(self, err: Any, _msg: Any) -> None:
        if err is not None:
            self._delivery_errors.append(str(err))

    async def deliver(self, outputs: list[Output]) -> None:
        """Send, then wait until Kafka has every output: only then may raw offsets be acked."""
        if not outputs:
            return
        produce = self.producer.produce
        for out in outputs:
            topic, key, value = self.encoder.encode(out)
            while True:
                try:
                    produce(topic, value, key, on_delivery=self._on_delivery)
                    break
                except BufferError:  # librdkafka's queue is full: let it drain, then go on
                    await asyncio.to_thread(self.producer.poll, 0.1)
        while await asyncio.to_thread(self.producer.flush, 5.0):
            log.warning("outputs not yet acknowledged by Kafka; raw offsets stay uncommitted")
        if self._delivery_errors:
            errors, self._delivery_errors = self._delivery_errors, []
            # Crash rather than ack: the restarted worker re-reads these records (at-least-once).
            raise SluiceError(f"delivering assemble outputs failed: {errors[:3]}")

    @staticmethod
    def ack_below(state: PartitionState) -> None:
        limit = state.assembler.committable_offset()
        if limit is None:
            return
        keep = []
        for event in state.pending:
            if event.message.offset < limit:
                event.ack()
            else:
                keep.append(event)
        state.pending = keep

    def _observe(self, outputs: list[Output]) -> None:
        for kind, n in Counter(o.kind for o in outputs).items():
            obs.OUTPUTS.labels("assemble", kind).inc(n)
        for o in outputs:
            if o.kind == "dead_letter":
                obs.DEAD_LETTERS.labels("assemble", o.value["error_type"]).inc()
        for partition, state in self.states.items():
            obs.OPEN_BLOCKS.labels(str(partition)).set(state.assembler.merger.open_count())

    async def on_batch(self, events: list[Any]) -> None:
        obs.mark_ready()
        obs.RECORDS_IN.labels("assemble", self.settings.topics.raw).inc(len(events))
        async with self.lock:
            outputs: list[Output] = []
            touched: set[int] = set()
            for event in events:
                msg = event.message
                state = self.state_of(msg.partition)
                ts_ms = int((msg.timestamp or 0) * 1000)
                record = RawRecord(msg.topic, msg.partition, msg.offset, msg.value, msg.key, ts_ms)
                outputs.extend(state.assembler.feed(record))
                state.pending.append(event)
                state.newest_ts_ms = max(state.newest_ts_ms, ts_ms)
                state.last_seen = time.monotonic()
                state.next_offset = msg.offset + 1
                touched.add(msg.partition)
            for partition in touched:
                state = self.states[partition]
                outputs.extend(state.assembler.flush_idle(state.newest_ts_ms))
            await self.deliver(outputs)
            self._observe(outputs)
            for partition in touched:
                self.ack_below(self.states[partition])

    async def on_idle_tick(self) -> None:
        async with self.lock:
            outputs: list[Output] = []
            now = time.monotonic()
            for partition, state in self.states.items():
                quiet_ms = int((now - state.last_seen) * 1000)
                # Quiet means quiet *and caught up*: while records of the partition wait in Kafka (a
                # backlog, a broker restart, a rebalance) the rest of an open block may be among them,
                # and flushing it now would split it (the fault suite caught this).
                if (quiet_ms >= self.conf.idle_timeout_ms and state.assembler.oldest_open_offset() is not None
                        and self.caught_up(partition, state)):
                    outputs.extend(state.assembler.flush_idle(state.newest_ts_ms + quiet_ms))
            if outputs:
                await self.deliver(outputs)
                self._observe(outputs)
                for state in self.states.values():
                    self.ack_below(state)

    def caught_up(self, partition: int, state: PartitionState) -> bool:
        """Has this worker read everything the broker last said the partition holds?"""
        if self.highwater is None:
            return True
        try:
            high = self.highwater(partition)
        except Exception:  # noqa: BLE001 - no fetch answer yet: not known to be caught up
            return False
        return high is not None and state.next_offset >= high

    async def on_revoked(self, partitions: set[Any]) -> None:
        # The new owner re-reads from the committed offset and rebuilds these partitions' blocks.
        async with self.lock:
            for tp in partitions:
                if tp.topic == self.settings.topics.raw:
                    self.states.pop(tp.partition, None)


def build_app(settings: Settings) -> tuple[faust.App, AssembleStage]:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    conf = settings.assemble
    # Faust writes a data directory even with in-memory stores; not into the working directory.
    datadir = Path(tempfile.gettempdir()) / "sluice-faust" / conf.app_id
    datadir.parent.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        conf.app_id,
        broker=f"kafka://{settings.kafka.bootstrap_servers}",
        broker_credentials=faust_broker_credentials(settings.kafka),  # TLS/SASL as in kafka.client_config()
        store="memory://",
        datadir=str(datadir),
        topic_allow_declare=False,  # topics come from `sluice topics create`, with their retention
        topic_disable_leader=True,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=1.0,
        # Records held by open multiline blocks are never acked before a stop; waiting for them would
        # hang SIGTERM until the orchestrator kills the worker. Unacked records are re-read by the next
        # owner (the committed offset stays below them), which is the design.
        stream_wait_empty=False,
        web_enabled=False,
    )
    raw = app.topic(settings.topics.raw, key_serializer="raw", value_serializer="raw")
    stage = AssembleStage(settings, SchemaRegistryClient({"url": settings.registry.url}))

    def highwater(partition: int) -> int | None:
        from faust.types import TP

        value = app.consumer.highwater(TP(settings.topics.raw, partition))
        return None if value is None else int(value)

    stage.highwater = highwater

    @app.agent(raw)
    async def assemble(stream: Any) -> None:
        async for events in stream.noack_take(conf.take_max, within=conf.take_within_s):
            await stage.on_batch(events)

    @app.timer(interval=max(0.2, conf.idle_timeout_ms / 5000))
    async def flush_idle() -> None:
        await stage.on_idle_tick()

    async def on_revoked(_sender: Any, revoked: set[Any], **_kwargs: Any) -> None:
        await stage.on_revoked(revoked)

    app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]
    obs.attach_to_faust(app, settings.observability.port, settings.observability.host)
    return app, stage


def run_assemble_worker(settings: Settings, loglevel: str = "info") -> None:
    """Blocking: runs until SIGTERM/SIGINT (Faust's own worker handles the signals)."""
    from faust.worker import Worker

    app, _stage = build_app(settings)
    Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False).execute_from_commandline()
