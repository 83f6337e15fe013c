"""The faults. Each takes the run's pipeline (and a private server where it needs one) and returns a
short description; none of them ever touches the shared stack (only servers the run started itself).
"""

from __future__ import annotations

import time
from typing import Any

from devtools.faults.pipeline import Pipeline
from devtools.stack.base import tcp_open


def hold(pipeline: Pipeline, seconds: float) -> None:
    """Wait, restarting any worker that died by itself meanwhile."""
    deadline = time.monotonic() + seconds
    while True:
        pipeline.restart_dead()
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(0.5, left))


def kill_worker(pipeline: Pipeline, stage: str) -> str:
    """kill -9 wherever the worker is (mid-batch, mid-upload, mid-commit), then start a replacement."""
    pipeline.kill9(stage)
    pipeline.start(stage)
    return f"kill -9 {stage}"


def rebalance(pipeline: Pipeline, hold_s: float, kill_it: bool = False) -> str:
    """A second assemble worker joins (the group rebalances), works for a while, then leaves again."""
    pipeline.start("assemble", "assemble-2")
    hold(pipeline, hold_s)
    if kill_it:
        pipeline.kill9("assemble-2")
    else:
        pipeline.stop("assemble-2", timeout_s=20.0)
    return f"rebalance: second assemble worker for {hold_s:.0f} s, then {'kill -9' if kill_it else 'SIGTERM'}"


def outage(pipeline: Pipeline, service: Any, seconds: float, what: str) -> str:
    """Stop a private server for ``seconds``, then start it again (its data is kept)."""
    t0 = time.monotonic()
    service.down()
    hold(pipeline, seconds)
    service.up()
    return f"{what} down {seconds:.0f} s (back after {time.monotonic() - t0:.0f} s)"


def broker_restart(pipeline: Pipeline, service: Any, hard: bool = False) -> str:
    """Restart the private Kafka broker: a clean shutdown, or kill -9 when ``hard``."""
    import os
    import signal

    t0 = time.monotonic()
    if hard:
        pid = service.pid()
        if pid:
            os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while service.pid() is not None and time.monotonic() < deadline:  # pid() treats a zombie as gone
                time.sleep(0.1)
    service.down()
    deadline = time.monotonic() + 30
    while tcp_open(service.port()) and time.monotonic() < deadline:  # the dead broker's port, until released
        time.sleep(0.2)
    service.up()
    return f"Kafka broker {'kill -9 and ' if hard else ''}restart ({time.monotonic() - t0:.0f} s)"

