"""Cold objects back into Elasticsearch: one task's events between two times.

Only the task's day prefixes are listed (``<project>/<task>/<yyyy-mm-dd>/``), and each object's
manifest (its user metadata, read with a HEAD) says whether its events can overlap the range, so
objects outside it are never read.

Events go back where the hot tier keeps them: the same daily index (``<index prefix>-<task type>-<day>``,
from the routing table), the same document (epoch-millisecond times, as the hot sink writes them), and
``_id = event_id``. The index template gives a re-created index the hot tier's field types; an event
still in the hot tier is overwritten by itself, so counts over ``logs-<project>-*`` never double, and
rehydrating twice changes nothing. The retention job and ILM count an index's age from its creation,
so a day rehydrated today stays for the project's retention period (streams/sinks/elasticsearch/retention.py).
With ``metrics``, the task's metric points (under ``cold.metrics_prefix``) go back into its daily
``sluice-metrics-<project>-<day>`` indices the same way.
"""

from __future__ import annotations

import io
import json
import logging
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import fastavro

from streams.clients import es_client
from streams.config import Settings
from streams.errors import NotFound, PartlyDone, SluiceError
from streams.sinks.elasticsearch.request import IndexNamer, document
from streams.sinks.objectstore.build import manifest_from_metadata
from streams.sinks.objectstore.partition import bucket_for, day_prefixes, epoch_ms
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.store import ObjectStore

log = logging.getLogger(__name__)

DATA_SUFFIXES = (".avro", ".ndjson.gz")


@dataclass(frozen=True)
class ColdObject:
    bucket: str
    key: str
    manifest: dict[str, Any] | None  # None: an object without Sluice's manifest metadata (read whole)

    @property
    def count(self) -> int | None:
        return int(self.manifest["count"]) if self.manifest else None


@dataclass
class RehydrateReport:
    bucket: str
    indices: set[str] = field(default_factory=set)
    objects_listed: int = 0
    objects_read: int = 0
    objects_skipped: int = 0  # their manifest puts them outside the range
    events_indexed: int = 0
    errors: list[str] = field(default_factory=list)


def parse_bound(text: str, *, end: bool) -> datetime:
    """``2026-11-29`` (a whole day: its start, or its end when ``end``) or an ISO time (UTC if naive)."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            return moment + timedelta(days=1) - timedelta(milliseconds=1) if end else moment
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise SluiceError(f"{text!r} is not a date (2026-11-29) or an ISO time (2026-11-29T10:00:00Z)") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def find_objects(store: ObjectStore, bucket: str, project: str, task_id: str, start: datetime,
                 end: datetime, key_prefix: str = "") -> tuple[list[ColdObject], int]:
    """The task's objects that may hold events in [start, end], and how many were listed in all."""
    keys: list[str] = []
    for prefix in day_prefixes(project, task_id, start.date(), end.date(), key_prefix):
        keys += store.list_keys(bucket, prefix)
    start_ms, end_ms = epoch_ms(start), epoch_ms(end)
    found = []
    data_keys = [k for k in keys if k.endswith(DATA_SUFFIXES)]
    for key in data_keys:
        manifest = manifest_from_metadata(store.metadata(bucket, key))  # a HEAD, not a read
        if manifest and (manifest["last_event_ms"] < start_ms or manifest["first_event_ms"] > end_ms):
            continue
        found.append(ColdObject(bucket, key, manifest))
    return found, len(data_keys)


def read_events(key: str, body: bytes, damage: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The events of one cold object. What cannot be read (a cut or damaged object, a line that is no event)
    is described in ``damage`` and the rest is still read: a damaged object costs only its damaged part."""
    damage = [] if damage is None else damage
    if key.endswith(".ndjson.gz"):
        for no, line in enumerate(_gunzip(body, damage).splitlines(), 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
                if isinstance(event, dict):
                    event = _times_as_ms(event)
            except ValueError as exc:
                damage.append(f"line {no} is no event ({str(exc)[:200]})")
                continue
            if isinstance(event, dict):
                yield event
            else:
                damage.append(f"line {no} is no event (a JSON {type(event).__name__}, not an object)")
        return
    n = 0
    try:
        for event in fastavro.reader(io.BytesIO(body)):
            if isinstance(event, dict):
                n += 1
                yield event
    except Exception as exc:  # noqa: BLE001 - any failure of fastavro on damaged bytes: the rest is unreadable
        damage.append(f"the Avro container is unreadable after {n} event(s) ({type(exc).__name__}: "
                      f"{str(exc)[:200]})")


_GZIP_CHUNK = 1 << 16


def _gunzip(body: bytes, damage: list[str]) -> bytes:
    """The bytes of a gzip file (its members one after another), as far as they can be read."""
    out: list[bytes] = []
    rest = body
    while rest:
        d = zlib.decompressobj(wbits=31)
        try:
            for i in range(0, len(rest), _GZIP_CHUNK):
                out.append(d.decompress(rest[i:i + _GZIP_CHUNK]))
                if d.eof:
                    break
            out.append(d.flush())
        except zlib.error as exc:
            damage.append(f"the gzip stream is damaged ({exc}); the lines before the damage are read")
            break
        if not d.eof:
            damage.append("the gzip stream is cut short; the lines before the cut are read")
            break
        rest = d.unused_data
    return b"".join(out)


def _times_as_ms(event: dict[str, Any]) -> dict[str, Any]:
    """NDJSON objects spell times as ISO-8601; the hot tier stores epoch milliseconds."""
    for name in ("timestamp", "ingest_ts"):
        value = event.get(name)
        if isinstance(value, str):
            event[name] = epoch_ms(datetime.fromisoformat(value.replace("Z", "+00:00")))
    return event


def to_action(event: dict[str, Any], namer: IndexNamer, index: str | None = None) -> dict[str, Any]:
    """The bulk action that puts ``event`` where the hot sink would have (or into ``index``)."""
    doc, ts = document(event)
    return {"_op_type": "index", "_index": index or namer.index_for(event, ts), "_id": str(event["event_id"]),
            "_source": doc}


def object_actions(bucket: str, key: str, body: bytes, namer: IndexNamer, index: str | None, start_ms: int,
                   end_ms: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The bulk actions of one cold object's events in [start_ms, end_ms], and what could not be read.

    A corrupt or truncated object (a cut upload, a disk error) or one malformed event in it must not end
    the rehydration of the others, nor cost the events read before the damage: those are indexed, and the
    damage is reported with the object's key, so that the operator can look at that object."""
    actions: list[dict[str, Any]] = []
    errors: list[str] = []
    damage: list[str] = []
    for n, event in enumerate(read_events(key, body, damage), 1):
        try:
            if start_ms <= epoch_ms(event["timestamp"]) <= end_ms:
                actions.append(to_action(event, namer, index))
        except Exception as exc:  # noqa: BLE001 - one malformed event: reported, the object's others go on
            errors.append(f"s3://{bucket}/{key}: event {n} (id {str(event.get('event_id'))[:200]}) cannot be "
                          f"indexed ({type(exc).__name__}: {str(exc)[:200]}); the object's other events were")
    errors += [f"s3://{bucket}/{key}: {d}; check the object (a cut or damaged upload)" for d in damage]
    return actions, errors


def install_templates(settings: Settings) -> None:
    """The hot tier's index templates, as the hot worker installs them (idempotent)."""
    import asyncio

    from streams.clients import async_es_client
    from streams.sinks.elasticsearch.templates import install

    async def run() -> None:
        client = async_es_client(settings.elasticsearch)
        try:
            await install(client, settings.routing, settings.hot)
        finally:
            await client.close()

    asyncio.run(run())


def rehydrate(settings: Settings, project: str, task_id: str, start: datetime, end: datetime,
              index: str | None = None, conf: ColdSinkSettings | None = None, es: Any | None = None,
              on_plan: Callable[[int], None] | None = None, on_progress: Callable[[int], None] | None = None,
              chunk_size: int = 1000, metrics: bool = False) -> RehydrateReport:
    """Index the task's cold events (``metrics``: its metric points) in [start, end] into the hot tier's daily
    indices (or ``index``); ``on_progress(n)`` after each object. Raises NotFound when the task has no
    object in the range."""
    from elasticsearch import helpers

    if end < start:
        raise SluiceError(f"--to ({end.isoformat()}) is before --from ({start.isoformat()})")
    conf = conf or settings.cold
    store = ObjectStore(settings.object_store, conf)
    bucket = bucket_for(settings, project)
    report = RehydrateReport(bucket)
    key_prefix = conf.metrics_prefix if metrics else ""
    try:
        objects, listed = find_objects(store, bucket, project, task_id, start, end, key_prefix)
    except Exception as exc:
        raise SluiceError(f"cannot list {bucket} at {settings.object_store.endpoint_url}: {exc}") from exc
    report.objects_listed = listed
    report.objects_skipped = listed - len(objects)
    if not objects:
        raise NotFound(f"no cold object of project {project}, task {task_id} holds events between "
                       f"{start.isoformat()} and {end.isoformat()} (bucket {bucket}, {listed} object(s) under "
                       f"{key_prefix}{project}/{task_id}/ for those days); check the task id and the days")
    if on_plan is not None:
        on_plan(sum(o.count or 0 for o in objects))
    client = es or es_client(settings.elasticsearch)
    if index is None:
        install_templates(settings)
    namer = IndexNamer.of(settings.routing, settings.hot)
    start_ms, end_ms = epoch_ms(start), epoch_ms(end)
    for obj in objects:
        body = store.get(obj.bucket, obj.key)
        actions, unread = object_actions(obj.bucket, obj.key, body, namer, index, start_ms, end_ms)
        report.errors += unread
        report.indices.update(a["_index"] for a in actions)
        ok, errors = helpers.bulk(client, actions, chunk_size=chunk_size, raise_on_error=False, max_retries=5)
        report.events_indexed += ok
        report.errors += [json.dumps(e, default=str)[:500] for e in (errors if isinstance(errors, list) else [])]
        report.objects_read += 1
        if on_progress is not None:
            on_progress(obj.count if obj.count is not None else len(actions))
    if report.indices:
        client.indices.refresh(index=",".join(sorted(report.indices)))
    if report.errors:
        raise PartlyDone(f"{len(report.errors)} event(s) could not be indexed ({report.events_indexed} were); "
                         f"first: {report.errors[0]}")
    return report
