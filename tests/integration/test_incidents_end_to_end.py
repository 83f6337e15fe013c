"""Job incidents through the real workers: `sluice worker assemble` and `sluice worker watch` (real
processes) on the real Kafka, registry and Elasticsearch, fed whole multi-rank jobs as their nodes'
agents would send them (devtools.testing.jobs: built from real logs, and real multi-rank logs as they
are). Each job's incident must name its first failure, and each job failure must raise one alert.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devtools.incident_latency import OutputReader, Outputs, by_task, latencies, produce_jobs, worker_env
from devtools.testing.jobs import Job, arranged_jobs, real_jobs
from streams.clients import es_client
from streams.config import REPO_ROOT, ProjectRoute, Settings
from streams.contracts import register_all
from streams.topics import create_topics, topic_specs
from streams.watch.firstfail import RULE
from streams.watch.settings import WatchSettings

QUIET_S = 5.0  # the watch window of this test (the default is 60 s: docs/incidents.md has its figures)


@pytest.fixture
def isolated(stack: Settings, unique_name: Callable[[str], str]) -> tuple[Settings, WatchSettings, str]:
    tag = unique_name("inc")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "incidents": f"{tag}.incidents", "raw_partitions": 3, "events_partitions": 2,
    })
    routing = stack.routing.model_copy(update={"default_project": tag, "projects": {tag: ProjectRoute()}})
    settings = stack.model_copy(update={"topics": topics, "routing": routing})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    conf = WatchSettings(app_id=f"{tag}-watch", incident_quiet_s=QUIET_S, incident_tick_s=1)
    return settings, conf, f"{tag}-assemble"


def wait_for(reader: OutputReader, jobs: list[Job], timeout_s: float) -> Outputs:
    """Until every job has its incidents and nothing has changed for a few seconds (late updates)."""
    want = {j.task_id: len(j.expect) for j in jobs}
    deadline = time.monotonic() + timeout_s
    last, stable_since = None, time.monotonic()
    while time.monotonic() < deadline:
        out = reader.snapshot()
        got = {task: len(records) for task, records in by_task(out).items()}
        state = json.dumps([out.incidents, out.alerts], sort_keys=True, default=str)
        if state != last:
            last, stable_since = state, time.monotonic()
        if got == want and time.monotonic() - stable_since > QUIET_S + 3:
            return out
        time.sleep(0.5)
    return reader.snapshot()


def test_every_job_names_its_first_failure_and_raises_one_alert(isolated, worker_processes, corpus: Path) -> None:
    settings, conf, assemble_id = isolated
    project = settings.routing.default_project
    env = worker_env(settings, conf, assemble_id)
    _asm, asm_log = worker_processes(["worker", "assemble", "--loglevel", "warn"], env)
    _watch, watch_log = worker_processes(["worker", "watch", "--loglevel", "warn"], env)
    jobs = arranged_jobs(corpus, int(time.time() * 1000) - 20 * 60_000) + real_jobs(corpus)
    reader = OutputReader(settings).start()
    try:
        time.sleep(8)  # both workers in their groups: the latency below is the pipeline's, not a start
        acked = produce_jobs(settings, jobs, project)
        out = wait_for(reader, jobs, 180)
    finally:
        reader.stop()
    logs = f"\nassemble: {asm_log.read_text()[-2000:]}\nwatch: {watch_log.read_text()[-3000:]}"

    tasks = by_task(out)
    for job in jobs:
        got = tasks.get(job.task_id, [])
        assert [(r["root_class"], r["first_rank"], r["first_process"]) for r in got] == \
            [(e.root_class, e.rank, e.process) for e in job.expect], f"{job.name}: {[r['summary'] for r in got]}{logs}"
        for record, expect in zip(got, job.expect, strict=True):
            assert expect.node is None or record["first_node"] == expect.node, job.name
            assert expect.signal is None or record["root_signal"] == expect.signal, job.name
    unknown = tasks["hang-job"][0]
    assert "root cause unknown" in unknown["summary"] and unknown["collateral_kinds"]["nccl_timeout"] == 8

    # One alert per job failure, each naming its incident's root in its first line; nothing per class.
    alerts = list(out.alerts.values())
    assert {a["rule"] for a in alerts} == {RULE}, sorted({a["rule"] for a in alerts})
    assert len(out.raised) == sum(len(j.expect) for j in jobs)
    for record in out.incidents.values():
        alert = out.alerts[record["alert_id"]]
        assert record["summary"] in alert["summary"].splitlines()[0]
        assert record["incident_id"] == alert["details"]["incident_id"]

    # Decided once the task was quiet for the watch window: in event time (a later record of the task, as
    # between the two accelerate runs) or in wall time (a job that went silent).
    rows = latencies(jobs, acked, out)
    assert all(r["stream_ms"] >= QUIET_S * 1000 or r["stage_ms"] >= QUIET_S * 1000 for r in rows), json.dumps(rows)
    print(f"\nincident latency (quiet {QUIET_S:.0f} s): {json.dumps(rows)}")

    es = es_client(settings.elasticsearch)
    index = f"{conf.incidents_index_prefix}{project}"
    es.indices.refresh(index=index)
    docs = [h["_source"] for h in es.search(index=index, size=1000)["hits"]["hits"]]
    incidents = {d["incident_id"]: d for d in docs if d["doc"] == "incident"}
    assert set(incidents) == set(out.incidents), "indexed under _id = incident_id, once each"
    ranks = [d for d in docs if d["doc"] == "rank"]
    assert len(ranks) == sum(len(r["timeline"]) for r in out.incidents.values())
    es.indices.delete(index=index)
    es.indices.delete(index=f"{conf.alerts_index_prefix}{project}", ignore_unavailable=True)


def test_sluice_incident_prints_the_root_event_whole_then_the_ranks(stack: Settings, unique_name: Callable[[str], str],
                                                                    corpus: Path) -> None:
    """The CLI against the real Elasticsearch: an incident and its root event indexed as the watch stage
    and the hot sink index them."""
    import asyncio

    from devtools.testing.jobs import JOB_EPOCH_MS, job_events, oom_job
    from devtools.testing.watch import MemoryWatchStore
    from streams.clients import async_es_client
    from streams.sinks.elasticsearch.request import IndexNamer
    from streams.watch.engine import WatchEngine
    from streams.watch.observation import from_record
    from streams.watch.publish import INCIDENT_MAPPINGS, AlertIndexer

    project = unique_name("inccli")
    events = job_events([oom_job(corpus, JOB_EPOCH_MS)], project)
    conf = WatchSettings()
    engine, store = WatchEngine(conf), MemoryWatchStore(conf)
    records: dict[str, dict[str, Any]] = {}
    closer = {**events[-1], "event_id": "closer", "timestamp": events[-1]["timestamp"] + 3600_000,
              "message": "done", "error_class": None, "signal": None, "level": "INFO"}
    for event in [*events, closer]:
        for change in engine.observe_all(from_record(event), store)[1]:
            records[change.incident["incident_id"]] = change.incident
    (record,) = records.values()
    root = next(e for e in events if e["event_id"] == record["root_event_id"])

    es = es_client(stack.elasticsearch)
    namer = IndexNamer.of(stack.routing, stack.hot)
    events_index = f"{namer.events_prefix(project)}-sft-2026.01.01"
    es.index(index=events_index, id=root["event_id"], document={**root, "timestamp": root["timestamp"]},
             refresh="wait_for")

    async def index_incident() -> None:
        client = async_es_client(stack.elasticsearch)
        await AlertIndexer(client, conf.incidents_index_prefix, mappings=INCIDENT_MAPPINGS).index_incident(record)
        await client.close()

    asyncio.run(index_incident())
    es.indices.refresh(index=f"{conf.incidents_index_prefix}{project}")
    try:
        cli = [sys.executable, "-m", "streams.cli", "incident", record["task_id"], "--project", project]
        text = subprocess.run(cli, capture_output=True, text=True, cwd=REPO_ROOT, timeout=60, check=True).stdout
        lines = text.splitlines()
        assert lines[1] == record["summary"]
        body = text[text.index("Root cause: cuda_oom"):text.index("Timeline:")]
        assert all(f"  {line}" in body for line in root["message"].splitlines()), "the root event, whole"
        timeline = text[text.index("Timeline:"):text.index("Collateral:")].splitlines()[1:-1]
        assert timeline[0].split()[:3] == ["+0.000s", "oom-node-1:5", "root"]
        assert len(timeline) == len(record["timeline"])
        assert "nccl_timeout" in text[text.index("Collateral:"):]

        as_json = subprocess.run([*cli, "-o", "json"], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
                                 check=True).stdout
        payload = json.loads(as_json)
        assert payload["incident"]["incident_id"] == record["incident_id"]
        assert payload["root_event"]["message"] == root["message"]

        missing = subprocess.run([sys.executable, "-m", "streams.cli", "incident", "no-such-task", "--project",
                                  project], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60, check=False)
        assert missing.returncode == 5 and "no incident of task 'no-such-task'" in missing.stderr
    finally:
        es.indices.delete(index=events_index, ignore_unavailable=True)
        es.indices.delete(index=f"{conf.incidents_index_prefix}{project}", ignore_unavailable=True)
