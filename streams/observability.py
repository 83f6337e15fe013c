"""Prometheus metrics and health endpoints shared by every worker.

One registry per process. Every worker serves ``/metrics``, ``/healthz`` (its event loop and its own
loop turn) and ``/readyz`` (it holds partitions, is not rebalancing, and its stores answer) on its
stage's port (assemble 9108, hot 9109, cold 9110, watch 9111) unless ``observability.port`` says
otherwise (0: any free port; the address is logged at start). Metric names are the contract in
docs/metrics.md; dashboards and alerts (deploy/prometheus/) use them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from streams.errors import SluiceError

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()

RECORDS_IN = Counter("sluice_records_in_total", "Kafka records read", ["stage", "topic"], registry=REGISTRY)
SOURCES_SPLIT = Counter("sluice_sources_split_total",
                        "sources whose lines arrive on more than one raw partition (the agent sends no key)",
                        ["stage"], registry=REGISTRY)
SOURCES_FLUSHED = Counter("sluice_assemble_states_flushed_total",
                          "sources whose saved state would be over the state topic's record limit: their open "
                          "blocks were emitted as they stood", ["stage"], registry=REGISTRY)
BLOCKS_EVICTED = Counter("sluice_assemble_blocks_evicted_total",
                         "blocks emitted early because their source held as many open blocks as it may",
                         ["stage"], registry=REGISTRY)
LINES_IN = Counter("sluice_lines_in_total", "raw log lines read by assemble", ["stage"], registry=REGISTRY)
OUTPUTS = Counter("sluice_outputs_total", "records written by a stage, by kind (event, metric, dead_letter)",
                  ["stage", "kind"], registry=REGISTRY)
ACKED = Counter("sluice_sink_acked_total", "records the store acknowledged", ["stage", "project"], registry=REGISTRY)
DEAD_LETTERS = Counter("sluice_dead_letters_total", "records sent to the dead-letter topic",
                       ["stage", "error_type"], registry=REGISTRY)
INTERNAL_ERRORS = Counter("sluice_internal_errors_total",
                          "exceptions of Sluice's own code while handling one record or block (each a dead letter "
                          "of error type internal): bugs, by the step that failed and the exception type",
                          ["stage", "step", "exception"], registry=REGISTRY)
UNROUTED = Counter("sluice_unrouted_events_total",
                   "events whose project is not in the routing table, sent to the default project instead",
                   ["project"], registry=REGISTRY)
TRANSACTIONS_ABORTED = Counter("sluice_transactions_aborted_total",
                               "output transactions rolled back (their input is re-read)", ["stage"],
                               registry=REGISTRY)
PRODUCER_CALLS_WEDGED = Counter("sluice_producer_calls_wedged_total",
                                "transactional producer calls still blocked past their timeout (the producer "
                                "was replaced)", ["stage"], registry=REGISTRY)
PRODUCERS_ABANDONED = Gauge("sluice_producers_abandoned",
                            "replaced producers whose blocked call has not returned (a thread and a client each)",
                            ["stage"], registry=REGISTRY)
RETRIES = Counter("sluice_sink_retries_total", "records handed back for retry", ["stage"], registry=REGISTRY)
THROTTLED = Counter("sluice_sink_throttled_total", "flushes the store pushed back on (429/5xx/slow)",
                    ["stage"], registry=REGISTRY)
THROTTLE_WAIT = Counter("sluice_throttle_wait_seconds_total", "time spent waiting for rate budget",
                        ["stage"], registry=REGISTRY)
BUDGET = Gauge("sluice_rate_budget_events", "events the rate controller allows per window", ["stage"],
               registry=REGISTRY)
BATCH_SIZE = Histogram("sluice_sink_batch_records", "records per store write", ["stage"], registry=REGISTRY,
                       buckets=(1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000))
SINK_LATENCY = Histogram("sluice_sink_latency_seconds", "store write latency", ["stage"], registry=REGISTRY,
                         buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
IN_FLIGHT = Gauge("sluice_records_in_flight", "records read and not yet acknowledged", ["stage"],
                  registry=REGISTRY)
LAG = Gauge("sluice_consumer_lag", "records behind the end of the partition", ["stage", "topic", "partition"],
            registry=REGISTRY)
OPEN_BLOCKS = Gauge("sluice_open_multiline_blocks", "multiline events still open in assemble", ["partition"],
                    registry=REGISTRY)
DEPENDENCY_WAITS = Counter("sluice_dependency_waits_total",
                           "times a stage waited for a server that did not answer (its records stay in Kafka)",
                           ["stage", "dependency"], registry=REGISTRY)
PROJECT_CLAIMS_REFUSED = Counter("sluice_project_claims_refused_total",
                                 "records whose project label their source may not claim (routed as unlabelled)",
                                 ["project"], registry=REGISTRY)
PAUSED = Gauge("sluice_partitions_paused", "1 while the stage has paused its partitions", ["stage"],
               registry=REGISTRY)


LAG_SECONDS = Gauge("sluice_consumer_lag_seconds",
                    "how far behind a stage reads: age of the newest record it has read, on partitions where "
                    "more records wait (0 when caught up)", ["stage"], registry=REGISTRY)
WORKER_READY = Gauge("sluice_worker_ready", "1 while the worker answers /readyz with 200", ["stage"],
                     registry=REGISTRY)

# Each stage's own port, so that the workers of one host do not collide by default.
STAGE_PORTS = {"assemble": 9108, "hot": 9109, "cold": 9110, "watch": 9111}
# The `stage` label of a worker's metrics (the stage names dead letters carry too).
STAGE_LABELS = {"assemble": "assemble", "hot": "hot_sink", "cold": "cold_sink", "watch": "watch"}


def registry_waits(stage: str) -> Callable[[float], None]:
    """The ``on_wait`` callback of a stage's registry lookups: counts each wait for the registry."""
    counter = DEPENDENCY_WAITS.labels(stage, "registry")
    return lambda _delay: counter.inc()


def port_for(stage: str, configured: int | None) -> int:
    """``observability.port`` when set (0: any free port), else the stage's own port."""
    return STAGE_PORTS[stage] if configured is None else configured


class Health:
    """What ``/readyz`` and ``/healthz`` answer, kept up to date by the worker as it runs.

    Ready: the worker has partitions assigned, is not in a rebalance, and every store it needs answered
    the last time it was used. Alive: the event loop has turned within ``stuck_after_s`` (a heartbeat
    task marks it), and so has the worker's own loop (a turn: a batch, an idle tick, a sink step).
    Answered from a thread, so a stuck event loop is reported instead of timing the probe out.
    """

    def __init__(self, stuck_after_s: float = 120.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.stuck_after_s = stuck_after_s
        self.assigned: int | None = None  # partitions assigned; None until the first assignment
        self.rebalancing = False
        self.stores: dict[str, str] = {}  # store -> why it cannot be reached (absent: it answered)
        self.last_beat = clock()
        self.last_turn = clock()

    def beat(self) -> None:
        self.last_beat = self.clock()

    def turned(self) -> None:
        self.last_turn = self.clock()

    def store(self, name: str, problem: str | None) -> None:
        """``problem`` None: the store answered; else why it could not be reached."""
        if problem is None:
            self.stores.pop(name, None)
        else:
            self.stores[name] = problem

    def assignment(self, partitions: int) -> None:
        self.assigned = partitions
        self.rebalancing = False

    def revoked(self) -> None:
        self.rebalancing = True

    def readiness(self) -> tuple[bool, str]:
        reasons = []
        if not self.assigned:
            reasons.append("no partitions assigned" if self.assigned == 0 else "not assigned partitions yet")
        if self.rebalancing:
            reasons.append("rebalancing")
        reasons += [f"cannot reach {name}: {why}" for name, why in sorted(self.stores.items())]
        return not reasons, "; ".join(reasons) or "ready"

    def liveness(self) -> tuple[bool, str]:
        now = self.clock()
        if now - self.last_beat > self.stuck_after_s:
            return False, f"event loop stuck: no heartbeat for {now - self.last_beat:.0f} s"
        if now - self.last_turn > self.stuck_after_s:
            return False, f"no turn for {now - self.last_turn:.0f} s (bound {self.stuck_after_s:g} s)"
        return True, "ok"


HEALTH = Health()


def mark_ready(ready: bool = True) -> None:
    """A worker without a consumer-group signal of its own (tests): ready as if assigned."""
    if ready:
        HEALTH.assignment(max(1, HEALTH.assigned or 0))
    else:
        HEALTH.assignment(0)


def metrics_text() -> bytes:
    return bytes(generate_latest(REGISTRY))


class Endpoints:
    """``/metrics``, ``/healthz`` and ``/readyz`` served from a thread of their own."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self.server = server
        self.thread = thread

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    async def cleanup(self) -> None:
        await asyncio.to_thread(self.close)


class HealthReport(Protocol):
    """What the endpoints ask: (ok, what to say). :class:`Health` for the stage workers; the shipper has its own."""

    def liveness(self) -> tuple[bool, str]: ...

    def readiness(self) -> tuple[bool, str]: ...


def serve(stage: str, port: int, host: str = "0.0.0.0",  # noqa: S104 - pods
          health: HealthReport | None = None) -> Endpoints:
    """Start the endpoints (port 0: any free one); the address is logged. Raises SluiceError if taken."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    state: HealthReport = health or HEALTH
    WORKER_READY.labels(STAGE_LABELS.get(stage, stage)).set_function(lambda: float(state.readiness()[0]))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._answer(200, metrics_text(), CONTENT_TYPE_LATEST)
            elif path in ("/healthz", "/readyz"):
                ok, why = state.liveness() if path == "/healthz" else state.readiness()
                self._answer(200 if ok else 503, f"{why}\n".encode(), "text/plain; charset=utf-8")
            else:
                self._answer(404, b"not found: /metrics, /healthz, /readyz\n", "text/plain; charset=utf-8")

        def _answer(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Probes every few seconds are not worth a log line."""

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise SluiceError(f"cannot serve metrics and health on {host}:{port}: {exc}; another process on this "
                          f"host uses it: set SLUICE_OBSERVABILITY__PORT to a free port, or 0 for any") from exc
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"{stage}-endpoints", daemon=True)
    thread.start()
    endpoints = Endpoints(server, thread)
    log.info("%s: metrics and health on http://%s:%d/metrics (/healthz, /readyz)", stage, host, endpoints.port)
    return endpoints


async def heartbeat(health: Health | None = None, every_s: float = 1.0) -> None:
    """Mark the event loop alive every ``every_s`` until cancelled."""
    state = health or HEALTH
    while True:
        state.beat()
        await asyncio.sleep(every_s)


def attach_to_faust(app: Any, stage: str, port: int, host: str, health: Health | None = None) -> None:
    """A Faust worker's endpoints and health: ready while it holds partitions outside a rebalance."""
    state = health or HEALTH

    @app.task
    async def endpoints() -> None:
        serve(stage, port, host, state)

    @app.timer(interval=1.0)
    async def beat() -> None:
        state.beat()

    async def on_revoked(_sender: Any, _revoked: set[Any], **_kwargs: Any) -> None:
        state.revoked()

    async def on_assigned(_sender: Any, assigned: set[Any], **_kwargs: Any) -> None:
        # Faust hands the whole new assignment; ready even while its topics are idle.
        state.assignment(len(assigned))

    app.on_partitions_revoked.connect(on_revoked)
    app.on_partitions_assigned.connect(on_assigned)


class PeriodicSummary:
    """Counts what a worker did and says it in one INFO line every ``interval_s``."""

    def __init__(self, stage: str, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.stage = stage
        self.interval_s = interval_s
        self.clock = clock
        self.since = clock()
        self.counts: dict[str, int] = {}

    def add(self, what: str, n: int = 1) -> None:
        if n:
            self.counts[what] = self.counts.get(what, 0) + n

    def maybe_log(self, extra: str = "") -> str | None:
        """The line, logged, once ``interval_s`` has passed since the last one; else None."""
        now = self.clock()
        if self.interval_s <= 0 or now - self.since < self.interval_s:
            return None
        done = ", ".join(f"{n} {what}" for what, n in self.counts.items()) or "nothing"
        line = f"{self.stage}: in the last {now - self.since:.0f} s: {done}" + (f"; {extra}" if extra else "")
        log.info("%s", line)
        self.since, self.counts = now, {}
        return line
