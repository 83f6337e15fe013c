"""The watch stage as a Faust app: training-health alerts from changelogged, windowed tables.

Two agents:

- ``route`` reads logs.metrics and every logs.events.<project>, decodes the Avro records, reduces
  each to an :class:`~streams.watch.observation.Observation` and re-keys it by task onto the
  internal ``<app_id>-by-task`` topic. Source records are acknowledged only after Kafka has the
  forwarded observations, so nothing is skipped across a crash.
- ``watch`` reads the by-task topic, where every record of a task (all ranks, events and metrics)
  lands in one partition, and runs :class:`~streams.watch.engine.WatchEngine` against three tables:
  ``task_state`` (last step progress, loss history, per-rank idle bookkeeping), ``incidents``
  (cooldown and de-duplication) and ``gpu_util``, a hopping window table (size
  ``gpu_idle_window_s``, step ``gpu_idle_step_s``) of utilisation sums per rank, on event time.
  Tables are in memory and written through to their changelog topics; after a restart Faust
  rebuilds them from there before the agent sees a record.

A new alert is produced to logs.alerts (Avro ``Alert``, keyed by ``alert_id``) and awaited, indexed
into ``sluice-alerts-<project>`` (``_id`` = ``alert_id``) and offered to the optional webhook.
Updates of an open incident (more ranks folded in) are coalesced and written once a second.

A task with a task_id gets job incidents instead of per-class error alerts
(:mod:`streams.watch.firstfail`): a decided incident goes to logs.incidents (Avro ``Incident``, keyed
by ``incident_id``) and ``sluice-incidents-<project>`` before its one alert. The router stamps each
observation with the wall clock (``seen_ms``); a timer ticks every task whose open incident has been
quiet that long in wall time (a dead job logs nothing that would close it), through the by-task
topic, so that the agent decides it in order with the task's records and its table writes.

The broker does not create topics on demand and Faust is not allowed to declare any: the by-task
topic and the changelogs are created here, from :func:`internal_topic_specs`, before Faust starts.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import io
import logging
import struct
import time
from collections import Counter
from typing import Any

import fastavro
import faust

from streams import observability
from streams.assemble.outputs import OutputEncoder, registry_schema_lookup
from streams.assemble.pipeline import Output
from streams.clients import async_es_client
from streams.config import Settings
from streams.contracts import parsed_schema
from streams.errors import DependencyFailure
from streams.faust_bytes import bytes_topic
from streams.rdkafka import AssignedActives, use_client_config
from streams.registry import schema_ids_ready, until_answered
from streams.topics import TopicSpec, create_topics
from streams.watch.engine import WatchEngine
from streams.watch.firstfail import KEY_SUFFIX, IncidentChange, due
from streams.watch.incidents import AlertChange
from streams.watch.observation import Observation, from_record
from streams.watch.publish import INCIDENT_MAPPINGS, AlertEncoder, AlertIndexer
from streams.watch.settings import WatchSettings
from streams.watch.webhook import WebhookNotifier
from streams.watch.windows import UtilSample, empty_sample, faust_range, merge_samples

log = logging.getLogger(__name__)

STAGE = "watch"
TABLES = ("task_state", "incidents", "gpu_util")
BY_TASK_RETENTION_MS = 24 * 3600 * 1000  # a hand-off buffer: read within seconds, kept a day for replays
UPDATE_FLUSH_S = 1.0


def internal_topic_specs(settings: Settings, conf: WatchSettings) -> list[TopicSpec]:
    windowed_retention = str(max(2 * conf.window_expires_s * 1000, BY_TASK_RETENTION_MS))
    return [
        TopicSpec(conf.by_task_topic(), conf.partitions, {"retention.ms": str(BY_TASK_RETENTION_MS)}),
        TopicSpec(conf.changelog_topic("task_state"), conf.partitions, {"cleanup.policy": "compact"}),
        TopicSpec(conf.changelog_topic("incidents"), conf.partitions, {"cleanup.policy": "compact"}),
        # Window keys stop being written once the window is past: compaction alone would keep them.
        TopicSpec(conf.changelog_topic("gpu_util"), conf.partitions,
                  {"cleanup.policy": "compact,delete", "retention.ms": windowed_retention}),
    ]


def decode_avro(data: bytes, lookup: Any, contract: str) -> dict[str, Any]:
    """Confluent wire format (magic 0, schema id) -> dict, read with our contract as reader schema."""
    if len(data) < 5 or data[0] != 0:
        raise ValueError("not Confluent wire-format Avro (magic byte 0 missing)")
    (schema_id,) = struct.unpack(">I", data[1:5])
    return fastavro.schemaless_reader(io.BytesIO(data[5:]), lookup(schema_id), parsed_schema(contract))  # type: ignore[return-value]


class TableWatchStore:
    """:class:`~streams.watch.engine.WatchStore` over Faust tables (values copied in and out)."""

    def __init__(self, state: Any, incidents: Any, util: Any, conf: WatchSettings) -> None:
        self.state = state
        self.incidents = incidents
        self.util = util  # hopping WindowWrapper, relative to self.timestamp_s
        self.size_ms = conf.gpu_idle_window_s * 1000
        self._ts_s = 0.0

    def timestamp_s(self, _event: Any = None) -> float:
        """The windowed table's clock: the observation's event time, not Kafka's record time."""
        return self._ts_s

    def get_state(self, key: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.state.get(key))

    def put_state(self, key: str, value: dict[str, Any]) -> None:
        self.state[key] = value

    def get_incident(self, key: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.incidents.get(key))

    def put_incident(self, key: str, value: dict[str, Any]) -> None:
        self.incidents[key] = value

    def drop_incident(self, key: str) -> None:
        self.incidents.pop(key, None)

    def add_utilisation(self, key: str, ts_ms: int, sample: UtilSample) -> None:
        self._ts_s = ts_ms / 1000
        self.util[key].apply(merge_samples, sample)

    def utilisation(self, key: str, window_start_ms: int) -> UtilSample | None:
        value = self.util[key][faust_range(window_start_ms, self.size_ms)]
        return value if value and value["n"] else None


registry_wait = observability.registry_waits("watch")


async def encoder_ready(encoder: AlertEncoder) -> None:
    """The encoder's schema id, waiting with backoff while the registry does not answer: an alert
    waits for it rather than ending the worker from the agent or the update timer."""
    if not encoder.ready:
        await until_answered(encoder.schema_id, f"the schema id of {encoder.topic}", on_wait=registry_wait)


class AlertPublisher:
    """Alerts out: Kafka (awaited), the alerts index, the webhook. Updates coalesced per alert id."""

    def __init__(self, settings: Settings, conf: WatchSettings, app: faust.App, registry: Any) -> None:
        self.settings = settings
        self.conf = conf
        self.app = app
        url = settings.registry.url
        self.encoder = AlertEncoder(settings.topics.alerts, registry, url=url)
        self.incident_encoder = AlertEncoder(settings.topics.incidents, registry, "incident", "incident_id", url=url)
        self._indexer: AlertIndexer | None = None
        self._incident_indexer: AlertIndexer | None = None
        self.notifier: WebhookNotifier | None = None
        self.pending: dict[str, dict[str, Any]] = {}
        self.pending_incidents: dict[str, dict[str, Any]] = {}
        self.raised = 0

    @property
    def indexer(self) -> AlertIndexer:
        if self._indexer is None:  # the async client binds to the running loop: made on first use
            self._indexer = AlertIndexer(async_es_client(self.settings.elasticsearch), self.conf.alerts_index_prefix)
        return self._indexer

    @property
    def incident_indexer(self) -> AlertIndexer:
        if self._incident_indexer is None:
            self._incident_indexer = AlertIndexer(async_es_client(self.settings.elasticsearch),
                                                  self.conf.incidents_index_prefix, mappings=INCIDENT_MAPPINGS)
        return self._incident_indexer

    def start(self) -> None:
        if self.conf.webhook_url is not None:
            self.notifier = WebhookNotifier(self.conf)
            self.notifier.start()

    async def _write(self, alerts: list[dict[str, Any]]) -> None:
        await encoder_ready(self.encoder)
        futures = []
        for alert in alerts:
            key, value = self.encoder.encode(alert)
            futures.append(await self.app.producer.send(self.settings.topics.alerts, key, value, None, None, None))
        await asyncio.gather(*futures)
        for alert in alerts:
            await self.indexer.index(alert)

    async def _write_incidents(self, records: list[dict[str, Any]]) -> None:
        await encoder_ready(self.incident_encoder)
        futures = []
        for record in records:
            key, value = self.incident_encoder.encode(record)
            futures.append(await self.app.producer.send(self.settings.topics.incidents, key, value, None, None, None))
        await asyncio.gather(*futures)
        for record in records:
            await self.incident_indexer.index_incident(record)

    async def publish_incidents(self, changes: list[IncidentChange]) -> None:
        """Decided incidents at once (before their alert); updates of published ones coalesced."""
        new = []
        for change in changes:
            if change.new:
                self.pending_incidents.pop(change.incident["incident_id"], None)
                new.append(change.incident)
            else:
                self.pending_incidents[change.incident["incident_id"]] = change.incident
        if new:
            await self._write_incidents(new)

            observability.OUTPUTS.labels("watch", "incident").inc(len(new))
            for record in new:
                log.warning("INCIDENT %s %s", record["incident_id"], record["summary"])

    async def publish(self, changes: list[AlertChange]) -> None:
        new = [c.alert for c in changes if c.new]
        for change in changes:
            if change.new:
                self.pending.pop(change.alert["alert_id"], None)
            else:
                self.pending[change.alert["alert_id"]] = change.alert
        if new:
            await self._write(new)
            self.raised += len(new)

            observability.OUTPUTS.labels("watch", "alert").inc(len(new))
            for alert in new:
                log.warning("ALERT %s %s", alert["alert_id"], alert["summary"])
                if self.notifier is not None:
                    self.notifier.offer(alert)

    async def flush_updates(self) -> None:
        if self.pending_incidents:
            records, self.pending_incidents = list(self.pending_incidents.values()), {}
            await self._write_incidents(records)
        if self.pending:
            alerts, self.pending = list(self.pending.values()), {}
            await self._write(alerts)


class Router:
    """Source records -> observations on the by-task topic; bad records -> the dead-letter topic."""

    def __init__(self, settings: Settings, conf: WatchSettings, app: faust.App, registry: Any) -> None:
        self.settings = settings
        self.conf = conf
        self.app = app
        self.lookup = registry_schema_lookup(registry)
        self.dead_letters = OutputEncoder(settings, registry)

    def contract_of(self, topic: str) -> str:
        return "metric_point" if topic == self.settings.topics.metrics else "log_event"

    def dead_letter(self, msg: Any, error: str) -> Output:
        where = f"{msg.topic}/{msg.partition}@{msg.offset}"
        return Output("dead_letter", self.settings.topics.dlq, msg.key, {
            "original": msg.value or b"", "key": msg.key, "topic": msg.topic, "partition": msg.partition,
            "offset": msg.offset, "stage": STAGE, "error": f"{where}: {error}", "error_type": "undecodable",
            "timestamp": int(time.time() * 1000), "attempts": 1, "headers": {},
        })

    async def on_batch(self, events: list[Any]) -> None:

        for topic, n in Counter(e.message.topic for e in events).items():
            observability.RECORDS_IN.labels("watch", topic).inc(n)
        futures = []
        producer = self.app.producer
        seen_ms = int(time.time() * 1000)
        await schema_ids_ready(self.lookup, (e.message.value for e in events), on_wait=registry_wait)
        for event in events:
            msg = event.message
            try:
                obs = dataclasses.replace(from_record(decode_avro(msg.value, self.lookup, self.contract_of(msg.topic))),
                                          seen_ms=seen_ms)
            except DependencyFailure:
                raise  # the registry, not the record: credentials refused stop the stage
            except Exception as exc:  # noqa: BLE001 - one bad record must not stop the stream: DLQ
                letter = self.dead_letter(msg, f"{type(exc).__name__}: {exc}")
                topic, key, value = await until_answered(functools.partial(self.dead_letters.encode, letter),
                                                         "the dead-letter schema id", on_wait=registry_wait)
                futures.append(await producer.send(topic, key, value, None, None, None))
                continue
            futures.append(await producer.send(self.conf.by_task_topic(), obs.task_key.encode(), obs.to_json(),
                                               None, None, None))
        if futures:
            await asyncio.gather(*futures)
        for event in events:
            event.ack()


def build_app(settings: Settings, conf: WatchSettings | None = None) -> tuple[faust.App, AlertPublisher]:
    from streams.clients import registry_client

    conf = conf or settings.watch
    app = faust.App(
        conf.app_id,
        broker=f"rdkafka://{settings.kafka.bootstrap_servers}",  # streams.rdkafka: one librdkafka client
        # librdkafka's group protocol assigns the partitions: each is active, and range puts a table's
        # changelog partitions where the same source partitions go.
        PartitionAssignor=AssignedActives,
        store="memory://",
        datadir=conf.faust_data_dir(),
        topic_allow_declare=False,  # internal topics come from internal_topic_specs(), created up front
        topic_disable_leader=True,
        topic_partitions=conf.partitions,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=1.0,
        broker_session_timeout=conf.session_timeout_s,
        broker_heartbeat_interval=conf.session_timeout_s / 10,
        web_enabled=False,
        producer_acks=-1,
    )
    use_client_config(app, settings.kafka.client_config())  # TLS/SASL, the logger
    registry = registry_client(settings.registry)
    sources = bytes_topic(app, settings.topics.metrics, *[settings.topics.events_topic(p) for p in settings.projects()])
    by_task = bytes_topic(app, conf.by_task_topic(), partitions=conf.partitions)
    task_state = app.Table("task_state", partitions=conf.partitions)
    incidents = app.Table("incidents", partitions=conf.partitions)
    util_table = app.Table("gpu_util", default=empty_sample, partitions=conf.partitions)
    store = TableWatchStore(task_state, incidents, None, conf)
    store.util = util_table.hopping(conf.gpu_idle_window_s, conf.gpu_idle_step_s,
                                    expires=conf.window_expires_s).relative_to(  # type: ignore[attr-defined]
        store.timestamp_s)  # WindowWrapper has it; Faust's WindowWrapperT protocol omits it
    engine = WatchEngine(conf)
    publisher = AlertPublisher(settings, conf, app, registry)
    router = Router(settings, conf, app, registry)

    @app.agent(sources)
    async def route(stream: Any) -> None:
        async for events in stream.noack_take(conf.take_max, within=conf.take_within_s):
            await router.on_batch(events)

    @app.agent(by_task)
    async def watch(stream: Any) -> None:
        async for event in stream.events():
            obs = Observation.from_json(event.value)
            alerts, decided = engine.observe_all(obs, store)
            if decided:
                await publisher.publish_incidents(decided)
            await publisher.publish(alerts)

    @app.timer(interval=conf.incident_tick_s)
    async def tick_quiet_incidents() -> None:
        """Tick each task whose incident is due in wall time: the agent decides or forgets it in order."""
        now = int(time.time() * 1000)
        for key, state in list(incidents.items()):
            if key.endswith(KEY_SUFFIX) and state.get("task_key") and due(state, now, conf):
                tick = Observation(kind="tick", ts_ms=now, project=state["project"], task_id=state["task_id"],
                                   event_id=f"tick:{now}", seen_ms=now)
                await app.producer.send(conf.by_task_topic(), state["task_key"].encode(), tick.to_json(),
                                        None, None, None)

    @app.task
    async def start_publisher() -> None:
        publisher.start()


    @app.timer(interval=UPDATE_FLUSH_S)
    async def flush_updates() -> None:
        await publisher.flush_updates()
        observability.HEALTH.turned()

    conf_obs = settings.observability
    observability.HEALTH.stuck_after_s = conf_obs.stuck_after_s
    observability.attach_to_faust(app, "watch", observability.port_for("watch", conf_obs.port), conf_obs.host)

    return app, publisher


def run_watch_worker(settings: Settings, loglevel: str = "info") -> None:
    """Blocking: runs until SIGTERM/SIGINT (Faust's own worker handles the signals)."""
    from faust.worker import Worker

    from streams.logs import faust_logging_config, quiet_libraries

    quiet_libraries(loglevel)
    conf = settings.watch
    create_topics(settings, internal_topic_specs(settings, conf))
    app, _publisher = build_app(settings, conf)
    Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False,
           logging_config=faust_logging_config(loglevel, settings.observability.log_format)).execute_from_commandline()

