"""Settings of the Elasticsearch hot sink: YAML section ``hot:``, environment ``SLUICE_HOT__<FIELD>``.

The connection itself (URL, credentials) is ``Settings.elasticsearch``; the routing table
(``Settings.routing``) gives each project its index prefix, retention and rate share. What is here
is how the sink batches and how fast it may write.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from streams.sinks.ratecontrol import Capacity


class HotSinkSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLUICE_HOT__", extra="forbid")

    # Declared capacity of the cluster for our writes. The defaults are for one local node
    # (Elasticsearch 9.5 integ-test-zip, 512 MB heap, 2 cores shared with Kafka, ~1 kB corpus events):
    # tests/perf/hot_sink_bench.py measured 3,600-10,000 docs/s for the raw bulk helper there
    # (bench-results/hot_sink.md; it varies run to run), so 3,000/s is the low end. Set them from your
    # own cluster's benchmark: the budget is `utilisation` (80%) of these, adapted down on 429s.
    capacity_events_per_s: float = Field(default=3000.0, gt=0)
    # The consumer group of the hot workers (KEDA scales on its lag; deploy/k8s/hot.yaml names it).
    group_id: str = "sluice-hot"
    capacity_bytes_per_s: float = Field(default=4_000_000.0, gt=0)
    # Accounting window of the rate controller: a quiet project waits at most about one window, and a
    # bulk that completes late carries at most one window of writes into the next second (so 0.1 s keeps
    # every second within about 1.1x of the budget; 1 s windows measured 2.0x, bench-results/hot_sink.md).
    window_s: float = Field(default=0.1, gt=0)
    # Unused budget of windows spent waiting on a slow bulk carries over, up to this many windows: keeps
    # the rate at the budget when a bulk takes longer than a window, at most +20% in any one second.
    carry_windows: int = Field(default=2, ge=0)
    utilisation: float = Field(default=0.8, gt=0, le=1)
    # A bulk request of 5-15 MB is Elasticsearch's own guidance; 1,000 docs / 5 MB keeps one
    # request well under a second on a small node, so acks (and commits) stay frequent.
    max_batch_events: int = Field(default=1000, gt=0)
    max_batch_bytes: int = Field(default=5 * 1024 * 1024, gt=0)
    # Bulks in flight per project (lane). Each request pays a fixed cost on the server (on the
    # benchmark's node ~0.2 s, whatever its size), so one at a time caps a project at one bulk per
    # round trip: Kafka -> Elasticsearch 1,046 / 1,910 / 3,302 docs/s with 1 / 2 / 4 (default
    # capacity: bulks of 240; tests/perf/hot_sink_bench.py, 2026-11-30). A quiet project beside a
    # 10x burst (every index already there) was held back at p99 by 0.00-0.27 / 0.09-0.12 /
    # 0.10-0.15 s (three runs each): 4 lets one project reach the default budget (2,400/s).
    bulks_in_flight: int = Field(default=4, ge=1)
    # Everything written and not yet acknowledged, all projects together, is at most this many windows'
    # budget (SinkRunner's in_flight_windows): a quiet project's bulk queues in Elasticsearch behind at
    # most that much of another project's burst. 0: no such bound (bulks_in_flight per project only).
    # Without it a bursting project kept ~4 bulks in flight and the quiet project's bulks took 0.33-0.57 s
    # behind them (write queue 5-12 tasks); held back at p99 then 0.06-0.35 s, with 2 windows 0.05-0.07 s
    # and with 1 window 0.02-0.07 s (tests/perf/hot_sink_bench.py --fairness live,warm, 2026-11-30).
    # It holds the rate under the budget only while writes take longer than that many windows to be
    # acknowledged (then Kafka holds the backlog, as on a 429).
    in_flight_windows: float = Field(default=2.0, ge=0)
    # Records read from Kafka and not yet acknowledged at which the worker pauses its biggest
    # partitions (resuming at a fifth): Kafka, not the worker, holds a backlog. Held as decoded
    # events, each is a dozen Python objects that every full garbage collection walks, with the event
    # loop stopped. 50,000 let an 8 s burst sit decoded in the worker: full collections of 23-68 ms,
    # one of 40 ms at 10,000; Kafka -> Elasticsearch unbounded 3,129 against 3,336 docs/s (medians of 3
    # alternating runs, tests/perf/hot_sink_bench.py end_to_end, 2026-11-30).
    max_in_flight_records: int = Field(default=10_000, ge=2)
    # How long a partial batch may wait for company: bounds the added latency for a quiet project.
    max_batch_age_s: float = Field(default=0.2, ge=0)
    # A bulk answered slower than this counts as pushback (AIMD decrease).
    slow_response_s: float = Field(default=2.0, gt=0)
    request_timeout_s: float = Field(default=30.0, gt=0)
    # Above Elasticsearch's built-in `logs-*-*` / `metrics-*-*` data-stream templates (priority 100),
    # which would otherwise turn our daily indices into data streams on a full distribution.
    template_priority: int = 200
    # In the last this-many seconds of a UTC day, create tomorrow's index of every family written today
    # (streams/sinks/elasticsearch/precreate.py: a midnight of index creations queues every write); 0: off.
    precreate_ahead_s: float = Field(default=3600.0, ge=0)
    # Retention job (where the server has no ILM): how often it runs; 0 disables it.
    retention_interval_s: float = Field(default=3600.0, ge=0)
    # Replicas of the daily indices; 0 for a single node (a replica could never be assigned).
    number_of_replicas: int = Field(default=0, ge=0)
    number_of_shards: int = Field(default=1, gt=0)
    # Message text past this many characters is not indexed as a keyword (still searchable as text).
    keyword_ignore_above: int = Field(default=1024, gt=0)

    def capacity(self) -> Capacity:
        return Capacity(self.capacity_events_per_s, self.capacity_bytes_per_s)

    @property
    def bulk_events(self) -> int:
        """Documents per bulk request: ``max_batch_events``, but never more than one window's budget.

        A bulk larger than a window's worth holds one of the cluster's write threads for longer than a
        window, and every lane's next bulk waits behind it. On the benchmark's node (capacity 500/s,
        windows of 40 docs) bulks of up to 1,000 held a quiet project back by 0.99 s at p99 and drained a
        burst in 1.24x the theoretical time; capped at 40, 0.31-0.40 s and 1.05-1.12x (two runs each, the
        burst creating its daily indices: most of those delays were index creations, see precreate.py;
        tests/perf/hot_sink_bench.py). On a cluster declared large the cap does not bind."""
        per_window = int(self.capacity_events_per_s * self.utilisation * self.window_s)
        return max(1, min(self.max_batch_events, per_window))
