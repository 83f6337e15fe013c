"""The shipper's Prometheus metrics, read from its ``Stats`` when scraped (no cost on the hot path).

Names and meanings are part of docs/metrics.md; one shipper per process registers one collector.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from streams.ship.shipper import Shipper

DROP_REASONS = ("waiting_bytes", "waiting_age", "gone_before_shipped", "truncated_before_shipped", "unencodable")
REFUSALS = ("symlink", "outside_roots", "not_regular")


class ShipCollector(Collector):
    def __init__(self, shipper: Shipper) -> None:
        self.shipper = shipper

    def collect(self) -> Iterator[Metric]:
        s = self.shipper
        st, g = s.stats, s.gauges
        yield _counter("sluice_ship_lines_read", "lines read from the tailed files", st.lines_read)
        yield _counter("sluice_ship_bytes_read", "bytes read from the tailed files", st.bytes_read)
        yield _counter("sluice_ship_lines_sent", "lines Kafka acknowledged", st.lines_sent)
        yield _counter("sluice_ship_bytes_sent", "file bytes whose lines Kafka acknowledged", st.bytes_sent)
        yield _counter("sluice_ship_records_sent", "Kafka records produced (a batch split to fit counts once)",
                       st.batches_sent)
        yield _counter("sluice_ship_delivery_failures", "records Kafka did not acknowledge (their file is re-read)",
                       st.delivery_failures)
        yield _gauge("sluice_ship_waiting_bytes", "bytes of the tailed files Kafka has not acknowledged, read or not",
                     g.waiting_bytes)
        yield _gauge("sluice_ship_waiting_lines", "lines read and not yet acknowledged by Kafka", g.waiting_lines)
        yield _gauge("sluice_ship_held_bytes", "bytes read and not yet acknowledged (the memory cap's measure)",
                     g.held_bytes)
        yield _gauge("sluice_ship_oldest_waiting_seconds",
                     "age of the oldest byte Kafka has not acknowledged (since it was first seen)",
                     g.oldest_waiting_s)
        yield _gauge("sluice_ship_files", "files being tailed or drained", g.files)
        yield _by_reason("sluice_ship_dropped_bytes", "bytes given up without being sent, by reason",
                         st.dropped_bytes, DROP_REASONS)
        yield _by_reason("sluice_ship_dropped_files", "whole files given up, by reason", st.dropped_files,
                         DROP_REASONS)
        yield _by_reason("sluice_ship_dropped_lines", "lines read and then given up, by reason", st.dropped_lines,
                         DROP_REASONS)
        yield _by_reason("sluice_ship_refused_paths", "paths the globs match that are not read, by reason (each "
                         "counted once while it stays refused)", st.refused, REFUSALS)
        yield _counter("sluice_ship_batches_split", "batches that did not fit one record and were sent in parts",
                       st.batches_split)
        yield _counter("sluice_ship_lines_quarantined",
                       "lines that fit in no record as they were: sent escaped (and cut), flagged",
                       st.lines_quarantined)
        yield _counter("sluice_ship_checkpoint_failures", "checkpoint writes that failed (retried; shipping goes on)",
                       st.checkpoint_failures)
        yield _gauge("sluice_ship_checkpoint_failing", "1 while the checkpoint cannot be written",
                     float(s.health.checkpoint_problem is not None))
        hist = HistogramMetricFamily("sluice_ship_ack_latency_seconds", "produce to Kafka acknowledgement")
        hist.add_metric([], st.ack_latency.cumulative(), st.ack_latency.total)
        yield hist


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _by_reason(name: str, doc: str, counts: dict[str, int], reasons: tuple[str, ...]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=["reason"])
    counts = dict(counts)  # a copy: the shipper's thread may add a reason meanwhile
    for reason in sorted({*reasons, *counts}):
        family.add_metric([reason], counts.get(reason, 0))
    return family
