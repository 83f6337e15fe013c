"""Settings of the Elasticsearch hot sink: the ``hot:`` section (``SLUICE_HOT__<FIELD>``).

The connection itself (URL, credentials) is ``Settings.elasticsearch``; the routing table
(``Settings.routing``) gives each project its index prefix, retention and rate cap. What is here
is how the sink names its indices, how it batches and how fast it may write.
"""

from __future__ import annotations

from pydantic import Field

from streams.config_base import Section
from streams.sinks.ratecontrol import Capacity


class HotSinkSettings(Section):
    """The hot sink: events and metric points into Elasticsearch (`sluice worker hot`)."""

    group_id: str = Field(
        default="sluice-hot", description="Consumer group of the hot workers (KEDA scales on its lag).")
    events_index_prefix: str = Field(
        default="sluice-logs",
        description="Event indices are <events_index_prefix>-<project>-<task_type>-<YYYY.MM.DD> unless the "
                    "project's route names its own index_prefix. The sluice- prefix keeps them clear of "
                    "Elasticsearch's built-in logs-*-* data streams (Fleet, Elastic Agent) on a shared cluster.")
    metrics_index_prefix: str = Field(
        default="sluice-metrics",
        description="Metric points go to <metrics_index_prefix>-<project>-<YYYY.MM.DD>; clear of the built-in "
                    "metrics-*-* data streams for the same reason.")
    capacity_events_per_s: float = Field(
        default=3000.0, gt=0,
        description="Events per second this worker may declare the cluster takes from it. Measure your cluster "
                    "(tests/perf/hot_sink_bench.py, or your own bulk benchmark) and divide by the number of hot "
                    "workers: each worker has its own budget. The default suits one small local node.")
    capacity_bytes_per_s: float = Field(
        default=4_000_000.0, gt=0, description="Bytes per second, as capacity_events_per_s.")
    utilisation: float = Field(
        default=0.8, gt=0, le=1,
        description="The budget is this share of the declared capacity, adapted down on 429s and slow answers and "
                    "back up when healthy (AIMD). The rest is headroom for replication, merges, queries and "
                    "other writers.")
    window_s: float = Field(
        default=0.1, gt=0,
        description="Accounting window of the rate controller. A quiet project waits at most about one window, "
                    "and a bulk that completes late carries at most one window of writes into the next second: "
                    "short windows keep every second close to the budget.")
    carry_windows: int = Field(
        default=2, ge=0,
        description="Budget left unused while a bulk is slower than a window carries over, up to this many "
                    "windows, so the rate holds at the budget when responses are slow.")
    max_batch_events: int = Field(
        default=1000, gt=0,
        description="Documents per bulk request at most (never more than one window's budget). Small bulks keep "
                    "acknowledgements, and so commits, frequent.")
    max_batch_bytes: int = Field(
        default=5 * 1024 * 1024, gt=0,
        description="Bytes per bulk request at most; Elasticsearch's own guidance is 5-15 MB.")
    bulks_in_flight: int = Field(
        default=4, ge=1,
        description="Bulk requests in flight per project. Each request pays a fixed cost on the server whatever "
                    "its size, so one at a time caps a project at one bulk per round trip.")
    in_flight_windows: float = Field(
        default=2.0, ge=0,
        description="Everything written and not yet acknowledged, all projects together, stays within this many "
                    "windows' budget. Elasticsearch works through bulks in arrival order, so this bounds how long "
                    "another project's burst can hold a quiet project's writes back. 0: no such bound.")
    max_in_flight_records: int = Field(
        default=10_000, ge=2,
        description="Records read from Kafka and not yet acknowledged at which the worker pauses its biggest "
                    "partitions (resuming at a fifth): Kafka, not the worker's memory, holds a backlog. Decoded "
                    "events are many small objects that every full garbage collection walks, so a lower bound "
                    "also keeps collection pauses short.")
    max_batch_age_s: float = Field(
        default=0.2, ge=0,
        description="How long a partial bulk may wait for company: the latency added for a quiet project.")
    slow_response_s: float = Field(
        default=2.0, gt=0, description="A bulk answered slower than this counts as pushback (the budget shrinks).")
    request_timeout_s: float = Field(default=30.0, gt=0, description="Timeout of one bulk request, in seconds.")
    template_priority: int = Field(
        default=200,
        description="Priority of Sluice's index templates: above Elasticsearch's built-in templates (100), so "
                    "that a project whose index_prefix falls under logs-*-* still gets Sluice's mappings.")
    precreate_ahead_s: float = Field(
        default=3600.0, ge=0,
        description="In the last this-many seconds of a UTC day, create tomorrow's index of every family written "
                    "today, so that midnight does not queue every write behind index creations. 0: off.")
    retention_interval_s: float = Field(
        default=3600.0, ge=0,
        description="How often the retention job runs where the server has no ILM; 0 disables it.")
    number_of_replicas: int = Field(
        default=0, ge=0,
        description="Replicas of the daily indices; 0 for a single node, where a replica is never assigned.")
    number_of_shards: int = Field(default=1, gt=0, description="Primary shards of each daily index.")
    keyword_ignore_above: int = Field(
        default=1024, gt=0,
        description="Message text longer than this many characters is not indexed as a keyword (it stays "
                    "searchable as text).")

    def capacity(self) -> Capacity:
        return Capacity(self.capacity_events_per_s, self.capacity_bytes_per_s)

    @property
    def bulk_events(self) -> int:
        """Documents per bulk request: ``max_batch_events``, but never more than one window's budget.

        A bulk larger than a window's worth holds one of the cluster's write threads for longer than a
        window, and every project's next bulk waits behind it. On a cluster declared large the cap does
        not bind."""
        per_window = int(self.capacity_events_per_s * self.utilisation * self.window_s)
        return max(1, min(self.max_batch_events, per_window))
