"""Job incidents through the real workers: produce whole multi-rank jobs to ``logs.raw``, read the incidents
and alerts back, and measure how long after a job's last line its incident is out.

``python -m devtools incident-latency`` starts ``sluice worker assemble`` and ``sluice worker watch`` on
topics of their own (the local stack's Kafka, registry and Elasticsearch), sends every job of
:mod:`devtools.testing.jobs` (the arranged ones with ``t0`` twenty minutes ago, the real logs with their
own times) as its nodes' agents would, and prints per job: the incident's root, and

- wall latency: from the producer's acknowledgement of the job's last raw record to the moment the
  incident record is read from the incidents topic (both on this machine's clock);
- stream latency: ``decided - last_error`` in event time, as the record states (0 when the job went
  silent and the wall clock decided it; at least ``incident_quiet_s`` when a later record of the task did).

The integration test ``tests/integration/test_incidents_end_to_end.py`` uses the same pieces.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.testing.jobs import Job
from streams.config import Settings
from streams.watch.settings import WatchSettings


def worker_env(settings: Settings, conf: WatchSettings, assemble_app_id: str) -> dict[str, str]:
    """The environment that points both workers at ``settings``' topics and ``conf``'s watch settings."""
    t = settings.topics
    return {
        **os.environ,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_TOPICS__INCIDENTS": t.incidents,
        "SLUICE_ROUTING__DEFAULT_PROJECT": settings.routing.default_project,
        "SLUICE_ROUTING__PROJECTS": json.dumps({p: {} for p in settings.routing.projects}),
        "SLUICE_ASSEMBLE__APP_ID": assemble_app_id, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "2000",
        "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05",
        "SLUICE_WATCH__APP_ID": conf.app_id, "SLUICE_WATCH__INCIDENT_QUIET_S": str(conf.incident_quiet_s),
        "SLUICE_WATCH__INCIDENT_TICK_S": str(conf.incident_tick_s), "SLUICE_WATCH__SESSION_TIMEOUT_S": "6",
        "SLUICE_OBSERVABILITY__PORT": "0",
    }


def produce_jobs(settings: Settings, jobs: list[Job], project: str) -> dict[str, float]:
    """Every job's batches onto the raw topic (record time = the batch's first read time); returns each
    task's wall clock (ms) when its last record was acknowledged."""
    from devtools.testing.jobs import raw_batches
    from streams.avro_io import avro_serializer

    serialize = avro_serializer(settings, "raw_batch")
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 5})
    acked: dict[str, float] = {}

    def on_ack(task: str) -> Any:
        def done(err: Any, _msg: Any) -> None:
            if err is None:
                acked[task] = max(acked.get(task, 0.0), time.time() * 1000)
        return done

    for job in jobs:
        for key, batch, ts in raw_batches(job, project):
            producer.produce(settings.topics.raw, key=key, value=serialize(batch, ctx), timestamp=ts,
                             on_delivery=on_ack(job.task_id))
            producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError("raw records not acknowledged within 60 s")
    return acked


@dataclass
class Outputs:
    """What the watch stage published: the latest incident and alert per id, and when each incident id
    was first read (this machine's wall clock, ms)."""

    incidents: dict[str, dict[str, Any]] = field(default_factory=dict)
    first: dict[str, dict[str, Any]] = field(default_factory=dict)  # each incident as first published
    alerts: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_read_ms: dict[str, float] = field(default_factory=dict)
    raised: list[str] = field(default_factory=list)  # alert ids, once each, in the order first read


class OutputReader:
    """Reads the incidents and alerts topics from the start in a thread, until stopped."""

    def __init__(self, settings: Settings) -> None:
        from streams.avro_io import avro_deserializer

        self.settings = settings
        self.out = Outputs()
        self.lock = threading.Lock()
        self._deserialize = avro_deserializer(settings)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> OutputReader:
        self._thread.start()
        return self

    def stop(self) -> Outputs:
        self._stop.set()
        self._thread.join(20)
        return self.out

    def snapshot(self) -> Outputs:
        with self.lock:
            return Outputs(dict(self.out.incidents), dict(self.out.first), dict(self.out.alerts),
                           dict(self.out.first_read_ms), list(self.out.raised))

    def _run(self) -> None:
        t = self.settings.topics
        consumer = Consumer({**self.settings.kafka.client_config(), "group.id": f"reader-{time.monotonic_ns()}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([t.incidents, t.alerts])
        try:
            while not self._stop.is_set():
                msg = consumer.poll(0.2)
                if msg is None or msg.error():
                    continue
                now = time.time() * 1000
                value = self._deserialize(msg.value(), SerializationContext(msg.topic() or "", MessageField.VALUE))
                with self.lock:
                    if msg.topic() == t.incidents:
                        self.out.incidents[value["incident_id"]] = value
                        self.out.first.setdefault(value["incident_id"], value)
                        self.out.first_read_ms.setdefault(value["incident_id"], now)
                    else:
                        if value["alert_id"] not in self.out.alerts:
                            self.out.raised.append(value["alert_id"])
                        self.out.alerts[value["alert_id"]] = value
        finally:
            consumer.close()


def by_task(outputs: Outputs) -> dict[str, list[dict[str, Any]]]:
    tasks: dict[str, list[dict[str, Any]]] = {}
    for record in outputs.incidents.values():
        tasks.setdefault(record["task_id"], []).append(record)
    for records in tasks.values():
        records.sort(key=lambda r: _ms(r["opened"]))
    return tasks


def _ms(value: Any) -> int:
    from streams.watch.observation import to_ms

    return to_ms(value)


def latencies(jobs: list[Job], acked: dict[str, float], outputs: Outputs) -> list[dict[str, Any]]:
    """Per incident, as first published: ``stage_ms``, the watch stage's own latency (decided minus the
    arrival of the last failure evidence, wall clock); ``wall_ms``, from the producer's acknowledgement
    of the job's last raw record to reading the incident (assemble, routing and any backlog included);
    ``stream_ms``, decided minus the last error in event time."""
    rows = []
    for task, records in by_task(outputs).items():
        job = next(j for j in jobs if j.task_id == task)
        for record in records:
            first = outputs.first[record["incident_id"]]
            stage = (_ms(first["decided_wall"]) - _ms(first["last_error_seen"])
                     if first["decided_wall"] is not None and first["last_error_seen"] is not None else None)
            rows.append({
                "job": job.name, "root_class": record["root_class"], "first_rank": record["first_rank"],
                "stage_ms": stage, "wall_ms": round(outputs.first_read_ms[record["incident_id"]] - acked[task]),
                "stream_ms": _ms(first["decided"]) - _ms(first["last_error"]),
            })
    return sorted(rows, key=lambda r: r["job"])


def run(base: Settings, quiet_s: float, tick_s: float, gap_s: float) -> list[dict[str, Any]]:
    """Start both workers on isolated topics, send every job (``gap_s`` apart), return the latency rows."""
    import subprocess
    import sys

    from devtools.testing.jobs import arranged_jobs, real_jobs
    from streams.config import REPO_ROOT, ProjectRoute
    from streams.topics import isolated_settings

    tag = f"inclat{int(time.time())}"
    routing = base.routing.model_copy(update={"default_project": tag, "projects": {tag: ProjectRoute()}})
    settings = isolated_settings(base.model_copy(update={"routing": routing}), tag)
    conf = WatchSettings(app_id=f"{tag}-watch", incident_quiet_s=quiet_s, incident_tick_s=tick_s)
    env = worker_env(settings, conf, f"{tag}-assemble")
    procs = [subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", stage, "--loglevel", "warn"],
                              env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for stage in ("assemble", "watch")]
    try:
        corpus = REPO_ROOT / "corpus"
        jobs = arranged_jobs(corpus, int(time.time() * 1000) - 20 * 60_000) + real_jobs(corpus)
        reader = OutputReader(settings).start()
        time.sleep(15)  # both workers joined their groups
        acked: dict[str, float] = {}
        for job in jobs:
            acked |= produce_jobs(settings, [job], tag)
            time.sleep(gap_s)
        want = sum(len(j.expect) for j in jobs)
        deadline = time.monotonic() + quiet_s * 3 + 120
        while len(reader.snapshot().incidents) < want and time.monotonic() < deadline:
            time.sleep(1)
        return latencies(jobs, acked, reader.stop())
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)


def report(rows: list[dict[str, Any]]) -> str:
    """The rows as a table, with the median and maximum of each latency."""
    import statistics

    lines = [f"{'job':<22}{'root':<18}{'rank':>5}{'stage s':>9}{'end-to-end s':>14}{'stream s':>10}"]
    for r in rows:
        stage = "-" if r["stage_ms"] is None else f"{r['stage_ms'] / 1000:.1f}"
        rank = "-" if r["first_rank"] is None else str(r["first_rank"])
        lines.append(f"{r['job']:<22}{r['root_class'] or 'unknown':<18}{rank:>5}"
                     f"{stage:>9}{r['wall_ms'] / 1000:>14.1f}{r['stream_ms'] / 1000:>10.1f}")
    for name in ("stage_ms", "wall_ms"):
        values = [r[name] for r in rows if r[name] is not None]
        if values:
            lines.append(f"{name}: median {statistics.median(values) / 1000:.1f} s, max {max(values) / 1000:.1f} s "
                         f"over {len(values)} incidents")
    return "\n".join(lines)
