"""Wire a ``Shipper`` to the real Kafka, registry, checkpoint file, endpoints and signals (I/O)."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from streams import observability
from streams.config import Settings
from streams.errors import SluiceError
from streams.ship.checkpoint import CheckpointStore
from streams.ship.labels import SourceBuilder, origin
from streams.ship.metrics import ShipCollector
from streams.ship.sender import KafkaSender
from streams.ship.settings import ShipSettings
from streams.ship.shipper import Shipper

log = logging.getLogger(__name__)


def read_podinfo(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None  # not on Kubernetes, or no labels volume: configuration and env only


def build_shipper(settings: Settings, ship: ShipSettings) -> Shipper:
    topic = ship.topic or settings.topics.raw
    node = origin(ship, os.environ, read_podinfo(ship.podinfo_labels_path))
    return Shipper(ship, KafkaSender(settings, ship, topic), CheckpointStore(ship.checkpoint_path),
                   SourceBuilder(node, ship.path_pattern))


def serve_endpoints(shipper: Shipper, port: int, host: str) -> Callable[[], None]:
    """/metrics, /healthz and /readyz of the shipper from a thread of their own; returns a stop function."""
    observability.REGISTRY.register(ShipCollector(shipper))
    endpoints = observability.serve("ship", port, host, shipper.health)
    return endpoints.close


def run_until_signalled(shipper: Shipper, settings: Settings, beside: Sequence[Any] = ()) -> None:
    """Ship until SIGTERM/SIGINT. ``beside``: loops with ``run(stop)`` (the GPU sampler) in their own
    threads, stopped with the shipper."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %d: finishing in-flight batches", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    port = shipper.ship.metrics_port
    stop_endpoints = None
    if port:
        try:
            stop_endpoints = serve_endpoints(shipper, port, settings.observability.host)
        except SluiceError as exc:  # the logs matter more than their metrics: ship anyway
            log.error("%s; shipping without /metrics and /healthz (set SLUICE_SHIP__METRICS_PORT)", exc)  # noqa: TRY400 - the reason is the message; no traceback
    threads = [threading.Thread(target=b.run, args=(stop,), name=type(b).__name__, daemon=True) for b in beside]
    for thread in threads:
        thread.start()
    try:
        shipper.run(stop)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        if stop_endpoints is not None:
            stop_endpoints()
