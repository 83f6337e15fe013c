"""The fault harness configures its workers as an operator would: through settings, in the environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from devtools.faults.pipeline import SESSION_TIMEOUT_MS, run_settings, worker_env
from streams.config import REPO_ROOT, Settings

READ_CONSUMER_CONFIG = """
from streams.config import load_settings
from streams.sinks.kafka_io import sink_consumer_config
conf = sink_consumer_config(load_settings(), "g")
print(conf["session.timeout.ms"], conf["heartbeat.interval.ms"])
"""


def test_a_fault_runs_sink_consumers_get_its_short_session(tmp_path: Path) -> None:
    env = worker_env(run_settings(Settings(), "flt-unit"))
    env["PYTHONPATH"] = str(REPO_ROOT)
    # A worker's own start: the environment is checked (a variable that names no setting stops it), then read.
    out = subprocess.run([sys.executable, "-c", READ_CONSUMER_CONFIG], env=env, cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [str(SESSION_TIMEOUT_MS), str(SESSION_TIMEOUT_MS // 6)]
