"""``ColdSink``: LogEvents (or, with ``contract="metric_point"``, metric points) into compressed Avro
objects in S3-compatible storage, exactly once.

One straight pipeline, as every sink here: place each record in its partition's open segment
(segment.py decides the cuts), build the closed segments' objects (build.py, pure), upload each
with its manifest as object metadata (store.py), then acknowledge the segment's records so the
runner may commit past them. A record in an open or not-yet-uploaded segment is not acknowledged.

Exactly once: object keys come from offsets and contents from the records, so a worker killed
between upload and commit re-reads from the last commit point (always a segment boundary), cuts the
same segments and overwrites the same keys with the same bytes.

Idle partitions. Every rule that cuts a segment looks only at records, so a partition that goes
quiet would keep its last segment open (and uncommitted) until its next record. Cutting it on a
timer alone would break replays: a restarted worker could read past the old cut and write an object
that overlaps one already stored. So the timer only decides *when* to cut; *where* it cut is first
written to the store as an empty marker ``_sluice/cuts/<topic>+<partition>+<first>+<last>``, then
the segment is uploaded. A worker that (re)starts on a partition lists the markers from its first
offset on, and cuts a segment that starts at a recorded first offset at the recorded last offset.
The objects then depend only on offsets again, which is what a replay needs. The same mechanism cuts
open segments on a planned shutdown, so a clean stop commits everything.

(Rejected alternatives: a watermark from other partitions' record times depends on poll timing; a
flush when the consumer reaches the high watermark is a timing decision as well and, with an upload
retried while later segments close, lets a replay cut elsewhere and store events twice.)

Retries stay inside the sink: a segment that failed to upload keeps its built bytes and is tried
again after a jittered backoff, so the runner never re-adds records to segments that are already
cut. Partitions pause when buffered bytes pass ``max_buffered_bytes`` (see the cold worker).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from streams.config import Settings
from streams.errors import DependencyFailure, DependencyRefused, DependencyUnavailable, Failure
from streams.sinks.base import Backoff, FlushResult, SinkRecord, unreachable
from streams.sinks.objectstore.build import BuiltObject, build_object, check_codec, invalid_events
from streams.sinks.objectstore.classify import error_code, is_throttle, store_failure
from streams.sinks.objectstore.partition import (
    GroupKey,
    bucket_for,
    epoch_ms,
    group_of,
    object_key,
)
from streams.sinks.objectstore.segment import PartitionSegments, RotationRules, Segment
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.store import LifecycleStatus, ObjectStore
from streams.sinks.objectstore.wire import ContractBodies, RegistryLookup
from streams.sinks.ratecontrol import Capacity, RateController

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


@dataclass
class PendingSegment:
    """A closed segment on its way to the store."""

    segment: Segment
    objects: list[tuple[str, BuiltObject]] | None = None  # (bucket, object), built once
    records: list[SinkRecord] = field(default_factory=list)  # what to acknowledge when stored
    keyed: dict[str, list[SinkRecord]] = field(default_factory=dict)  # object key -> its records
    done: set[str] = field(default_factory=set)  # keys stored (each with its manifest)
    attempts: int = 0
    not_before: float = 0.0
    # The upload running in the background, and what it has to report when a flush collects it.
    task: asyncio.Task[bool] | None = None
    rejected: list[tuple[SinkRecord, str, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    throttled: bool = False

    @property
    def nbytes(self) -> int:
        return self.segment.nbytes


@dataclass
class PartitionState:
    topic: str
    partition: int
    cut_bucket: str
    segments: PartitionSegments | None = None  # None until recorded cuts are loaded
    staged: list[SinkRecord] = field(default_factory=list)  # records waiting for the cuts
    staged_bytes: int = 0
    last_offset: int = -1
    last_add: float = 0.0
    not_before: float = 0.0  # backoff for cut listing / recording


def record_time_ms(event: dict[str, Any]) -> int:
    """Rotation time: when the record entered Kafka (ingest time), else the event's own time."""
    return epoch_ms(event.get("ingest_ts") or event["timestamp"])


class ColdSink:
    name = "the object store"

    def __init__(self, settings: Settings, conf: ColdSinkSettings | None = None, store: ObjectStore | None = None,
                 clock: Callable[[], float] = time.monotonic, backoff: Backoff | None = None,
                 bodies: ContractBodies | None = None, contract: str = "log_event", key_prefix: str = "") -> None:
        self.settings = settings
        self.conf = conf or ColdSinkSettings()
        self.contract = contract
        self.key_prefix = key_prefix
        self.store = store or ObjectStore(settings.object_store, self.conf)
        # Records whose Kafka value is the contract's Avro body go into objects as they are (no re-encode).
        self._registry = None if bodies else RegistryLookup(settings.registry)
        self.bodies = bodies or ContractBodies(self._registry, contract, clock=clock)
        self.clock = clock
        self.backoff = backoff or Backoff(base_s=0.5, cap_s=30.0)
        self.rules = RotationRules(self.conf.rotate_records, self.conf.rotate_bytes, self.conf.rotate_interval_s,
                                   self.conf.stagger)
        # The shared windowed controller, counting PUTs as events (one per object, manifest included).
        self.put_control = RateController(Capacity(self.conf.puts_per_s, self.conf.put_bytes_per_s))
        self.lifecycle: list[LifecycleStatus] = []
        self._parts: dict[TopicPartition, PartitionState] = {}
        self._pending: list[PendingSegment] = []
        self._build_lane: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._put_threads: ThreadPoolExecutor | None = None
        self._rejected: list[tuple[SinkRecord, str, str]] = []
        self._draining = False
        self.stats = {"objects": 0, "object_bytes": 0, "segments": 0, "cuts_recorded": 0, "upload_failures": 0,
                      "store_errors": 0, "objects_refused": 0}
        self.store_problem: str | None = None  # why the last upload could not reach the store

    # -- Sink protocol ---------------------------------------------------------------------------
    async def start(self) -> None:
        check_codec(self.conf.format, self.conf.codec)
        if self._registry is not None:
            await asyncio.to_thread(self._registry.connect)
        buckets = {self.settings.object_store.default_bucket}
        buckets |= {r.bucket for r in self.settings.routing.projects.values() if r.bucket}
        for bucket in sorted(buckets):
            try:
                await asyncio.to_thread(self.store.ensure_bucket, bucket)
                if self.conf.lifecycle_enabled:
                    self.lifecycle.append(await asyncio.to_thread(self.store.apply_lifecycle, bucket))
            except Exception as exc:
                self._raise_for_store(exc, f"preparing bucket {bucket}")
                raise

    def add(self, record: SinkRecord) -> None:
        tp = (record.topic, record.partition)
        state = self._parts.get(tp)
        if state is not None and record.offset <= state.last_offset:
            # Re-delivered from an earlier offset (seek, re-assignment): rebuild from there.
            log.info("cold: %s [%d] restarts at offset %d; dropping its buffered segments", *tp, record.offset)
            self.forget([tp])
            state = None
        if state is None:
            state = PartitionState(record.topic, record.partition, self._cut_bucket(record))
            self._parts[tp] = state
        state.last_offset = record.offset
        state.last_add = self.clock()
        if state.segments is None:
            state.staged.append(record)
            state.staged_bytes += record.size
        else:
            self._place(state, record)

    def due(self, now: float) -> bool:
        if self._rejected:
            return True
        pressure = self._pressure()
        for state in self._parts.values():
            if state.not_before > now:
                continue
            if state.segments is None and state.staged:
                return True
            if state.segments is not None and state.segments.open is not None and self._should_cut(state, now,
                                                                                                   pressure):
                return True
        if any(p.task is not None and p.task.done() for p in self._pending):
            return True  # an upload ended: collect it
        if (self._draining or pressure) and any(p.task is not None for p in self._pending):
            return True  # nothing else can happen until an upload ends: flush waits for one
        return (any(p.task is None and p.not_before <= now for p in self._pending)
                and self.put_control.wait_s(now) == 0)

    def buffered(self) -> int:
        held = sum(len(s.staged) + (s.segments.buffered if s.segments else 0) for s in self._parts.values())
        return held + sum(len(p.segment.records) for p in self._pending) + len(self._rejected)

    def buffered_bytes(self) -> int:
        held = sum(s.staged_bytes + (s.segments.buffered_bytes if s.segments else 0) for s in self._parts.values())
        return held + sum(p.nbytes for p in self._pending)

    async def flush(self, now: float) -> FlushResult:
        result = FlushResult()
        result.rejected, self._rejected = self._rejected, []
        await self._load_cuts(now)
        await self._cut_open(now)
        self._start_uploads(now)
        self._collect(result)
        if not result.acked and (self._draining or self._pressure()):
            await self._wait_for_uploads(now)  # else the runner's loop would spin on an unchanged state
            self._collect(result)
        result.unreachable = self.store_problem
        return result

    async def close(self) -> None:
        running = [p.task for p in self._pending if p.task is not None]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if self._put_threads is not None:
            self._put_threads.shutdown(wait=False, cancel_futures=True)
            self._put_threads = None
        log.info("cold sink closing: %s; %d records not stored (re-read from Kafka on restart)",
                 self.stats, self.buffered())

    # -- operations the cold worker adds to the protocol -----------------------------------------
    async def uploads_ended(self) -> None:
        """Until every upload in flight has ended; the next flush reports them (tests step with this
        to keep a fake clock from running ahead of uploads that are still in their threads)."""
        await asyncio.gather(*(p.task for p in self._pending if p.task is not None), return_exceptions=True)

    def begin_drain(self) -> None:
        """Planned shutdown: cut every open segment (recording the cuts) so everything commits."""
        self._draining = True

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions revoked (or re-read from earlier): drop what is buffered for them."""
        gone = set(partitions)
        for tp in gone:
            self._parts.pop(tp, None)
        keep = []
        for pending in self._pending:
            if (pending.segment.topic, pending.segment.partition) not in gone:
                keep.append(pending)
            elif pending.task is not None:
                pending.task.cancel()  # its records are the new owner's now; a finished PUT is harmless
        self._pending = keep

    # -- parts -------------------------------------------------------------------------------
    def _idle(self, state: PartitionState, now: float) -> bool:
        return now - state.last_add >= self.conf.idle_flush_s

    def _pressure(self) -> bool:
        return self.buffered_bytes() >= self.conf.max_buffered_bytes

    def _should_cut(self, state: PartitionState, now: float, pressure: bool) -> bool:
        # Memory pressure cuts early too: paused partitions would otherwise wait for the idle timer.
        return self._draining or pressure or self._idle(state, now)

    def _cut_bucket(self, record: SinkRecord) -> str:
        prefix = self.settings.topics.events_prefix
        project = record.topic[len(prefix):] if record.topic.startswith(prefix) else record.project
        return bucket_for(self.settings, project)

    def _place(self, state: PartitionState, record: SinkRecord) -> None:
        if state.segments is None:
            raise ValueError("place records only once the partition's recorded cuts are loaded")
        try:
            group = group_of(record.value, record.project)
            time_ms = record_time_ms(record.value)
        except (KeyError, TypeError, ValueError, OverflowError, OSError) as exc:
            self._rejected.append((record, f"cold sink cannot place {record.topic} [{record.partition}] @ "
                                           f"{record.offset}: {type(exc).__name__}: {exc}", "unpartitionable"))
            return
        for segment in state.segments.add(record, group, time_ms):
            self._pending.append(PendingSegment(segment))

    async def _load_cuts(self, now: float) -> None:
        for state in list(self._parts.values()):
            if state.segments is not None or not state.staged or state.not_before > now:
                continue
            first = state.staged[0].offset
            try:
                cuts = await asyncio.to_thread(self.store.load_cuts, state.cut_bucket, state.topic,
                                               state.partition, first)
            except Exception as exc:  # noqa: BLE001 - store unreachable: records stay staged, try later
                self._raise_for_store(exc, f"listing the recorded cuts of {state.topic} [{state.partition}]",
                                      permanent_too=True)
                state.not_before = self.clock() + self.backoff.delay(3)
                self.stats["store_errors"] += 1
                log.warning("cold: cannot list recorded cuts of %s [%d]: %s", state.topic, state.partition, exc)
                continue
            if cuts:
                log.info("cold: %s [%d]: %d recorded cut(s) from offset %d on", state.topic, state.partition,
                         len(cuts), first)
            state.segments = PartitionSegments(state.topic, state.partition, self.rules, cuts)
            staged, state.staged, state.staged_bytes = state.staged, [], 0
            for record in staged:
                self._place(state, record)

    async def _cut_open(self, now: float) -> None:
        pressure = self._pressure()
        for state in list(self._parts.values()):
            segs = state.segments
            if segs is None or segs.open is None or state.not_before > now:
                continue
            if not self._should_cut(state, now, pressure):
                continue
            seg = segs.open
            if seg.forced_end != seg.last_offset:  # already recorded by an earlier run otherwise
                try:
                    await asyncio.to_thread(self.store.record_cut, state.cut_bucket, state.topic, state.partition,
                                            seg.first_offset, seg.last_offset)
                except Exception as exc:  # noqa: BLE001 - not recorded, not cut: try again later
                    self._raise_for_store(exc, f"recording a cut of {state.topic} [{state.partition}]",
                                          permanent_too=True)
                    state.not_before = self.clock() + self.backoff.delay(3)
                    self.stats["store_errors"] += 1
                    log.warning("cold: cannot record the cut of %s [%d]: %s", state.topic, state.partition, exc)
                    continue
                self.stats["cuts_recorded"] += 1
            closed = segs.cut("drain" if self._draining else "idle" if self._idle(state, now) else "memory")
            if closed is not None:
                self._pending.append(PendingSegment(closed))

    def _build_group(self, seg: Segment, group: GroupKey, grouped: list[SinkRecord]
                     ) -> tuple[list[SinkRecord], list[tuple[SinkRecord, str, str]], BuiltObject | None]:
        """One group's object: the records in it, those the contract cannot encode, and the object
        (None when no record of the group can be encoded)."""
        try:
            return grouped, [], self._build_one(group, seg, grouped)
        except (ValueError, TypeError, KeyError, AttributeError):
            bad = dict(invalid_events([r.value for r in grouped], self.contract))
            rejected = [(r, f"cold sink cannot encode {r.topic} [{r.partition}] @ {r.offset}: {bad[i]}",
                         "unencodable") for i, r in enumerate(grouped) if i in bad]
            records = [r for i, r in enumerate(grouped) if i not in bad]
            return records, rejected, self._build_one(group, seg, records) if records else None

    def _build_one(self, group: GroupKey, seg: Segment, records: list[SinkRecord]) -> BuiltObject:
        key = object_key(group, seg.topic, seg.partition, records[0].offset, self.conf.extension, self.key_prefix)
        events = [r.value for r in records]
        bodies = [self.bodies.body(r.raw, r.value) for r in records] if self.conf.format == "avro" else None
        return build_object(key, seg.topic, seg.partition, [r.offset for r in records], events,
                            self.conf.format, self.conf.codec, self.conf.codec_level, bodies, self.contract)

    # -- uploads: in the background, so the runner goes on polling and cutting while they run ----
    def _start_uploads(self, now: float) -> None:
        if self.put_control.wait_s(now) > 0:
            return
        for pending in self._pending:
            if pending.task is None and pending.not_before <= now:
                pending.task = asyncio.create_task(self._upload_segment(pending))

    def _collect(self, result: FlushResult) -> None:
        """Report the uploads that ended: stored segments are acknowledged, the others retried."""
        latencies: list[float] = []
        for pending, task in [(p, p.task) for p in self._pending if p.task is not None and p.task.done()]:
            pending.task = None
            stored = False
            if task.cancelled():
                pass  # its event loop ended (a restart in tests): uploaded again, same key, same bytes
            elif (error := task.exception()) is not None:
                if isinstance(error, DependencyRefused):
                    raise error
                log.error("cold: upload of %s [%d] from offset %d crashed; retrying: %r", pending.segment.topic,
                          pending.segment.partition, pending.segment.first_offset, error)
                pending.not_before = self.clock() + self.backoff.delay(pending.attempts + 1)
            else:
                stored = task.result()
            result.rejected.extend(pending.rejected)
            latencies += pending.latencies
            result.throttled |= pending.throttled
            pending.rejected, pending.latencies, pending.throttled = [], [], False
            if stored:
                self._pending.remove(pending)
                result.acked.extend(pending.records)
                self.stats["segments"] += 1
        if latencies:
            result.latency_s = max(latencies)
            if not result.throttled:
                self.put_control.on_success(result.latency_s)

    async def _wait_for_uploads(self, now: float) -> None:
        """Until an upload ends (at most 1 s), or a retry's backoff does."""
        running = [p.task for p in self._pending if p.task is not None]
        if running:
            await asyncio.wait(running, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
        elif self._pending:
            await asyncio.sleep(min(1.0, max(0.0, min(p.not_before for p in self._pending) - now)))

    def _builds(self) -> asyncio.Lock:
        """One segment builds at a time (a lock per event loop: tests run one sink under several)."""
        loop = asyncio.get_running_loop()
        if self._build_lane is None or self._build_lane[0] is not loop:
            self._build_lane = (loop, asyncio.Lock())
        return self._build_lane[1]

    async def _upload_segment(self, pending: PendingSegment) -> bool:
        """Build (once) and store the segment's objects; True when all of them are stored (or given up:
        an object the store can never take has its records dead-lettered)."""
        uploads: list[tuple[str, asyncio.Future[bool]]] = []  # (object key, its upload)
        if pending.objects is None:
            try:
                await self._build_and_start(pending, uploads)
            except BaseException:
                for _key, upload in uploads:  # built again next attempt: same keys, same bytes
                    upload.cancel()
                await asyncio.gather(*(u for _k, u in uploads), return_exceptions=True)
                raise
        else:
            uploads = [(obj.key, self._upload_object(pending, bucket, obj))
                       for bucket, obj in pending.objects if obj.key not in pending.done]
        outcomes = await asyncio.gather(*(u for _k, u in uploads), return_exceptions=True)
        transient: list[BaseException] = []
        for (key, _upload), outcome in zip(uploads, outcomes, strict=True):
            if not isinstance(outcome, BaseException):
                continue
            if not isinstance(outcome, Exception):
                raise outcome
            kind = store_failure(outcome)
            if kind is Failure.PERMANENT:
                self._give_up(pending, key, outcome)
            else:
                self._raise_for_store(outcome, f"storing {key}")
                transient.append(outcome)
        if transient:
            # Keep the bytes (and what is stored), retry after backoff.
            exc = transient[0]
            pending.attempts += 1
            pending.not_before = self.clock() + self.backoff.delay(pending.attempts)
            self.stats["upload_failures"] += 1
            self.stats["store_errors"] += 1
            if is_throttle(exc):
                pending.throttled = True
                self.put_control.on_throttled()
            if unreachable(exc):
                self.store_problem = f"{self.settings.object_store.endpoint_url}: {exc}"
            log.warning("cold: upload of %s [%d] from offset %d failed (attempt %d): %s", pending.segment.topic,
                        pending.segment.partition, pending.segment.first_offset, pending.attempts, exc)
            return False
        self.store_problem = None
        return all(o is True or isinstance(o, BaseException) for o in outcomes)

    def _give_up(self, pending: PendingSegment, key: str, exc: Exception) -> None:
        """The store can never take this object: its records become dead letters with the store's reason,
        and the segment goes on without it."""
        records = pending.keyed.pop(key, [])
        gone = {id(r) for r in records}
        pending.records = [r for r in pending.records if id(r) not in gone]
        code = error_code(exc) or type(exc).__name__
        reason = f"the object store at {self.store.endpoint} refused object {key}: {code}: {exc}"
        pending.rejected.extend((r, f"cold sink: {r.topic} [{r.partition}] @ {r.offset}: {reason}", "unstorable")
                                for r in records)
        pending.done.add(key)
        self.stats["objects_refused"] += 1
        log.error("cold: %s; its %d records go to the dead-letter topic", reason, len(records))

    def _raise_for_store(self, exc: BaseException, what: str, permanent_too: bool = False) -> None:
        """Stop the sink when the store refuses the sink itself (credentials, a missing bucket), or with
        ``permanent_too`` on any failure that is not transient (a cut that cannot be recorded stops
        every segment of the partition alike)."""
        if isinstance(exc, DependencyFailure):
            raise exc
        kind = store_failure(exc)
        if kind is Failure.REFUSED or (permanent_too and kind is Failure.PERMANENT):
            code = error_code(exc) or type(exc).__name__
            raise DependencyRefused(
                f"the object store at {self.store.endpoint} refused {what} ({code}: {exc}). Check "
                "object_store.access_key_id / secret_access_key (or their files), the bucket's policy for "
                "this user, that the bucket exists and the endpoint and region are right, and the "
                "clock of this host; nothing was dead-lettered or committed", "object_store") from exc
        if kind is Failure.TRANSIENT and what.startswith("preparing"):
            raise DependencyUnavailable(f"the object store at {self.store.endpoint} did not answer {what}: "
                                        f"{exc}", "object_store") from exc

    async def _build_and_start(self, pending: PendingSegment,
                               uploads: list[tuple[str, asyncio.Future[bool]]]) -> None:
        """Build the segment's objects one after another in a thread, starting each one's upload as soon
        as it is built. One segment builds at a time (across segments too): builds running side by side
        share the GIL and all finish late, and no PUT starts before its object is built."""
        seg = pending.segment
        objects, records, rejected = [], [], []
        async with self._builds():
            for group, grouped in sorted(seg.by_group().items()):
                kept, bad, built = await asyncio.to_thread(self._build_group, seg, group, grouped)
                rejected += bad
                if built is None:
                    continue
                bucket = bucket_for(self.settings, group.project)
                objects.append((bucket, built))
                records += kept
                pending.keyed[built.key] = kept
                uploads.append((built.key, self._upload_object(pending, bucket, built)))
        pending.objects, pending.records = objects, records
        pending.rejected.extend(rejected)

    def _uploader(self) -> ThreadPoolExecutor:
        """``upload_concurrency`` threads doing PUTs for all segments. A thread that ends a PUT takes the
        next queued one itself: PUTs do not wait for the event loop, which may be busy placing a poll's
        records (a PUT slot would stay idle for as long as that took)."""
        if self._put_threads is None:
            self._put_threads = ThreadPoolExecutor(self.conf.upload_concurrency, thread_name_prefix="cold-put")
        return self._put_threads

    def _upload_object(self, pending: PendingSegment, bucket: str, obj: BuiltObject) -> asyncio.Future[bool]:
        """Queue the object's PUT now; the future says whether it was stored (False: over this window's
        PUT budget, the object goes up in a later flush)."""
        now = self.clock()
        if self.put_control.wait_s(now) > 0:
            over = asyncio.get_running_loop().create_future()
            over.set_result(False)
            return over
        self.put_control.consume(1, len(obj.body), now)
        put = asyncio.wrap_future(self._uploader().submit(self._put_object, bucket, obj))
        return asyncio.ensure_future(self._stored(pending, bucket, obj, put))

    async def _stored(self, pending: PendingSegment, bucket: str, obj: BuiltObject,
                      put: asyncio.Future[float]) -> bool:
        took = await put
        pending.latencies.append(took)
        pending.done.add(obj.key)
        self.stats["objects"] += 1
        self.stats["object_bytes"] += len(obj.body)
        log.debug("cold: stored s3://%s/%s (%d bytes) in %.3f s", bucket, obj.key, len(obj.body), took)
        return True

    def _put_object(self, bucket: str, obj: BuiltObject) -> float:
        """Store one object; returns how long the PUT took (its wait in the queue not included)."""
        started = self.clock()
        content_type = "avro/binary" if obj.key.endswith(".avro") else "application/x-ndjson"
        # The manifest travels as the object's metadata: stored in the same request, so an object
        # never exists without its manifest, and it costs no second PUT.
        self.store.put(bucket, obj.key, obj.body, content_type, obj.metadata())
        return self.clock() - started
