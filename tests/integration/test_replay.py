"""`sluice replay` on the real stack: a deleted time range comes back exactly, the live worker unaffected."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from devtools.testing.elasticsearch import (
    EventProducer,
    committed_to_end,
    corpus_events,
    prepare_topics,
    settings_for,
    wait_for,
)
from streams.cli.main import cli
from streams.clients import es_client
from streams.config import Settings

FILES = ("training/vllm_serve_jamba_cuda_oom_kv_cache.log", "training/sglang_nccl_watchdog_timeout_hardwrapped.log")


def _ids(settings: Settings, project: str) -> set[str]:
    es = es_client(settings.elasticsearch)
    es.indices.refresh(index=f"sluice-logs-{project}-*", allow_no_indices=True)
    hits = es.search(index=f"sluice-logs-{project}-*", size=1000, query={"match_all": {}}, source=False,
                     allow_no_indices=True)["hits"]["hits"]
    return {h["_id"] for h in hits}


def _env(settings: Settings, project: str, group: str) -> dict[str, str]:
    return {**os.environ, "SLUICE_ROUTING__DEFAULT_PROJECT": project,
            "SLUICE_ROUTING__PROJECTS": json.dumps({project: {}}),
            "SLUICE_TOPICS__DLQ": settings.topics.dlq, "SLUICE_TOPICS__METRICS": settings.topics.metrics,
            "SLUICE_HOT__GROUP_ID": group, "SLUICE_OBSERVABILITY__PORT": "0"}


def test_replaying_a_deleted_time_range_restores_the_same_documents(
    stack: Settings, corpus: Path, new_topic, unique_name, tmp_path: Path
) -> None:
    project = unique_name("rp").lower().replace("-", "")
    settings = settings_for(stack, project, new_topic("rp-dlq"), new_topic("rp-metrics"))
    prepare_topics(settings)
    producer = EventProducer(settings)
    early = list(corpus_events([corpus / FILES[0]], project, include_metrics=False))
    late = list(corpus_events([corpus / FILES[1]], project, include_metrics=False))
    producer.send_all(early)
    time.sleep(1.5)
    boundary_ms = int(time.time() * 1000)
    time.sleep(1.5)
    producer.send_all(late)

    group = unique_name("rp-live")
    topic = settings.topics.events_topic(project)
    live = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "hot", "--loglevel", "warn"],
                            env=_env(settings, project, group), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        everything = {e["event_id"] for e in early + late}
        assert wait_for(lambda: _ids(settings, project) == everything, 90), "the live worker indexed the topic"
        assert wait_for(lambda: committed_to_end(settings, group, [topic]), 30)

        es = es_client(settings.elasticsearch)
        es.indices.delete(index=f"sluice-logs-{project}-*")
        assert _ids(settings, project) == set()

        env = {"SLUICE_ROUTING__DEFAULT_PROJECT": project, "SLUICE_ROUTING__PROJECTS": json.dumps({project: {}}),
               "SLUICE_TOPICS__DLQ": settings.topics.dlq}
        state = tmp_path / "replay.json"
        result = CliRunner().invoke(cli, ["replay", "--topic", topic, "--from", str(boundary_ms), "--into", "es",
                                          "--state", str(state)], env=env)
        assert result.exit_code == 0, result.output
        late_ids = {e["event_id"] for e in late}
        assert wait_for(lambda: _ids(settings, project) == late_ids, 30), "exactly the range, same ids"

        again = CliRunner().invoke(cli, ["replay", "--topic", topic, "--into", "es",
                                         "--state", str(tmp_path / "all.json")], env=env)
        assert again.exit_code == 0, again.output
        assert wait_for(lambda: _ids(settings, project) == everything, 30), "same ids, same count"
        assert es.count(index=f"sluice-logs-{project}-*")["count"] == len(everything)

        assert live.poll() is None, "the live worker kept running"
        assert committed_to_end(settings, group, [topic]), "its group's offsets were not touched"
        replay_state = json.loads(state.read_text())["next_offset"]
        assert sum(replay_state.values()) >= len(late), "progress saved for a resume"
    finally:
        live.send_signal(signal.SIGINT)
        live.wait(30)
