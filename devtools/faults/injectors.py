"""The faults. Each takes the run's pipeline (and a private server or the run's network where it needs
one) and returns a short description; none of them ever touches the shared stack: the registry is
shared, so its outage is the run's own proxies refusing connections, never the server stopped.

- workers: kill -9 (:func:`kill_worker`), a rebalance (:func:`rebalance`);
- servers: stopped cleanly (:func:`outage`), killed with SIGKILL (:func:`kill_server`), frozen with
  SIGSTOP (:func:`hang`: the process holds its connections and answers nothing), the broker restarted;
- the network between one worker and one server (:func:`net_fault`): Toxiproxy's latency, blackhole,
  reset, slow close, bandwidth limit, or the link down;
- Elasticsearch answering 429, 503 or 401 for a while (:func:`es_answers`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Any

from devtools.faults.network import Network
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



def kill_server(pipeline: Pipeline, service: Any, what: str) -> str:
    """SIGKILL a private server's whole process group (no shutdown, no flush), then start it again."""
    t0 = time.monotonic()
    pid = service.pid()
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while service.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.1)
    service.down()
    deadline = time.monotonic() + 30
    while tcp_open(service.port()) and time.monotonic() < deadline:
        time.sleep(0.2)
    hold(pipeline, 1.0)
    service.up()
    return f"{what} kill -9 and restart (back after {time.monotonic() - t0:.0f} s)"


def hang(pipeline: Pipeline, service: Any, seconds: float, what: str) -> str:
    """SIGSTOP a private server for ``seconds``, then SIGCONT: connections stay open, nothing answers
    (a JVM in a long GC pause, a host swapping, a disk that stopped answering)."""
    pid = service.pid()
    if not pid:
        return f"{what} not running: no hang"
    os.killpg(pid, signal.SIGSTOP)
    try:
        hold(pipeline, seconds)
    finally:
        os.killpg(pid, signal.SIGCONT)
    return f"{what} frozen (SIGSTOP) {seconds:.0f} s"


def net_fault(pipeline: Pipeline, network: Network, links: list[str], kind: str, seconds: float) -> str:
    """Toxiproxy fault ``kind`` on the named links (``<stage>-<server>``) for ``seconds``."""
    for link in links:
        network.toxiproxy.fault(link, kind)
    try:
        hold(pipeline, seconds)
    finally:
        for link in links:
            network.toxiproxy.heal(link)
    return f"network {kind} on {', '.join(links)} for {seconds:.0f} s"


def es_answers(pipeline: Pipeline, network: Network, status: int, seconds: float) -> str:
    """Elasticsearch answers every request of the hot sink with ``status`` for ``seconds``. On 401 the hot
    sink is expected to stop (refused credentials) and be restarted, as its Deployment would."""
    link = "hot-elasticsearch"
    es = network.toxiproxy.proxies[link].upstream
    before = network.es_answers.answered
    if status == 401:
        pipeline.expect_refused.add("hot")
    network.es_answers.answer(status)
    network.toxiproxy.reroute(link, network.es_answers.netloc)
    try:
        hold(pipeline, seconds)
    finally:
        network.toxiproxy.reroute(link, es)
    hold(pipeline, 3.0)  # a worker that stopped on the last refused request is restarted within this
    pipeline.expect_refused.discard("hot")
    return f"Elasticsearch answered {status} for {seconds:.0f} s ({network.es_answers.answered - before} requests)"
