"""`sluice worker hot`: every project's event topic and the metrics topic into Elasticsearch.

Kafka -> :class:`~streams.sinks.base.SinkRunner` (admission through the rate controller, offsets,
dead letters, retries) -> :class:`~streams.sinks.elasticsearch.HotSink`; beside it, where the
server has no ILM, the retention job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from streams.config import Settings
from streams.sinks.base import SinkRunner, Watermarks
from streams.sinks.elasticsearch.retention import RetentionTable, delete_expired, retention_loop
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.sink import HotSink
from streams.sinks.kafka_io import KafkaDeadLetters, KafkaRecordSource
from streams.sinks.ratecontrol import Capacity, RateController

log = logging.getLogger(__name__)

STAGE = "hot_sink"


def hot_topics(settings: Settings) -> list[str]:
    return [settings.topics.events_topic(p) for p in settings.projects()] + [settings.topics.metrics]


def project_caps(settings: Settings) -> dict[str, float]:
    """``routing.projects.<p>.events_per_s`` of the projects that have one: their events per second at most."""
    return {p: r.events_per_s for p, r in settings.routing.projects.items() if r.events_per_s is not None}


def build_runner(
    settings: Settings,
    capacity: Capacity | None = None,
    group_id: str = "sluice-hot",
    hot: HotSinkSettings | None = None,
    sink: HotSink | None = None,
    topics: list[str] | None = None,
) -> SinkRunner:
    """The runner the worker runs; tests and benchmarks build it here to look inside it."""
    hot = hot or settings.hot
    controller = RateController(capacity or hot.capacity(), window_s=hot.window_s, utilisation=hot.utilisation,
                                slow_response_s=hot.slow_response_s, project_caps=project_caps(settings),
                                carry_windows=hot.carry_windows)
    source = KafkaRecordSource(settings, topics or hot_topics(settings), group_id, stage=STAGE)
    sink = sink or HotSink(settings.elasticsearch, settings.routing, hot)
    return SinkRunner(source, sink, controller, KafkaDeadLetters(settings), STAGE, ack_cap=True,
                      watermarks=Watermarks.pausing_at(hot.max_in_flight_records),
                      in_flight_windows=hot.in_flight_windows or None)


async def run_hot_worker(
    settings: Settings,
    stop: asyncio.Event,
    capacity: Capacity | None = None,
    group_id: str | None = None,
) -> None:
    """Index until ``stop`` is set, then write what is admitted, commit, and close."""
    hot = settings.hot
    group_id = group_id or hot.group_id
    sink = HotSink(settings.elasticsearch, settings.routing, hot)
    runner = build_runner(settings, capacity, group_id, hot, sink=sink)
    retention: asyncio.Task[None] | None = None
    try:
        # Waits (not ready, saying why) while Elasticsearch cannot be reached; a stop ends the wait.
        if not await runner.start_sink(stop):
            return
        if not sink.ilm and hot.retention_interval_s > 0:
            table = RetentionTable.from_routing(settings.routing, hot)
            try:
                await delete_expired(sink.client, table)
            except Exception:
                log.exception("retention: first pass failed; the next runs in %.0f s", hot.retention_interval_s)
            retention = asyncio.create_task(retention_loop(sink.client, table, hot.retention_interval_s, stop))
        # run() starts the sink again: a started sink returns at once.
        await runner.run(stop)
    finally:
        if retention is not None:
            retention.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retention
        runner.source.close()
        log.info("hot worker stopped: %s", ", ".join(f"{n} {what}" for what, n in runner.stats.items()))
