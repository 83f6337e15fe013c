"""Run a real node agent against the local Kafka with one of the example configs in ``deploy/agents/``.

The example configs read their paths, brokers and topic from the environment (``KAFKA_BROKERS``,
``SLUICE_RAW_TOPIC``, ``SLUICE_LOG_GLOB``, and a state directory per agent), so the recorder and
the integration tests run exactly the file a user starts from. ``lay_out`` copies log files where an
agent expects them: plain files under ``var/log/train/``, container logs under the kubelet's
``var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log`` (the collector's ``container`` operator
and Fluent Bit's kubernetes filter read the pod from that path).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "agents"
POD_DIR = "var/log/pods/train_trainer-{n}_0c3f6f62-1a7e-4c11-9d1e-2f6c58a6b0d{n}/trainer"
# The kubelet's /var/log/containers/<pod>_<namespace>_<container>-<container id>.log links, whose
# names Fluent Bit's kubernetes filter reads the pod from.
CONTAINER_LINK = "var/log/containers/trainer-{n}_train_trainer-{cid}.log"


@dataclass
class AgentRun:
    """One agent process: its command, its environment and where its output goes."""

    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = self.log_path.open("wb") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.command, env={**os.environ, **self.env}, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self, timeout_s: float = 15.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, n: int = 4000) -> str:
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")[-n:]
        return ""


@contextlib.contextmanager
def running(run: AgentRun) -> Iterator[AgentRun]:
    run.start()
    try:
        yield run
    finally:
        run.stop()


def container_id(n: int) -> str:
    return f"{n:x}" * 64 if n else "f" * 64


def lay_out(root: Path, files: Sequence[Path], *, container: bool = False,
            links: bool = False) -> tuple[Path, str]:
    """Copy ``files`` under ``root`` where the agent will tail them; return the directory and its glob.

    ``container``: kubelet pod logs; ``links``: and the /var/log/containers names (the glob then
    names those, as Fluent Bit's tail is configured on Kubernetes)."""
    if links:
        lay_out(root, files, container=True)
        where = root / "var/log/containers"
        where.mkdir(parents=True, exist_ok=True)
        for n, _f in enumerate(files):
            link = root / CONTAINER_LINK.format(n=n, cid=container_id(n))
            link.symlink_to(root / POD_DIR.format(n=n) / "0.log")
        return where, str(where / "*.log")
    if container:
        # one pod per file: the kubelet names a container's log <restart count>.log
        for n, f in enumerate(files):
            where = root / POD_DIR.format(n=n)
            where.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, where / "0.log")
        return root / "var/log/pods", str(root / "var/log/pods/*/*/*.log")
    where = root / "var/log/train"
    where.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copyfile(f, where / f.name)
    return where, str(where / "*.log")


def common_env(brokers: str, topic: str, log_glob: str, state: Path) -> dict[str, str]:
    state.mkdir(parents=True, exist_ok=True)
    return {"KAFKA_BROKERS": brokers, "SLUICE_RAW_TOPIC": topic, "SLUICE_LOG_GLOB": log_glob,
            "RSYSLOG_WORKDIR": str(state), "OTELCOL_STORAGE": str(state), "FLB_DB_DIR": str(state)}


def rsyslog(config: Path, env: dict[str, str], state: Path) -> AgentRun:
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    return AgentRun("rsyslog", [rsyslogd, "-n", "-f", str(config), "-i", str(state / "rsyslogd.pid")], env,
                    state / "rsyslogd.out")


def otelcol(binary: Path, config: Path, env: dict[str, str], state: Path) -> AgentRun:
    return AgentRun("otelcol", [str(binary), "--config", str(config)], env, state / "otelcol.out")


def wait_for(predicate, timeout_s: float, step_s: float = 0.5) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()
