"""The assemble stage as a Faust agent over logs.raw: exactly once, with its state in Kafka.

One :class:`~streams.assemble.pipeline.Assembler` per raw partition. Records are taken in small
batches; each turn writes, in one Kafka transaction (:mod:`streams.workers.transactions`):

- its outputs (events, metric points, dead letters);
- the state of every source the turn touched (open multiline blocks, a held partial line) to the
  compacted state topic (:mod:`streams.assemble.state`), in the raw record's partition;
- the raw offsets it has read, committed for the consumer group.

The sinks and the state restore read ``read_committed``: a turn is seen whole or not at all. A worker
that takes over a partition (start, kill -9 of the previous owner, rebalance) first reads the
partition's state back, then reads logs.raw from the committed offset: blocks open at the last
committed turn carry on, nothing is emitted twice, no block is cut where it would not have been.
Faust acks nothing on this topic (``acks=False``): the transactions are the only committer.

Records fetched in an earlier consumer generation (before a rebalance, delivered after it) are
dropped. A transaction the broker rolls back (a broker restart, a fenced generation) makes the
worker take its partitions over again from what is committed.

An open block is emitted once its source has been quiet for ``idle_timeout_ms``: a timer advances
each partition's stream time by the wall time passed since its last record. That is what emits the
last traceback of a job that died (no line ever follows it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import faust

from streams import observability as obs
from streams.assemble.metadata import SourceMetadata
from streams.assemble.outputs import OutputEncoder, registry_schema_lookup
from streams.assemble.pipeline import Assembler, Output, RawRecord, record_time
from streams.assemble.redact import redactor_from
from streams.assemble.route import ProjectRouter
from streams.assemble.spread import SourcePartitions
from streams.assemble.state import fitting_state, forget_source, restore_source, sid_of_key, state_key
from streams.assemble.trust import LabelTrust
from streams.config import Settings
from streams.errors import DependencyFailure, SluiceError
from streams.kafka_read import read_to_end
from streams.rdkafka import batch_topic, use_client_config
from streams.rdkafka.consumer import Consumer as RdConsumer
from streams.redrive_marks import carry_marks, marks_of
from streams.registry import schema_ids_ready, until_answered
from streams.topics import ensure_assemble_state_topic, state_max_message_bytes
from streams.workers.routes import RouteGuard
from streams.workers.transactions import TransactionAborted, TransactionalWriter

log = logging.getLogger(__name__)

# Room left in a message for the key, the wire-format header and the record's own framing (an event id
# is a few hundred bytes at most; a dead letter's key is its source's).
OUTPUT_FRAMING_BYTES = 16 * 1024
# The same room in a state record, whose key (partition and source id) is counted apart.
STATE_FRAMING_BYTES = 1024
MAX_UNROUTED_LABELS = 100
KIND_WORDS = {"event": "events", "metric": "metric points", "dead_letter": "dead letters"}


registry_wait = obs.registry_waits("assemble")


def warn_fold(wanted: str, used: str) -> None:
    log.warning("assemble: project %r is not in the routing table (routing.projects): its events go to project "
                "%r (label kept; counted in sluice_unrouted_events_total); add it with `sluice project add %s`",
                wanted, used, wanted)


class PartitionState:
    """An Assembler and where its partition stands: read, committed, and (after a rewind) awaited."""

    def __init__(self, assembler: Assembler, expect: int | None = None, strict: bool = False) -> None:
        self.assembler = assembler
        self.newest_ts_ms = 0  # stream time: the newest record timestamp seen
        self.last_seen = time.monotonic()  # wall time of the last record, for the idle timer
        self.next_offset = -1  # the offset after the last record read
        self.committed: int | None = None  # raw offset committed by this worker's last transaction
        # Where reading resumes (the committed offset). After a rewind (``strict``) records are skipped until
        # this very offset comes again: the ones after it were fetched before the seek. After a take-over
        # the first record at or past it is taken: retention may have deleted the committed offset itself.
        self.expect = expect
        self.strict = strict

    def admits(self, offset: int) -> bool:
        """Feed this record? Not if it was fed already, nor (after a rewind) before the rewind point."""
        if self.expect is not None:
            if offset < self.expect or (self.strict and offset != self.expect):
                return False  # before the committed offset, or fetched before the seek (comes again in order)
            self.expect = None
        elif offset < self.next_offset:
            return False  # re-delivered after a seek: already in the assembler
        return True


class AssembleStage:
    """Per-partition assemblers, and one transaction per turn for their outputs and offsets."""

    def __init__(self, settings: Settings, registry: Any,
                 encode: Callable[[Output], bytes] | None = None) -> None:
        self.settings = settings
        self.conf = settings.assemble
        # Outputs go through librdkafka, not Faust's producer: about one output per input line, and
        # per-message cost in the asyncio producer was the stage's bottleneck (tests/perf/assemble_bench.py).
        txid = self.conf.transactional_id or f"{self.conf.app_id}-{socket.gethostname()}-{os.getpid()}"
        # The same limit as the state topic's: its records are the largest this producer writes. Events,
        # metric points and dead letters are kept under kafka.max_message_bytes by the encoder.
        client = {**settings.kafka.client_config(), "message.max.bytes": state_max_message_bytes(settings)}
        writer = TransactionalWriter(client, txid, self.conf.transaction_timeout_ms,
                                     on_wedged=obs.PRODUCER_CALLS_WEDGED.labels("assemble").inc)
        obs.PRODUCERS_ABANDONED.labels("assemble").set_function(lambda: writer.abandoned)
        self.writer = writer
        self.encoder = OutputEncoder(settings, registry)
        # Each output's Avro body is written inside the Assembler's guarded step: an output that cannot
        # be encoded is its block's dead letter, not an exception that ends the turn.
        self.encode = encode or self.encoder.body
        self.lookup = registry_schema_lookup(registry, logical_types=False, url=settings.registry.url)
        self._encoder_ready = False
        self.metadata = SourceMetadata(settings.routing.metadata.keys())
        self.limits = self.conf.fields.limits()
        routing = settings.routing
        self.trust = LabelTrust(routing.claims, topic=settings.topics.raw, trust_all=routing.trust_all_labels,
                                known=settings.projects())
        self.router = ProjectRouter(routing.default_project, topic_prefix=settings.topics.events_prefix,
                                    known=settings.projects(), project_keys=self.metadata.project_keys(),
                                    trust=self.trust,
                                    on_fold=warn_fold)
        self.redactor = redactor_from(settings.redaction)
        # Set by build_app to a metadata lookup; None (unit use): every topic exists.
        self.routes = RouteGuard(settings, self.encoder, registry)
        self._unrouted_labels: set[str] = set()
        self.summary = obs.PeriodicSummary("assemble", settings.observability.summary_interval_s)
        self._lag_at = float("-inf")
        self.states: dict[int, PartitionState] = {}
        self.spread = SourcePartitions()  # sources seen on more than one raw partition
        # Set by build_app (None in unit use): the broker's end offset of a partition as last fetched;
        # the current generation; a seek of the raw consumer.
        self.highwater: Callable[[int], Awaitable[int | None]] | None = None
        # The consumer group's metadata for a transactional offset commit (librdkafka's, of the current
        # assignment), or None while the consumer is between assignments.
        self.group_metadata: Callable[[], Any] | None = None
        self.generation: Callable[[], int] | None = None
        self.seek: Callable[[int, int], Awaitable[None]] | None = None
        # (blocking) a partition's committed state entries {key: value or None} and committed raw offset
        self.load_state: Callable[[int], tuple[dict[bytes, bytes | None], int | None]] | None = None
        self.state_topic = self.conf.state_topic_name()
        self.state_limit = state_max_message_bytes(settings)
        self.assigned: set[int] | None = None  # raw partitions this worker owns (None: not tracked)
        self.internal_seen: dict[tuple[str, str], int] = {}  # internal errors by (step, exception), for the log
        self.lock = asyncio.Lock()  # the agent and the idle timer both touch the assemblers

    def _assembler(self, partition: int) -> Assembler:
        return Assembler(self.lookup, self.router, redactor=self.redactor, topic=self.settings.topics.raw,
                         partition=partition, max_lines=self.conf.max_lines, max_bytes=self.conf.max_bytes,
                         idle_timeout_ms=self.conf.idle_timeout_ms, limits=self.limits, metadata=self.metadata,
                         on_new_source=self.new_source, encode=self.encode, engine=self.conf.engine,
                         max_output_bytes=self.settings.kafka.max_message_bytes - OUTPUT_FRAMING_BYTES,
                         max_record_lines=self.conf.max_record_lines)

    def new_source(self, sid: str, partition: int) -> None:
        """Count and warn (once per source) about a source that a second raw partition brings."""
        if self.spread.observe(sid, partition):
            obs.SOURCES_SPLIT.labels("assemble").inc()
            log.warning("%s", self.spread.message(sid, partition, self.settings.topics.raw))

    def state_of(self, partition: int) -> PartitionState:
        if partition not in self.states:
            self.states[partition] = PartitionState(self._assembler(partition))
        return self.states[partition]

    def is_current(self, message: Any) -> bool:
        """Fetched in this consumer generation, for a partition this worker still owns?"""
        if self.assigned is not None and message.partition not in self.assigned:
            return False
        gen = getattr(message, "generation_id", None)
        return self.generation is None or gen is None or gen == self.generation()

    async def commit(self, outputs: list[Output], partitions: set[int]) -> None:
        """One transaction: ``outputs``, the partitions' changed source states and read offsets."""
        raw = self.settings.topics.raw
        outputs, states = self._states(outputs, partitions)
        outputs, encoded = self.routes.encode_all(outputs)
        messages: list[tuple[str, bytes | None, bytes | None, int]] = [(*e, -1) for e in encoded]
        messages += states
        offsets: dict[tuple[str, int], int] = {}
        for p in sorted(partitions):
            state = self.states.get(p)
            if state is None:
                continue
            # Always the group's offset, even unchanged (an idle flush): the broker then checks this
            # worker's generation on every turn, and a worker that has lost the partition (its turn
            # racing a rebalance) is fenced instead of committing blocks the new owner restores too.
            position = state.next_offset if state.next_offset >= 0 else state.committed
            if position is not None:
                offsets[(raw, p)] = position
        if self.group_metadata is None:
            offsets = {}  # unit use: no consumer group to commit for
        if not messages and not offsets:
            return
        metadata = None
        if offsets and self.group_metadata is not None:
            metadata = self.group_metadata()
            if metadata is None:
                await self._not_a_member(partitions)
                return
        try:
            await asyncio.to_thread(self.writer.write, messages, offsets, metadata)
        except TransactionAborted as exc:
            obs.HEALTH.store("kafka", str(exc))
            log.warning("%s; taking partitions %s of %s over again from what is committed",
                        exc, sorted(partitions), raw)
            obs.TRANSACTIONS_ABORTED.labels("assemble").inc()
            for p in partitions:
                self.states.pop(p, None)
            await self.take_over(partitions, rewind=True)
            return
        obs.HEALTH.store("kafka", None)
        for (_t, p), offset in offsets.items():
            self.states[p].committed = offset
        self._observe(outputs)

    def _states(self, outputs: list[Output], partitions: set[int]) -> tuple[
            list[Output], list[tuple[str, bytes | None, bytes | None, int]]]:
        """The state records of the sources the turn changed, each within the state topic's record limit,
        and the turn's outputs with what a source too large to save emitted to get there."""
        states: list[tuple[str, bytes | None, bytes | None, int]] = []
        for p in sorted(partitions):
            state = self.states.get(p)
            if state is None:
                continue
            asm = state.assembler
            for sid in sorted(asm.take_dirty()):
                key = state_key(p, sid)
                value, flushed = fitting_state(asm, sid, self.state_limit - len(key) - STATE_FRAMING_BYTES)
                if flushed:
                    obs.SOURCES_FLUSHED.labels("assemble").inc()
                    log.warning("the saved state of source %r (%s [%d]) would be over the state topic's %d-byte "
                                "record limit: %d events were emitted from its open blocks and partial line as they "
                                "stood (a multiline event may be cut there). A source writing under very many "
                                "prefixes or with very large labels does this; give each writer a source of its "
                                "own, or raise kafka.max_message_bytes",
                                sid[:200], self.settings.topics.raw, p, self.state_limit, len(flushed))
                    outputs = [*outputs, *flushed]
                states.append((self.state_topic, key, value, p))
            asm.take_dirty()  # (the sources flushed above: their state is the one just taken)
        return outputs, states


    async def _not_a_member(self, partitions: set[int]) -> None:
        """The consumer is between generations (its session expired: a broker restart, a worker frozen
        past the session timeout; it is rejoining). Kafka accepts a transactional offset commit that
        carries no generation and no member id from anyone, without checking who owns the partition
        (ClassicGroup.validateOffsetCommit), so this turn would not be fenced while the partition's new
        owner restores the same committed state and emits the same blocks: the soak saw events
        emitted twice so. Nothing is written; the partitions are taken over again from what is
        committed, and the rebalance that follows the rejoin settles who owns them."""
        log.warning("not a member of group %s right now (rejoining); the turn of %s [%s] is dropped and re-read "
                    "from what is committed", self.conf.app_id, self.settings.topics.raw, sorted(partitions))
        obs.TRANSACTIONS_ABORTED.labels("assemble").inc()
        for p in partitions:
            self.states.pop(p, None)
        await self.take_over(partitions, rewind=True)

    async def take_over(self, partitions: set[int], rewind: bool = False) -> None:
        """Restore the partitions' committed state and read logs.raw from their committed offsets."""
        for p in sorted(partitions):
            if p in self.states or (self.assigned is not None and p not in self.assigned):
                continue
            asm = self._assembler(p)
            committed = None
            if self.load_state is not None:
                entries, committed = await asyncio.to_thread(self.load_state, p)
                for key, value in entries.items():
                    if value is None:
                        forget_source(asm, sid_of_key(key))
                    else:
                        restore_source(asm, value)
                asm.take_dirty()
            state = self.states[p] = PartitionState(asm, expect=committed, strict=rewind)
            state.committed = committed
            # Stream time restarts from the restored blocks' newest line: from 0, the idle timer's
            # "stream time + quiet time" would never reach them (the fault suite lost 12 blocks so).
            state.newest_ts_ms = asm.newest_ts()
            if committed is not None and self.seek is not None:
                try:
                    await self.seek(p, committed)
                except Exception as exc:  # noqa: BLE001 - revoked meanwhile: the next owner takes it over
                    log.warning("seek of %s [%d] to %d failed (%s); the partition's next owner reads it",
                                self.settings.topics.raw, p, committed, exc)
            log.info("took over %s [%d]: %d open blocks restored, reading from offset %s",
                     self.settings.topics.raw, p, asm.merger.open_count(), committed)

    async def _report_lag(self) -> None:
        """Records behind per partition, and the stage's lag in seconds; with the summary line, when due."""
        if self.summary.clock() - self._lag_at < 5.0 or self.highwater is None:
            return
        self._lag_at = self.summary.clock()
        behind_s = 0.0
        total = 0
        for partition, state in list(self.states.items()):
            if self.assigned is not None and partition not in self.assigned:
                continue
            try:
                high = await self.highwater(partition)
            except Exception:  # noqa: BLE001, S112 - no answer this time: reported at the next tick
                continue
            start = state.expect if state.expect is not None else state.next_offset
            if high is None or start < 0:
                continue
            lag = max(0, high - start)
            total += lag
            obs.LAG.labels("assemble", self.settings.topics.raw, str(partition)).set(lag)
            if lag and state.newest_ts_ms:
                behind_s = max(behind_s, time.time() - state.newest_ts_ms / 1000)
        obs.LAG_SECONDS.labels("assemble").set(behind_s)
        self.summary.maybe_log(f"lag {total} records ({behind_s:.0f} s)")

    def _observe(self, outputs: list[Output]) -> None:
        for project, n in self.router.take_folded().items():
            # Label values are project names a node sent: bounded, so a runaway labeller cannot flood Prometheus.
            full = project not in self._unrouted_labels and len(self._unrouted_labels) >= MAX_UNROUTED_LABELS
            label = "(other)" if full else project
            self._unrouted_labels.add(label)
            obs.UNROUTED.labels(label).inc(n)
        for project, n in self.trust.take_refused().items():
            obs.PROJECT_CLAIMS_REFUSED.labels(project).inc(n)
        for kind, n in Counter(o.kind for o in outputs).items():
            obs.OUTPUTS.labels("assemble", kind).inc(n)
            self.summary.add(f"{KIND_WORDS.get(kind, kind)} written", n)
        for o in outputs:
            if o.kind == "dead_letter":
                letter = o.value
                obs.DEAD_LETTERS.labels("assemble", letter["error_type"]).inc()
                if letter["error_type"] == "internal":
                    headers = letter["headers"]
                    cause = (headers.get("step", ""), headers.get("exception", ""))
                    obs.INTERNAL_ERRORS.labels("assemble", *cause).inc()
                    seen = self.internal_seen[cause] = self.internal_seen.get(cause, 0) + 1
                    if seen <= 10 or seen % 1000 == 0:  # a storm of one bug: the counter has the rate
                        log.error("%s [%s] (%d so far of this kind)", letter["error"], headers.get("traceback", ""),
                                  seen)
        for partition, state in self.states.items():
            merger = state.assembler.merger
            obs.OPEN_BLOCKS.labels(str(partition)).set(merger.open_count())
            if merger.evicted:
                obs.BLOCKS_EVICTED.labels("assemble").inc(merger.evicted)
                log.warning("%d open blocks of %s [%d] emitted early: their source held %d open blocks, one per "
                            "stream prefix (a multiline event may be cut there); a source writing under that many "
                            "prefixes is one file or stream shared by that many writers", merger.evicted,
                            self.settings.topics.raw, partition, merger.max_open_per_source)
                merger.evicted = 0

    async def encoder_ready(self) -> None:
        """The output schema ids looked up once, waiting with backoff while the registry does not answer.
        The idle timer needs them too: a worker restarted during a registry outage flushes the open
        blocks it restored before any record has come to look them up."""
        if self._encoder_ready:
            return
        try:
            await until_answered(self.encoder.prepare, "output schema ids", on_wait=registry_wait)
        except DependencyFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - a contract not registered: the first commit says so loudly
            log.warning("looking up the output schema ids failed: %s", exc)
        self._encoder_ready = True

    async def schemas_ready(self, messages: list[Any]) -> None:
        """Look up, before the turn, every schema it needs, waiting with backoff while the registry does
        not answer (outside the lock: a rebalance may go on meanwhile). A good record is then never
        dead-lettered because the registry was down, and no turn stops halfway through its records.
        An id the registry does not know is left to the decoder, which dead-letters its record."""
        await self.encoder_ready()
        await schema_ids_ready(self.lookup, (m.value for m in messages), on_wait=registry_wait)

    async def on_batches(self, batches: list[Any]) -> None:
        """A turn over what the driver fetched of logs.raw (:class:`~streams.rdkafka.RecordBatch`, one per
        partition). A batch without records says its partition holds nothing more than transaction
        markers up to its ``end``: the partition is read up to there."""
        messages: list[Any] = []
        ends: dict[int, tuple[int, int]] = {}
        for batch in batches:
            if batch.records:
                messages.extend(batch.messages())
            elif batch.end >= 0:
                ends[batch.partition] = (batch.end, batch.generation)
        await self.on_batch(messages, ends)

    async def on_batch(self, messages: list[Any], ends: dict[int, tuple[int, int]] | None = None) -> None:
        """Feed ``messages`` (a record's topic, partition, offset, key, value, timestamp in seconds,
        headers, generation_id), one transaction per ``take_max`` records or ``turn_max_bytes`` bytes."""
        obs.HEALTH.turned()
        if messages:
            obs.RECORDS_IN.labels("assemble", self.settings.topics.raw).inc(len(messages))
            self.summary.add("raw records read", len(messages))
            await self.schemas_ready(messages)
        async with self.lock:
            outputs: list[Output] = []
            touched: set[int] = set()
            size = count = 0
            for msg in messages:
                if not self.is_current(msg):
                    continue
                state = self.state_of(msg.partition)
                if not state.admits(msg.offset):
                    continue  # also what follows a transaction rolled back below: read again from the commit
                ts_ms = record_time(int((msg.timestamp or 0) * 1000))  # also the partition's stream time
                record = RawRecord(msg.topic, msg.partition, msg.offset, msg.value, msg.key, ts_ms)
                fed = state.assembler.feed(record)
                headers = msg.headers
                if headers:  # a re-driven record: a letter made from it again says so (redrive_marks.py)
                    marks = marks_of(headers)
                    if marks:  # its body was written without them: the commit writes it again
                        carry_marks([o.value for o in fed if o.kind == "dead_letter"], marks)
                        fed = [Output(o.kind, o.topic, o.key, o.value) if o.kind == "dead_letter" else o for o in fed]
                outputs.extend(fed)
                state.newest_ts_ms = max(state.newest_ts_ms, ts_ms)
                state.last_seen = time.monotonic()
                state.next_offset = msg.offset + 1
                touched.add(msg.partition)
                size += len(msg.value) if msg.value else 0
                count += 1
                # Big records, or many: end the turn here, the rest is the next.
                if size >= self.conf.turn_max_bytes or count >= self.conf.take_max:
                    await self._end_turn(outputs, touched)
                    outputs, touched, size, count = [], set(), 0, 0
            await self._end_turn(outputs, touched)
            for partition, (end, generation) in (ends or {}).items():
                self._read_up_to(partition, end, generation)

    def _read_up_to(self, partition: int, end: int, generation: int) -> None:
        """The partition holds no record before ``end`` that this worker has not read (markers only)."""
        state = self.states.get(partition)
        if state is None or (self.assigned is not None and partition not in self.assigned):
            return
        if self.generation is not None and generation != self.generation():
            return
        start = state.expect if state.expect is not None else state.next_offset
        if end > start:
            state.expect = None
            state.next_offset = end

    async def _end_turn(self, outputs: list[Output], touched: set[int]) -> None:
        """Blocks gone quiet in stream time, then one transaction of the turn's outputs and offsets."""
        for partition in touched:
            state = self.states[partition]
            outputs.extend(state.assembler.flush_idle(state.newest_ts_ms))
        await self.commit(outputs, touched)

    async def on_idle_tick(self) -> None:
        await self.encoder_ready()
        async with self.lock:
            obs.HEALTH.turned()
            await self._report_lag()
            outputs: list[Output] = []
            flushed: set[int] = set()
            now = time.monotonic()
            for partition, state in self.states.items():
                if self.assigned is not None and partition not in self.assigned:
                    continue
                quiet_ms = int((now - state.last_seen) * 1000)
                # Quiet means quiet *and caught up*: while records of the partition wait in Kafka (a
                # backlog, a broker restart, a rebalance) the rest of an open block may be among them,
                # and flushing it now would split it.
                if (quiet_ms >= self.conf.idle_timeout_ms and state.assembler.oldest_open_offset() is not None
                        and await self.caught_up(partition, state)):
                    out = state.assembler.flush_idle(state.newest_ts_ms + quiet_ms)
                    if out:
                        outputs.extend(out)
                        flushed.add(partition)
            if flushed:
                await self.commit(outputs, flushed)

    async def caught_up(self, partition: int, state: PartitionState) -> bool:
        """Has this worker read everything the broker last said the partition holds?"""
        if self.highwater is None:
            return True
        try:
            high = await self.highwater(partition)
        except Exception:  # noqa: BLE001 - no answer (broker away): not known to be caught up
            return False
        if high is None:
            return False
        # Taken over (or rewound), the next record to read is the one at the committed offset. (A take-over
        # at the very end of the input restores open blocks that no record will ever follow: they must
        # still be flushed.)
        start = state.expect if state.expect is not None else state.next_offset
        return start >= high

    async def on_assigned(self, partitions: set[Any]) -> None:
        async with self.lock:
            self.assigned = {tp.partition for tp in partitions if tp.topic == self.settings.topics.raw}
            await self.take_over(self.assigned)

    async def on_revoked(self, partitions: set[Any]) -> None:
        # The next owner restores these partitions' committed state and reads on from the committed offset.
        async with self.lock:
            for tp in partitions:
                if tp.topic == self.settings.topics.raw:
                    self.states.pop(tp.partition, None)
                    if self.assigned is not None:
                        self.assigned.discard(tp.partition)


def load_state(settings: Settings, partition: int, timeout_s: float | None = None) -> tuple[
        dict[bytes, bytes | None], int | None]:
    """Blocking: the state topic's partition read to its end (committed records only), and the
    group's committed offset of the same logs.raw partition, read after it.

    Reading ``read_committed`` stops at the last stable offset: while the previous owner's transaction
    is open (it was killed mid-turn) this waits until the broker aborts it, so state and offsets are
    read as of the same committed turn.
    """
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    conf = settings.assemble
    topic = conf.state_topic_name()
    limit = timeout_s if timeout_s is not None else 3 * conf.transaction_timeout_ms / 1000 + 30
    consumer = Consumer({**settings.kafka.client_config(), "group.id": conf.app_id, "enable.auto.commit": False,
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    deadline = time.monotonic() + limit

    def retrying(fn: Callable[..., Any], *args: Any) -> Any:
        # A broker restart or a moved coordinator answers NOT_COORDINATOR / timeouts for a while.
        while True:
            try:
                return fn(*args)
            except KafkaException as exc:
                if time.monotonic() > deadline or exc.args[0].fatal():
                    raise
                log.warning("taking over %s [%d]: %s (retrying)", settings.topics.raw, partition, exc.args[0])
                time.sleep(1.0)

    try:
        bounds = {partition: retrying(consumer.get_watermark_offsets, TopicPartition(topic, partition), 10)}
        try:
            records = read_to_end(consumer, topic, bounds, max(0.0, deadline - time.monotonic()))
        except TimeoutError as exc:
            raise SluiceError(f"{exc}; is a transaction of another assemble worker still open? The worker "
                              "restarts and tries again") from exc
        entries: dict[bytes, bytes | None] = {msg.key() or b"": msg.value() for msg in records}
        tp = retrying(consumer.committed, [TopicPartition(settings.topics.raw, partition)], 10)[0]
        return entries, (tp.offset if tp.offset >= 0 else None)
    finally:
        consumer.close()


def open_sources(settings: Settings) -> int:
    """Sources whose committed state still holds something (an open block, a partial line).

    The raw offsets are committed past open blocks (the blocks live in the state topic), so "the group
    has committed everything" no longer means "everything was emitted": this is the other half."""
    from confluent_kafka.admin import AdminClient

    topic = settings.assemble.state_topic_name()
    meta = AdminClient(settings.kafka.client_config()).list_topics(topic, timeout=10).topics.get(topic)
    if meta is None or meta.error is not None:
        return 0
    return sum(1 for p in meta.partitions for value in load_state(settings, p)[0].values() if value is not None)


def build_app(settings: Settings) -> tuple[faust.App, AssembleStage]:
    from faust.types import TP

    from streams.clients import registry_client

    conf = settings.assemble
    # Faust writes a data directory even with in-memory stores; not into the working directory.
    datadir = Path(tempfile.gettempdir()) / "sluice-faust" / conf.app_id
    datadir.parent.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        conf.app_id,
        broker=f"rdkafka://{settings.kafka.bootstrap_servers}",  # streams.rdkafka: one librdkafka client
        store="memory://",
        datadir=str(datadir),
        topic_allow_declare=False,  # topics come from `sluice topics create`, with their retention
        topic_disable_leader=True,
        consumer_auto_offset_reset="earliest",
        # Nothing is acked on logs.raw (the stage's transactions commit its offsets), so a stop has
        # nothing to wait for; records held by open blocks are re-read by the next owner.
        stream_wait_empty=False,
        web_enabled=False,
        consumer_max_fetch_size=conf.max_partition_fetch_bytes,
    )
    use_client_config(app, settings.kafka.client_config())  # TLS/SASL, the logger
    raw = batch_topic(app, settings.topics.raw, acks=False)
    stage = AssembleStage(settings, registry_client(settings.registry))
    consumer = app.consumer
    if not isinstance(consumer, RdConsumer):
        raise TypeError(f"the assemble stage needs the rdkafka:// transport's consumer, not {type(consumer)!r}")

    async def highwater(partition: int) -> int | None:
        tp = TP(settings.topics.raw, partition)
        value = consumer.highwater(tp)
        if value is not None and value >= 0:
            return int(value)
        # No fetch answer for the partition yet (just taken over, nothing new to read): ask the broker.
        return (await consumer.highwaters(tp)).get(tp)

    async def seek(partition: int, offset: int) -> None:
        await consumer.seek(TP(settings.topics.raw, partition), offset)

    ensure_assemble_state_topic(settings)
    stage.routes.topic_exists = consumer.topic_exists
    stage.highwater = highwater
    stage.load_state = lambda p: load_state(settings, p)
    stage.group_metadata = consumer.group_metadata
    stage.generation = lambda: int(app.consumer_generation_id)
    stage.seek = seek

    @app.agent(raw)
    async def assemble(stream: Any) -> None:
        # Each event is one partition's fetch; a turn takes what came within take_within_s.
        async for events in stream.noack_take(conf.take_max, within=conf.take_within_s):
            await stage.on_batches([event.value for event in events])

    @app.timer(interval=max(0.2, conf.idle_timeout_ms / 5000))
    async def flush_idle() -> None:
        await stage.on_idle_tick()

    async def on_revoked(_sender: Any, revoked: set[Any], **_kwargs: Any) -> None:
        await stage.on_revoked(revoked)

    async def on_assigned(_sender: Any, assigned: set[Any], **_kwargs: Any) -> None:
        await stage.on_assigned(assigned)

    app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]
    app.on_partitions_assigned.connect(on_assigned)  # type: ignore[arg-type]
    conf_obs = settings.observability
    obs.HEALTH.stuck_after_s = conf_obs.stuck_after_s
    obs.attach_to_faust(app, "assemble", obs.port_for("assemble", conf_obs.port), conf_obs.host)
    return app, stage


def run_assemble_worker(settings: Settings, loglevel: str = "info") -> None:
    """Blocking: runs until SIGTERM/SIGINT (Faust's own worker handles the signals)."""
    from faust.worker import Worker

    from streams.logs import faust_logging_config, quiet_libraries

    quiet_libraries(loglevel)
    app, _stage = build_app(settings)
    Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False,
           logging_config=faust_logging_config(loglevel, settings.observability.log_format)).execute_from_commandline()
