"""The cold worker: every ``logs.events.<project>`` topic into the object store, exactly once; beside
it (``cold.metrics_enabled``) a second runner archives ``logs.metrics`` under ``cold.metrics_prefix``,
with its own consumer group (``<group>-metrics``) and segment sizes.

Wiring only: :class:`~streams.sinks.base.SinkRunner` consumes, admits per project, tracks offsets,
dead-letters and pauses; :class:`~streams.sinks.objectstore.sink.ColdSink` cuts, builds and
uploads. Two small adaptations live here:

- records are assigned to the project of their *topic*: the runner queues records per project, and a
  partition's records must reach the sink in offset order for its cuts to be reproducible;
- partitions also pause on the sink's buffered bytes, and a planned stop cuts open segments first
  (recording the cuts) so that it commits everything it has read.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

from streams.config import Settings
from streams.sinks.base import TP, RecordSource, SinkRecord, SinkRunner, Watermarks
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.ratecontrol import Capacity, RateController
from streams.workers.hot import project_caps

log = logging.getLogger(__name__)

STAGE = "cold_sink"
METRICS_STAGE = "cold_metrics"  # the metrics runner's own label: its gauges must not overwrite the events runner's


class TopicProjectSource:
    """A record source whose records belong to their topic's project; revocations reach the sink."""

    def __init__(self, inner: RecordSource, sink: ColdSink, events_prefix: str) -> None:
        self.inner = inner
        self.sink = sink
        self.events_prefix = events_prefix
        self.pauses_partitions = inner.pauses_partitions

    def poll_batch(self, max_records: int, timeout_s: float) -> list[SinkRecord]:
        records = self.inner.poll_batch(max_records, timeout_s)
        for rec in records:
            if rec.topic.startswith(self.events_prefix):
                rec.project = rec.topic[len(self.events_prefix):]
        return records

    def commit(self, points: dict[TP, int]) -> None:
        self.inner.commit(points)

    def positions(self) -> Mapping[TP, int]:
        return self.inner.positions()

    def lag(self) -> Mapping[TP, int]:
        return self.inner.lag()

    def newest_read_ms(self) -> Mapping[TP, int]:
        return self.inner.newest_read_ms()

    def pause(self, partitions: list[TP]) -> None:
        self.inner.pause(partitions)

    def resume(self, partitions: list[TP]) -> None:
        self.inner.resume(partitions)

    def pause_all(self) -> None:
        self.inner.pause_all()

    def resume_all(self) -> None:
        self.inner.resume_all()

    def take_revoked(self) -> list[TP]:
        revoked = self.inner.take_revoked()
        if revoked:
            self.sink.forget(revoked)
        return revoked

    def close(self) -> None:
        self.inner.close()


class ColdSinkRunner(SinkRunner):
    sink: ColdSink

    def __init__(self, source: RecordSource, sink: ColdSink, *args: Any, max_buffered_bytes: int,
                 **kwargs: Any) -> None:
        super().__init__(source, sink, *args, **kwargs)
        self.max_buffered_bytes = max_buffered_bytes

    def _apply_watermarks(self) -> None:
        in_flight = self.tracker.total_in_flight()
        nbytes = self.sink.buffered_bytes()
        high = in_flight >= self.watermarks.high or nbytes >= self.max_buffered_bytes
        low = in_flight <= self.watermarks.low and nbytes <= self.max_buffered_bytes // 2
        if not self._paused and high:
            self.source.pause_all()
            self._paused = True
            log.info("%s: %d records / %d bytes buffered, pausing partitions", self.stage, in_flight, nbytes)
        elif self._paused and low:
            self.source.resume_all()
            self._paused = False
            log.info("%s: %d records / %d bytes buffered, resuming partitions", self.stage, in_flight, nbytes)

    async def drain(self, timeout_s: float = 30.0) -> None:
        self.sink.begin_drain()
        await super().drain(timeout_s)


def events_topics_pattern(settings: Settings) -> str:
    """A regex subscription: projects added later are picked up without a restart."""
    return "^" + re.escape(settings.topics.events_prefix) + ".+"


def build_cold_runner(settings: Settings, group_id: str = "sluice-cold", conf: ColdSinkSettings | None = None,
                      topics: list[str] | None = None, metrics: bool = False,
                      **consumer_overrides: Any) -> ColdSinkRunner:
    """The runner of the cold stage, unstarted (tests and the benchmark drive it themselves). ``metrics``: the
    runner of logs.metrics (metric point objects under ``conf.metrics_prefix``, its rotation)."""
    from streams.sinks.kafka_io import KafkaDeadLetters, KafkaRecordSource

    conf = conf or settings.cold
    if metrics:
        sink = ColdSink(settings, conf.for_metrics(), contract="metric_point", key_prefix=conf.metrics_prefix)
        conf = conf.for_metrics()
        default_topics = [settings.topics.metrics]
    else:
        sink = ColdSink(settings, conf)
        default_topics = [events_topics_pattern(settings)]
    consumer = KafkaRecordSource(settings, topics or default_topics, group_id, stage=STAGE, **consumer_overrides)
    source = TopicProjectSource(consumer, sink, settings.topics.events_prefix)
    controller = RateController(Capacity(conf.records_per_s, conf.record_bytes_per_s),
                                project_caps=project_caps(settings))
    return ColdSinkRunner(
        source, sink, controller, KafkaDeadLetters(settings), METRICS_STAGE if metrics else STAGE,
        watermarks=Watermarks.pausing_at(conf.max_in_flight_records),
        max_buffered_bytes=conf.max_buffered_bytes,
    )


async def run_cold_worker(settings: Settings, stop: asyncio.Event, group_id: str | None = None) -> None:
    """Run the cold stage until ``stop`` is set, then cut, upload and commit what was read."""
    group_id = group_id or settings.cold.group_id
    runners = [build_cold_runner(settings, group_id)]
    log.info("cold worker: group %s, topics %s, bucket %s", group_id, events_topics_pattern(settings),
             settings.object_store.default_bucket)
    if settings.cold.metrics_enabled:
        runners.append(build_cold_runner(settings, f"{group_id}-metrics", metrics=True))
        log.info("cold worker: group %s-metrics, topic %s under %s", group_id, settings.topics.metrics,
                 settings.cold.metrics_prefix)
    await asyncio.gather(*(_run(runner, stop) for runner in runners))


async def _run(runner: ColdSinkRunner, stop: asyncio.Event) -> None:
    try:
        await runner.run(stop)
    finally:
        for status in runner.sink.lifecycle:
            log.info("cold worker: lifecycle on %s: %s (%s)", status.bucket,
                     "applied" if status.applied else "NOT applied", status.detail)
        await asyncio.to_thread(runner.source.close)
