"""`python -m devtools stack` and `demo` as a user runs them: idempotent, health-checked, visible results."""

from __future__ import annotations

import re
import subprocess
import sys

from click.testing import CliRunner

from devtools.cli import main as devtools_cli
from devtools.stack import manager
from streams.config import REPO_ROOT, Settings


def test_second_up_is_a_noop(stack: Settings) -> None:
    before = {s.name: s.pid for s in manager.status(stack)}
    assert all(before.values()), before
    seconds = manager.up(stack, log=lambda _m: None)
    after = {s.name: s.pid for s in manager.status(stack)}
    assert after == before, "a second `stack up` must not restart anything"
    assert seconds < 10


def test_status_reports_every_service_healthy_with_memory(stack: Settings) -> None:
    result = CliRunner().invoke(devtools_cli, ["stack", "status"])
    assert result.exit_code == 0, result.output
    for name in ("kafka", "registry", "elasticsearch", "objectstore"):
        line = next(line for line in result.output.splitlines() if line.startswith(name))
        assert "healthy" in line
        assert line.split()[3].isdigit(), f"no resident memory shown for {name}: {line}"


def test_elasticsearch_runs_as_non_root(stack: Settings) -> None:
    pid = next(s.pid for s in manager.status(stack) if s.name == "elasticsearch")
    out = subprocess.run(["ps", "-o", "user=", "--ppid", str(pid), "-p", str(pid)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out and all(user != "root" for user in out), out


def test_readme_demo_command_end_to_end(stack: Settings) -> None:
    """The README's first command, minus the install: real records, events, documents and objects."""
    proc = subprocess.run([sys.executable, "-m", "devtools", "demo"], capture_output=True, text=True,
                          timeout=600, check=False, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "produced 188 raw lines from 4 corpus files" in out
    # The events count is the offline parse of the same files: the stage online and offline agree.
    assert re.search(r"assemble: 188 lines became \d+ events", out), out
    assert "'cuda_oom': 2" in out and "nccl_timeout" in out
    assert "22 step-metric lines are metric points" in out
    events = int(re.search(r"became (\d+) events", out).group(1))
    # Every event reached both tiers: the same count in Elasticsearch and in the object store.
    assert f"3. hot sink: {events} events in Elasticsearch" in out
    assert "22 metric points" in out
    assert re.search(rf"4. cold sink: {events} events in \d+ Avro objects", out), out
    # Two tasks hit a CUDA OOM: one alert each, however many ranks reported it.
    # (with job incidents on, a job's alert names its root class and the collateral it saw)
    assert len(re.findall(r"\] [a-z_/]*cuda_oom[a-z_/]* in task", out)) == 2, out
    assert re.search(r"\] [a-z_/]*nccl_timeout[a-z_/]* in task sglang_nccl_watchdog_timeout_hardwrapped", out), out
    assert re.search(r"hot :\d+ read \d+ records, wrote [1-9]", out), out
