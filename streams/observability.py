"""Prometheus metrics and health endpoints shared by every worker.

One registry per process. Every worker serves ``/metrics``, ``/healthz`` (the event loop answers)
and ``/readyz`` (the worker has its Kafka assignment and its store answered) on
``observability.port`` (9108 by default; 0 = off). Metric names are the contract in
docs/metrics.md; dashboards and alerts use them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from streams.errors import SluiceError

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()

RECORDS_IN = Counter("sluice_records_in_total", "Kafka records read", ["stage", "topic"], registry=REGISTRY)
SOURCES_SPLIT = Counter("sluice_sources_split_total",
                        "sources whose lines arrive on more than one raw partition (the agent sends no key)",
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
PROJECT_CLAIMS_REFUSED = Counter("sluice_project_claims_refused_total",
                                 "records whose project label their source may not claim (routed as unlabelled)",
                                 ["project"], registry=REGISTRY)
PAUSED = Gauge("sluice_partitions_paused", "1 while the stage has paused its partitions", ["stage"],
               registry=REGISTRY)


# Set by a worker once it has its Kafka assignment and its store answered; /readyz reports it.
READY = {"value": False}


def mark_ready(ready: bool = True) -> None:
    READY["value"] = ready


def metrics_text() -> bytes:
    return bytes(generate_latest(REGISTRY))


# (ok, what to say): a process that knows why it is unhealthy or not ready says so in the answer.
Verdict = Callable[[], tuple[bool, str]]


async def serve(port: int, ready: Callable[[], bool] = lambda: READY["value"],
                host: str = "0.0.0.0", alive: Verdict | None = None,  # noqa: S104 - pods
                readiness: Verdict | None = None) -> Any:
    """Start the HTTP endpoints on the running loop; returns the aiohttp runner (call ``cleanup``)."""
    from aiohttp import web

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(body=metrics_text(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_request: web.Request) -> web.Response:
        ok, why = alive() if alive else (True, "ok")
        return web.Response(text=f"{why}\n", status=200 if ok else 503)

    async def readyz(_request: web.Request) -> web.Response:
        ok, why = readiness() if readiness else (ready(), "")
        return web.Response(text=f"{why or ('ready' if ok else 'not ready')}\n", status=200 if ok else 503)

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise SluiceError(f"cannot serve metrics and health on {host}:{port}: {exc}; another worker on this "
                          "host uses it: give each its own SLUICE_OBSERVABILITY__PORT (0 turns it off)") from exc
    log.info("metrics and health on http://%s:%d/metrics", host, port)
    return runner


def attach_to_faust(app: Any, port: int, host: str) -> None:
    """A Faust worker's endpoints: served from a Faust task, ready once partitions are assigned."""
    if port:
        @app.task
        async def endpoints() -> None:
            await serve(port, host=host)

    async def on_assigned(_sender: Any, assigned: set[Any], **_kwargs: Any) -> None:
        # Ready once the group has given this worker its partitions, even while its topics are idle.
        mark_ready()

    app.on_partitions_assigned.connect(on_assigned)
