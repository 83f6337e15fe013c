"""The assemble, hot and cold workers of one fault run, as real processes on the run's own names.

A run has a project of its own (``flt-<hex>``): its raw, events, metrics and dead-letter topics, its
consumer groups, its Elasticsearch indices (``logs-<project>-*``, ``metrics-<project>-*``) and its
cold prefix (``<project>/``) are nobody else's. Workers get their configuration from the
environment, as an operator's would: each is ``sluice worker <stage>``, as deployed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from devtools.faults.network import Network
from devtools.stack.base import free_port
from streams.config import REPO_ROOT, ProjectRoute, RoutingSettings, Settings

# A member that died is replaced after this long (librdkafka's default is 45 s, Faust's 60 s): the
# restarted worker gets its partitions back in seconds, which is what lets a CI run kill nine times.
SESSION_TIMEOUT_MS = 6000


def run_settings(base: Settings, project: str, raw_partitions: int = 4) -> Settings:
    """``base`` with every name of the run made its own; the only project is ``project``."""
    topics = base.topics.model_copy(update={
        "raw": f"{project}.raw", "events_prefix": f"{project}.events.", "metrics": f"{project}.metrics",
        "dlq": f"{project}.dlq", "alerts": f"{project}.alerts", "raw_partitions": raw_partitions,
    })
    routing = RoutingSettings(default_project=project, projects={project: ProjectRoute()})
    assemble = base.assemble.model_copy(update={"app_id": f"{project}-assemble"})
    hot = base.hot.model_copy(update={"group_id": f"{project}-hot"})
    return base.model_copy(update={"topics": topics, "routing": routing, "assemble": assemble, "hot": hot})


def cold_group(settings: Settings) -> str:
    return f"{settings.routing.default_project}-cold"


def worker_env(settings: Settings, extra: dict[str, str] | None = None) -> dict[str, str]:
    t = settings.topics
    return {
        **os.environ,
        "SLUICE_KAFKA__BOOTSTRAP_SERVERS": settings.kafka.bootstrap_servers,
        "SLUICE_ELASTICSEARCH__URL": settings.elasticsearch.url,
        "SLUICE_OBJECT_STORE__ENDPOINT_URL": settings.object_store.endpoint_url,
        "SLUICE_OBJECT_STORE__DEFAULT_BUCKET": settings.object_store.default_bucket,
        "SLUICE_REGISTRY__URL": settings.registry.url,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_ROUTING__DEFAULT_PROJECT": settings.routing.default_project,
        "SLUICE_ROUTING__PROJECTS": json.dumps({p: {} for p in settings.routing.projects}),
        "SLUICE_ASSEMBLE__APP_ID": settings.assemble.app_id,
        "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": str(settings.assemble.idle_timeout_ms),
        "SLUICE_HOT__GROUP_ID": settings.hot.group_id,
        # Small objects and a short idle cut: many cuts, so kills land between cut, upload and commit.
        "SLUICE_COLD__ROTATE_RECORDS": "400",
        "SLUICE_COLD__IDLE_FLUSH_S": "3",
        # Faust (assemble) reads these from the environment; the sinks' consumers take the setting.
        "BROKER_SESSION_TIMEOUT": str(SESSION_TIMEOUT_MS / 1000),
        "BROKER_HEARTBEAT_INTERVAL": "1.0",
        "SLUICE_KAFKA__SINK_SESSION_TIMEOUT_S": str(SESSION_TIMEOUT_MS / 1000),
        "SLUICE_COLD__GROUP_ID": cold_group(settings),
        **(extra or {}),
    }


# The line that says why a worker died: the last exception of a traceback, or a one-line SluiceError.
ERROR_LINE = re.compile(r"^(?:[\w.]+(?:Error|Exception|Aborted|Refused|Unavailable|Wedged)|Error)\b.*:|.*\bcrashed\b")


@dataclass
class Worker:
    name: str
    stage: str
    proc: subprocess.Popen[bytes]
    log: Path
    expected_exit: bool = False


@dataclass
class Pipeline:
    """Start, kill, stop and watch the workers of one run; unplanned exits are restarted and counted."""

    settings: Settings
    logdir: Path
    say: Callable[[str], None] = print
    env_extra: dict[str, str] = field(default_factory=dict)
    env_by_stage: dict[str, dict[str, str]] = field(default_factory=dict)  # more environment for one stage
    network: Network | None = None  # the proxies each stage reaches its servers through
    workers: dict[str, Worker] = field(default_factory=dict)
    unplanned_exits: Counter = field(default_factory=Counter)
    # Stages expected to stop on refused credentials now (Elasticsearch answering 401), and those stops.
    expect_refused: set[str] = field(default_factory=set)
    refused_stops: Counter = field(default_factory=Counter)
    exit_notes: list[str] = field(default_factory=list)

    def start(self, stage: str, name: str | None = None) -> Worker:
        name = name or stage
        self.logdir.mkdir(parents=True, exist_ok=True)
        log = self.logdir / f"worker-{name}.log"
        links = self.network.env(stage) if self.network is not None else {}
        env = worker_env(self.settings, {"SLUICE_OBSERVABILITY__PORT": str(free_port()), **links, **self.env_extra,
                                         **self.env_by_stage.get(stage, {})})
        command = ["-m", "streams.cli", "ship"] if stage == "ship" else [
            "-m", "streams.cli", "worker", stage, "--loglevel", "info"]
        with log.open("ab") as fh:
            fh.write(f"\n===== start {name} at {time.strftime('%H:%M:%S')} =====\n".encode())
            fh.flush()
            proc = subprocess.Popen([sys.executable, *command], env=env, cwd=REPO_ROOT, stdout=fh,
                                    stderr=subprocess.STDOUT)
        self.workers[name] = Worker(name, stage, proc, log)
        return self.workers[name]

    def kill9(self, name: str) -> None:
        worker = self.workers.pop(name)
        worker.proc.send_signal(signal.SIGKILL)
        worker.proc.wait(10)

    def stop(self, name: str, timeout_s: float = 40.0) -> int | None:
        """A planned stop (SIGTERM): the worker drains and commits what it has."""
        worker = self.workers.pop(name)
        if worker.proc.poll() is None:
            worker.proc.send_signal(signal.SIGTERM)
            try:
                worker.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.say(f"  {name} did not stop within {timeout_s:.0f} s of SIGTERM; killed")
                worker.proc.kill()
                worker.proc.wait(10)
        return worker.proc.returncode

    def restart_dead(self) -> None:
        """A worker that exited by itself is restarted (as its Deployment would), and counted."""
        for name, worker in list(self.workers.items()):
            code = worker.proc.poll()
            if code is not None:
                tail = worker.log.read_text(errors="replace").strip().splitlines()[-400:]
                reason = next((ln for ln in reversed(tail) if ERROR_LINE.match(ln)), None)
                note = (f"{name} exited with {code} at {time.strftime('%H:%M:%S')}: "
                        f"{(reason or ' | '.join(tail[-3:]))[-400:]} (log: {worker.log})")
                if worker.stage in self.expect_refused and "refused" in " ".join(tail):
                    self.refused_stops[worker.stage] += 1  # stopped with the reason, as it must
                else:
                    self.unplanned_exits[worker.stage] += 1
                    self.exit_notes.append(note)
                    self.say(f"  ! {note}")
                del self.workers[name]
                self.start(worker.stage, name)

    def stop_all(self) -> None:
        for name in list(self.workers):
            self.stop(name)
