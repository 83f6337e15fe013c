"""Wire a ``Shipper`` to the real Kafka, registry, checkpoint file and signals (I/O)."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path

from streams.config import Settings
from streams.ship.checkpoint import CheckpointStore
from streams.ship.labels import SourceBuilder, origin
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


def run_until_signalled(shipper: Shipper) -> None:
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %d: finishing in-flight batches", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    shipper.run(stop)
