"""The hot sink: the :class:`~streams.sinks.base.Sink` shape over Elasticsearch bulk writes.

One straight pipeline: ``add`` encodes a record into its bulk lines at once (so the batch knows
its true byte size), ``due`` says a batch is full (count, bytes) or old (age), ``flush`` sends
bulk requests of pre-serialised NDJSON and classifies every item.

One lane per project, each with up to ``bulks_in_flight`` bulks in flight, each bulk at most one
window's budget (``HotSinkSettings.bulk_events``). A bursting project's bulks are large and, on a
loaded cluster, slow; with a single lane a quiet project's few records would wait behind each of
them. In its own lane the quiet project's small bulk goes out at once. Several small bulks in flight keep a
lane's throughput up where each request pays a fixed cost (a translog fsync per bulk). ``flush``
starts bulks in every lane with records and room, and reports the bulks that have ended; ``due``
is true once one has. Memory stays bounded by the runner's watermarks, and the load on the
cluster by the runner's admission, which counts what is in flight.
Consuming, admission, offsets, dead letters and retries are the runner's (streams/sinks/base.py).

In the last ``precreate_ahead_s`` of a UTC day the sink creates, in the background, tomorrow's index
of every family it wrote today (streams/sinks/elasticsearch/precreate.py says why).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streams.config import ElasticsearchSettings, RoutingSettings
from streams.errors import DependencyRefused, SluiceError
from streams.sinks.base import FlushResult, SinkRecord, unreachable
from streams.sinks.elasticsearch import templates
from streams.sinks.elasticsearch.classify import (
    ItemResult,
    Verdict,
    classify_bulk,
    classify_exception,
)
from streams.sinks.elasticsearch.precreate import precreate_due, tomorrows_indices
from streams.sinks.elasticsearch.request import Action, IndexNamer, bulk_body, day_of, encode
from streams.sinks.elasticsearch.settings import HotSinkSettings

log = logging.getLogger(__name__)

# Only what the classifier reads: the response of a 1,000-item bulk shrinks ~10x.
_FILTER = "errors,items.*.status,items.*.error"


@dataclass
class HotSinkStats:
    requests: int = 0
    docs_acked: int = 0
    items_retried: int = 0
    items_rejected: int = 0
    throttled_flushes: int = 0  # flushes in which Elasticsearch pushed back (429 / rejected execution)
    request_errors: int = 0  # whole requests that failed (connection, timeout, 5xx)
    statuses: dict[int, int] = field(default_factory=dict)


@dataclass
class _Pending:
    record: SinkRecord
    action: Action | None
    error: tuple[str, str] | None = None  # (reason, error_type) when the record could not be encoded


AckListener = Callable[[list[SinkRecord], float], None]


@dataclass
class _Lane:
    """One project's records waiting for a bulk, and its bulks in flight (``bulks_in_flight`` at most)."""

    buf: deque[_Pending] = field(default_factory=deque)
    nbytes: int = 0
    oldest: float | None = None
    tasks: dict[asyncio.Task[FlushResult], int] = field(default_factory=dict)  # bulk -> its record count

    def done(self) -> list[asyncio.Task[FlushResult]]:
        return [t for t in self.tasks if t.done()]


class HotSink:
    name = "Elasticsearch"

    def __init__(
        self,
        es: ElasticsearchSettings,
        routing: RoutingSettings,
        hot: HotSinkSettings | None = None,
        client: Any | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_acked: AckListener | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.es = es
        self.routing = routing
        self.hot = hot or HotSinkSettings()
        self.namer = IndexNamer.of(routing, self.hot)
        self.client = client
        self.clock = clock
        self.on_acked = on_acked
        self.stats = HotSinkStats()
        self.ilm = False
        self._lanes: dict[str, _Lane] = {}
        self._owns_client = client is None
        self._started = False
        self._policed: set[str] = set()  # indices whose ILM policy was set (projects with own retention)
        self.wall = wall  # UTC time, for the day an index belongs to (``clock`` is monotonic)
        self._written: dict[str, str] = {}  # index written (today, after pruning) -> its project
        self._precreated: set[str] = set()
        self._precreate_task: asyncio.Task[None] | None = None
        self._precreate_checked = float("-inf")
        self.store_problem: str | None = None  # why the last request could not reach Elasticsearch

    async def start(self) -> None:
        if self._started:
            return  # the worker starts it early (to learn about ILM); the runner starts it again
        if self.client is None:
            from elasticsearch import AsyncElasticsearch

            from streams.clients import async_es_client

            base: AsyncElasticsearch = async_es_client(self.es)
            # Retries are the runner's (backoff, jitter, re-admission); the client must not retry on its own.
            self.client = base.options(request_timeout=self.hot.request_timeout_s, max_retries=0,
                                       retry_on_timeout=False)
        try:
            self.ilm = await templates.install(self.client, self.routing, self.hot)
        except Exception as exc:
            verdict = classify_exception(exc)
            if verdict.verdict is Verdict.STOP:
                raise DependencyRefused(
                    f"Elasticsearch at {self.es.url} refused installing the index templates ({verdict.reason}). "
                    "Check elasticsearch.username / password (or api_key) and that this user's role may manage "
                    "index templates and ILM policies (manage_index_templates, manage_ilm)",
                    "elasticsearch") from exc
            raise
        self._started = True

    # -- batching --------------------------------------------------------------------------
    def add(self, record: SinkRecord) -> None:
        lane = self._lanes.get(record.project)
        if lane is None:
            lane = self._lanes[record.project] = _Lane()
        try:
            pending = _Pending(record, encode(record.value, self.namer))
            lane.nbytes += len(pending.action.lines) if pending.action else 0
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            pending = _Pending(record, None, (f"cannot build an Elasticsearch document: {exc!r}", "unindexable"))
        if not lane.buf:
            lane.oldest = self.clock()
        lane.buf.append(pending)

    def _lane_free(self, lane: _Lane) -> bool:
        return bool(lane.buf) and len(lane.tasks) < self.hot.bulks_in_flight

    def _lane_due(self, lane: _Lane, now: float) -> bool:
        if not self._lane_free(lane):
            return False
        if len(lane.buf) >= self.hot.bulk_events or lane.nbytes >= self.hot.max_batch_bytes:
            return True
        return lane.oldest is not None and now - lane.oldest >= self.hot.max_batch_age_s

    def due(self, now: float) -> bool:
        return any(self._lane_due(lane, now) or lane.done() for lane in self._lanes.values())

    def buffered(self) -> int:
        return sum(len(lane.buf) + sum(lane.tasks.values()) for lane in self._lanes.values())

    def _take_batch(self, lane: _Lane) -> list[_Pending]:
        batch: list[_Pending] = []
        nbytes = 0
        while lane.buf and len(batch) < self.hot.bulk_events:
            size = len(lane.buf[0].action.lines) if lane.buf[0].action else 0
            if batch and nbytes + size > self.hot.max_batch_bytes:
                break
            item = lane.buf.popleft()
            batch.append(item)
            nbytes += size
        lane.nbytes -= nbytes
        if not lane.buf:
            lane.oldest = None  # else keep it: what is left is at least that old
        return batch

    # -- writing ---------------------------------------------------------------------------
    async def flush(self, now: float) -> FlushResult:
        """Start a bulk in every free lane with records, and report the bulks that have ended (their
        acknowledged, retried and rejected records, merged). It returns at once: the runner goes on
        reading and admitting while bulks are in flight. Only a flush that can neither start nor
        report anything (the runner draining) waits, for the first bulk in flight to end."""
        self._maybe_precreate(now)
        started = False
        for lane in self._lanes.values():
            while self._lane_free(lane):
                batch = self._take_batch(lane)
                lane.tasks[asyncio.create_task(self._write(batch))] = len(batch)
                started = True
        running = [t for lane in self._lanes.values() for t in lane.tasks]
        if running and not started and not any(t.done() for t in running):
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        result = FlushResult()
        for lane in self._lanes.values():
            for task in lane.done():
                del lane.tasks[task]
                part = task.result()  # _write classifies every failure; an exception here is a bug: let it out
                result.acked += part.acked
                result.retry += part.retry
                result.rejected += part.rejected
                result.throttled = result.throttled or part.throttled
                result.latency_s = max(result.latency_s, part.latency_s)
        result.unreachable = self.store_problem
        return result

    async def _write(self, batch: list[_Pending]) -> FlushResult:
        """One bulk request for one lane's batch, every item classified."""
        result = FlushResult()
        sendable: list[_Pending] = []
        for p in batch:
            if p.action is None:
                reason, etype = p.error or ("unindexable", "unindexable")
                result.rejected.append((p.record, reason, etype))
            else:
                sendable.append(p)
        if not sendable:
            return result
        verdicts, result.latency_s = await self._send(sendable)
        self._stop_if_refused(verdicts)
        self._written.update((p.action.index, p.record.project) for p in sendable if p.action)
        acked: list[SinkRecord] = []
        for p, v in zip(sendable, verdicts, strict=True):
            self.stats.statuses[v.status] = self.stats.statuses.get(v.status, 0) + 1
            if v.verdict is Verdict.OK:
                acked.append(p.record)
            elif v.verdict is Verdict.RETRY:
                result.retry.append(p.record)
                result.throttled = result.throttled or v.throttled
            else:
                result.rejected.append((p.record, f"{p.action.index if p.action else '?'}: {v.reason}",
                                        v.error_type))
        result.acked = acked
        self.stats.docs_acked += len(acked)
        self.stats.items_retried += len(result.retry)
        self.stats.items_rejected += len(result.rejected)
        if result.throttled:
            self.stats.throttled_flushes += 1
        if result.retry:
            first = next(v for v in verdicts if v.verdict is Verdict.RETRY)
            log.warning("hot sink: %d of %d items to retry (%s)", len(result.retry), len(sendable), first.reason)
        if acked and self.on_acked is not None:
            self.on_acked(acked, self.clock())
        if self.ilm:
            await self._attach_policies(sendable)
        return result

    def _stop_if_refused(self, verdicts: list[ItemResult]) -> None:
        """Credentials or privileges refused: every document would be, so dead-letter none of them."""
        refused = next((v for v in verdicts if v.verdict is Verdict.STOP), None)
        if refused is not None:
            raise DependencyRefused(
                f"Elasticsearch at {self.es.url} refused a bulk write of {len(verdicts)} documents "
                f"({refused.reason}). Check elasticsearch.username / password (or api_key, or their secret "
                "files) and that this user's role may create and write the logs-* and metrics-* indices; "
                "nothing was dead-lettered or committed", "elasticsearch")

    async def _send(self, batch: list[_Pending]) -> tuple[list[ItemResult], float]:
        if self.client is None:
            raise SluiceError("HotSink.flush before start(): the runner starts the sink first")
        body = bulk_body([p.action for p in batch if p.action is not None])
        started = self.clock()
        self.stats.requests += 1
        try:
            resp = await self.client.bulk(operations=body, filter_path=_FILTER)
        except Exception as exc:  # noqa: BLE001 - every failure of the request is classified; none may lose records
            verdict = classify_exception(exc)
            self.stats.request_errors += 1
            if unreachable(exc):
                self.store_problem = f"{self.es.url}: {verdict.reason}"
            log.warning("hot sink: bulk of %d failed: %s", len(batch), verdict.reason)
            return [verdict] * len(batch), self.clock() - started
        self.store_problem = None
        log.debug("hot sink: bulk of %d items in %.3f s", len(batch), self.clock() - started)
        return classify_bulk(resp.body, len(batch)), self.clock() - started

    async def _attach_policies(self, batch: list[_Pending]) -> None:
        """With ILM: a project with its own retention gets its policy on the first write to each new index."""
        for p in batch:
            index = p.action.index if p.action else ""
            if index in self._policed:
                continue
            self._policed.add(index)
            policy = self._own_policy(p.record.project)
            if policy is not None:
                try:
                    await self.client.indices.put_settings(  # type: ignore[union-attr]
                        index=index, settings={"index.lifecycle.name": policy})
                except Exception:
                    self._policed.discard(index)
                    log.exception("hot sink: could not attach the retention policy to %s; will try again", index)

    def _own_policy(self, project: str) -> str | None:
        """The ILM policy of a project whose retention is not the default (None: the template's)."""
        route = self.routing.projects.get(project)
        if not self.ilm or route is None or route.retention_days == templates.DEFAULT_RETENTION_DAYS:
            return None
        return templates.policy_name(route.retention_days)

    # -- tomorrow's indices ----------------------------------------------------------------------
    def _maybe_precreate(self, now: float, every_s: float = 60.0) -> None:
        if now - self._precreate_checked < every_s or (self._precreate_task and not self._precreate_task.done()):
            return
        self._precreate_checked = now
        wall_ms = int(self.wall() * 1000)
        today = day_of(wall_ms)
        self._written = {index: p for index, p in self._written.items() if index.endswith(today)}
        if not precreate_due(wall_ms, int(self.hot.precreate_ahead_s * 1000)):
            self._precreated.clear()
            return
        todo = {i: p for i, p in tomorrows_indices(self._written, wall_ms).items() if i not in self._precreated}
        if todo:
            self._precreate_task = asyncio.create_task(self._precreate(todo))

    async def _precreate(self, indices: dict[str, str]) -> None:
        """Create ``{index: project}`` one at a time (each is a cluster-state update); an index another
        worker (or a write) created first is fine; another failure is retried at the next check."""
        for index, project in indices.items():
            policy = self._own_policy(project)
            extra = {"settings": {"index.lifecycle.name": policy}} if policy else {}
            try:
                await self.client.indices.create(index=index, **extra)  # type: ignore[union-attr]
                log.info("hot sink: created %s ahead of midnight UTC", index)
            except Exception as exc:  # noqa: BLE001 - a failed pre-creation costs nothing: the first write creates it
                if getattr(exc, "error", None) != "resource_already_exists_exception":
                    log.warning("hot sink: could not create %s ahead of midnight (%s); trying again in a minute",
                                index, exc)
                    continue
            self._precreated.add(index)
            if policy:
                self._policed.add(index)

    async def close(self) -> None:
        # Bulks still in flight are not acknowledged: their records are re-read (same _id) after a restart.
        running = [t for lane in self._lanes.values() for t in lane.tasks]
        if self._precreate_task is not None:
            running.append(self._precreate_task)  # type: ignore[arg-type]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if self.client is not None and self._owns_client:
            await self.client.close()
