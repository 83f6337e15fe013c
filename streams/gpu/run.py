"""Wire a :class:`~streams.gpu.sampler.GpuSampler` to NVML or the DCGM exporter, Kafka and the shipper (I/O).

The sampler runs in a thread of its own beside the shipper's loop, with the same stop event: it
wakes once per sample and send, and shares nothing with the shipper but the read-only view of the
files it tails (:func:`known_sources`), which tells a GPU's process which task it belongs to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from streams.config import Settings
from streams.gpu.attribution import KnownSource, ProcCgroups
from streams.gpu.dcgm import DcgmReader
from streams.gpu.nvml import open_nvml
from streams.gpu.reading import GpuReader, GpuReadError
from streams.gpu.sampler import GpuSampler, PointDelivery
from streams.gpu.settings import GpuSettings
from streams.ship.sender import SendError, producer_config
from streams.ship.settings import ShipSettings

log = logging.getLogger(__name__)


class MetricPointSender:
    """Avro ``sluice.v1.MetricPoint`` records to ``topic`` through the registry; delivery reports back."""

    def __init__(self, settings: Settings, ship: ShipSettings, topic: str) -> None:
        from confluent_kafka import Producer
        from confluent_kafka.serialization import MessageField, SerializationContext

        from streams.avro_io import avro_serializer

        self.topic = topic
        self._producer = Producer(producer_config(settings, ship), logger=log)
        self._serializer = avro_serializer(settings, "metric_point")
        self._ctx = SerializationContext(topic, MessageField.VALUE)

    def send(self, key: bytes, value: dict[str, Any], on_delivery: PointDelivery) -> None:
        try:
            payload = self._serializer(value, self._ctx)
        except Exception as exc:  # the registry lookup is I/O: any failure is worth a retry
            raise SendError(f"cannot serialise a MetricPoint for {self.topic} (registry: {exc})") from exc

        def report(err: Any, _msg: Any) -> None:
            on_delivery(None if err is None else SendError(f"delivery to {self.topic} failed: {err}"))

        try:
            self._producer.produce(self.topic, key=key, value=payload, on_delivery=report)
        except BufferError as exc:
            raise SendError(f"producer queue full for {self.topic}") from exc

    def poll(self, timeout_s: float) -> None:
        self._producer.poll(timeout_s)

    def flush(self, timeout_s: float) -> int:
        return int(self._producer.flush(timeout_s))


def open_reader(conf: GpuSettings) -> GpuReader | None:
    """The configured reader, None where there is nothing to sample (``auto`` on a node without GPUs)."""
    if conf.enabled == "off":
        return None
    try:
        if conf.dcgm_url:
            return DcgmReader(conf.dcgm_url, conf.dcgm_timeout_s)
        return open_nvml()
    except GpuReadError as exc:
        if conf.enabled == "on":
            raise
        log.info("GPU sampling off: %s", exc)
        return None


def known_sources(shipper: Any) -> Callable[[], list[KnownSource]]:
    """The files ``shipper`` tails, as attribution reads them. list() of a dict's values is one step under
    the GIL, so the shipper's thread may change its files meanwhile. When a file last grew is its
    modification time once the shipper has checked it (a file found at start has not grown since the
    shipper started, only since it was last written), else when the shipper last read from it."""
    def view() -> list[KnownSource]:
        return [KnownSource(f.path, f.source or {}, f.labels or {},
                            f.last_stat[1] / 1e9 if f.last_stat[1] else f.last_growth)
                for f in list(shipper.files.values())]
    return view


def build_sampler(settings: Settings, ship: ShipSettings, shipper: Any,
                  reader: GpuReader | None = None) -> GpuSampler | None:
    conf = ship.gpu
    reader = reader or open_reader(conf)
    if reader is None:
        return None
    topic = conf.topic or settings.topics.metrics
    node = shipper.sources.node
    return GpuSampler(reader, MetricPointSender(settings, ship, topic), conf, host=node.host,
                      node_labels=node.labels, known_sources=known_sources(shipper),
                      cgroups=ProcCgroups(conf.proc_root), send_interval_s=ship.interval_s, phase_ms=shipper.phase_ms)

