"""Real agents into the real stack, each with its example config from deploy/agents/.

The OpenTelemetry Collector (filelog -> kafka, otlp_proto) and rsyslog (imfile -> omkafka, the JSON
template) tail corpus files into a raw topic of three partitions; the assemble and hot workers (real
processes) put the events in Elasticsearch; per file, they are the events of ``sluice parse`` on the
same file. The agents are installed by ``python -m devtools agents install`` (``make test`` runs it).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devtools.agents.install import ensure_otelcol, ensure_rsyslog
from devtools.agents.run import DEPLOY, AgentRun, common_env, lay_out, running, wait_for
from streams.assemble.pipeline import parse_files
from streams.clients import es_client
from streams.config import ProjectRoute, RoutingSettings, Settings
from streams.contracts import register_all
from streams.topics import create_topics, topic_specs

FILES = ("training/vllm_worker_nccl_illegal_memory_watchdog_chained.log",
         "training/java_apex_hadoop_log4j_stacktraces_wrong_fs.log",
         "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log")
COMPARED = ("message", "line_count", "level", "multiline_kind", "error_class", "error_type", "logger")


@pytest.fixture
def isolated(stack: Settings, unique_name: Callable[[str], str]) -> Any:
    """Settings with this test's own raw/events/metrics/dlq topics, groups and project."""
    tag = unique_name("agt").lower()
    project = tag.replace("-", "").replace(".", "")
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts", "raw_partitions": 3, "events_partitions": 1,
    })
    assemble = stack.assemble.model_copy(update={"app_id": f"{tag}-asm", "idle_timeout_ms": 2000,
                                                 "take_within_s": 0.05})
    routing = RoutingSettings(default_project=project, projects={project: ProjectRoute()})
    settings = stack.model_copy(update={"topics": topics, "assemble": assemble, "routing": routing})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    yield settings, project
    hot = settings.hot
    es_client(stack.elasticsearch).indices.delete(
        index=f"{hot.events_index_prefix}-{project}-*,{hot.metrics_index_prefix}-{project}-*",
        ignore_unavailable=True, allow_no_indices=True)


def worker_env(settings: Settings, project: str) -> dict[str, str]:
    t, a = settings.topics, settings.assemble
    return {**os.environ,
            "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
            "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
            "SLUICE_ASSEMBLE__APP_ID": a.app_id, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": str(a.idle_timeout_ms),
            "SLUICE_ASSEMBLE__TAKE_WITHIN_S": str(a.take_within_s),
            "SLUICE_ROUTING__DEFAULT_PROJECT": project, "SLUICE_ROUTING__PROJECTS": json.dumps({project: {}}),
            "SLUICE_HOT__GROUP_ID": f"{a.app_id}-hot", "SLUICE_OBSERVABILITY__PORT": "0"}


def shape(ev: dict[str, Any]) -> tuple:
    """What the lines decide (empty lines aside: rsyslog and the collector send none)."""
    kept = [ev.get(k) for k in COMPARED]
    kept[0] = "\n".join(ln for ln in (ev.get("message") or "").split("\n") if ln)
    kept[1] = kept[0].count("\n") + 1
    return tuple(kept)


def es_events(settings: Settings, project: str) -> list[dict[str, Any]]:
    es = es_client(settings.elasticsearch)
    pattern = f"{settings.hot.events_index_prefix}-{project}-*"
    es.indices.refresh(index=pattern, allow_no_indices=True)
    hits = es.search(index=pattern, size=10_000, query={"match_all": {}}, allow_no_indices=True)["hits"]["hits"]
    return [h["_source"] for h in hits]


def agent_run(agent: str, settings: Settings, tmp_path: Path, glob: str) -> AgentRun:
    state = tmp_path / "state"
    env = common_env(settings.kafka.bootstrap_servers, settings.topics.raw, glob, state)
    if agent == "otelcol":
        binary = ensure_otelcol(settings.stack.dir)
        return AgentRun(agent, [str(binary), "--config", str(DEPLOY / "otelcol" / "files.yaml")], env,
                        state / "agent.out")
    rsyslogd = ensure_rsyslog()
    return AgentRun(agent, [str(rsyslogd), "-n", "-f", str(DEPLOY / "rsyslog" / "sluice-kafka.conf"),
                            "-i", str(state / "rsyslogd.pid")], env, state / "agent.out")


@pytest.mark.agents
@pytest.mark.parametrize("agent", ["otelcol", "rsyslog"])
def test_an_agents_records_become_the_events_of_the_files_it_tailed(
        agent: str, isolated: Any, corpus: Path, tmp_path: Path, worker_processes: Callable[..., Any]) -> None:
    settings, project = isolated
    files = [corpus / f for f in FILES]
    _dir, glob = lay_out(tmp_path, files)
    expected = {f.name: Counter(shape(e) for e in parse_files([f], include_metrics=False)) for f in files}
    total = sum(sum(c.values()) for c in expected.values())

    env = worker_env(settings, project)
    assemble, asm_log = worker_processes(["worker", "assemble", "--loglevel", "warn"], env)
    hot, hot_log = worker_processes(["worker", "hot", "--loglevel", "warn"], env)
    run = agent_run(agent, settings, tmp_path, glob)
    with running(run):
        done = wait_for(lambda: len(es_events(settings, project)) >= total, 180, 1.0)
        assert run.alive(), f"{agent} exited: {run.log_tail()}"
    assert assemble.poll() is None and hot.poll() is None, asm_log.read_text()[-3000:] + hot_log.read_text()[-3000:]
    got: dict[str, Counter] = defaultdict(Counter)
    for ev in es_events(settings, project):
        got[Path(ev["source"]["file"] or "?").name][shape(ev)] += 1
    assert done, f"{sum(sum(c.values()) for c in got.values())} of {total} events in Elasticsearch; " \
                 f"{agent}: {run.log_tail(1500)}"
    for name, want in expected.items():
        missing, extra = want - got[name], got[name] - want
        assert not missing and not extra, f"{agent} {name}: missing {list(missing)[:2]}, extra {list(extra)[:2]}"
    assert set(got) == set(expected)
    shutil.rmtree(tmp_path / "state", ignore_errors=True)
