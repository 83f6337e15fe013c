"""`sluice top`: lag per group, topic and partition; offsets in per topic; dead letters; worker metrics.

Everything but the worker metrics comes from Kafka itself (end offsets, the groups' committed
offsets, the dead letters counted by reading them), so it works with no worker reachable; worker
metrics endpoints (``--metrics URL``) add throttling, budgets, paused partitions, readiness and
the events of projects missing from the routing table. Pure arithmetic (:func:`compare`) is
separate from the reads (:class:`Reader`).

Kafka offsets are not record counts on topics written in transactions (every transaction leaves a
commit marker, which takes an offset): topics are shown by end offset, and dead letters are
counted one by one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from streams.config import Settings
from streams.errors import NotFound

TP = tuple[str, int]

# Worker metrics shown by `top`, by name prefix.
SCRAPED = ("sluice_sink_throttled_total", "sluice_rate_budget_events", "sluice_partitions_paused",
           "sluice_unrouted_events_total", "sluice_worker_ready", "sluice_consumer_lag_seconds")


@dataclass
class Snapshot:
    at: float
    ends: dict[TP, int]  # end offset per topic-partition
    lows: dict[TP, int]  # first offset still held per topic-partition
    # group -> per topic-partition it reads: the committed offset, or None when it has committed none
    committed: dict[str, dict[TP, int | None]]
    letters: int = 0  # dead letters in the dead-letter topic, counted
    scraped: dict[str, dict[str, float]] = field(default_factory=dict)  # url -> metric sample -> value
    unreachable: dict[str, str] = field(default_factory=dict)  # url -> why it did not answer


@dataclass(frozen=True)
class GroupRow:
    group: str
    topic: str
    partition: int
    committed: int | None  # None: the group has committed nothing there yet
    lag: int
    out_per_s: float


@dataclass(frozen=True)
class TopicRow:
    topic: str
    end_offset: int
    offsets_in_per_s: float


@dataclass
class View:
    groups: list[GroupRow]
    topics: list[TopicRow]
    dead_letters: int
    dead_letters_per_s: float
    workers: dict[str, dict[str, float]]
    unreachable: dict[str, str]


def compare(prev: Snapshot | None, cur: Snapshot) -> View:
    dt = (cur.at - prev.at) if prev else 0.0

    def rate(now: int, before: int | None) -> float:
        return (now - before) / dt if prev and dt > 0 and before is not None else 0.0

    groups = []
    for group, offsets in sorted(cur.committed.items()):
        for tp, committed in sorted(offsets.items()):
            end = cur.ends.get(tp, committed or 0)
            # Nothing committed: the group starts from the earliest offset held (auto.offset.reset).
            position = committed if committed is not None else cur.lows.get(tp, 0)
            before = None
            if prev is not None:
                was = prev.committed.get(group, {}).get(tp)
                before = was if was is not None else prev.lows.get(tp, position)
            groups.append(GroupRow(group, tp[0], tp[1], committed, max(0, end - position), rate(position, before)))
    per_topic: dict[str, tuple[int, int | None]] = {}
    for tp, end in cur.ends.items():
        before = prev.ends.get(tp, 0) if prev else None
        total, total_before = per_topic.get(tp[0], (0, 0))
        per_topic[tp[0]] = (total + end, None if before is None or total_before is None else total_before + before)
    topics = [TopicRow(t, end, rate(end, before)) for t, (end, before) in sorted(per_topic.items())]
    workers = {url: {k: v for k, v in samples.items() if k.startswith(SCRAPED)}
               for url, samples in cur.scraped.items()}
    return View(groups, topics, cur.letters, rate(cur.letters, prev.letters if prev else None), workers,
                dict(cur.unreachable))


def parse_prometheus(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        try:
            out[name] = float(value)
        except ValueError:
            continue
    return out


def stage_groups(settings: Settings, existing_topics: set[str]) -> dict[str, list[str]]:
    """The consumer group of each stage, as configured, and the topics it reads."""
    t = settings.topics
    events = sorted(n for n in existing_topics if n.startswith(t.events_prefix))
    configured = [t.events_topic(p) for p in settings.projects()]
    return {
        settings.assemble.app_id: [t.raw],
        settings.hot.group_id: [*configured, t.metrics],
        settings.cold.group_id: events,  # the cold stage subscribes to every events topic
        settings.watch.app_id: [t.metrics, *configured],
    }


class Reader:
    """Takes snapshots: one admin client and consumer, and a running count of dead letters."""

    def __init__(self, settings: Settings, groups: list[str] | None, metrics_urls: list[str]) -> None:
        from confluent_kafka import Consumer
        from confluent_kafka.admin import AdminClient

        self.settings = settings
        self.metrics_urls = metrics_urls
        self.admin = AdminClient(settings.kafka.client_config())
        self.consumer = Consumer({**settings.kafka.client_config(), "group.id": "sluice-top-reader",
                                  "enable.auto.commit": False})
        # Counting letters: read_committed, so letters of an aborted transaction are not counted.
        self.letter_reader = Consumer({**settings.kafka.client_config(), "group.id": "sluice-top-letters",
                                       "enable.auto.commit": False, "isolation.level": "read_committed"})
        self.letters = 0
        self._letter_positions: dict[int, int] | None = None
        self.chosen = groups
        if groups:
            known = self.known_groups()
            missing = [g for g in groups if g not in known]
            if missing:
                hint = ", ".join(sorted(known)[:10]) or "none"
                raise NotFound(f"consumer group {', '.join(missing)} is not known to Kafka at "
                               f"{settings.kafka.bootstrap_servers} (groups there: {hint}); "
                               "a group exists once a worker of it has joined or committed")

    def known_groups(self) -> set[str]:
        result = self.admin.list_consumer_groups(request_timeout=10).result()
        return {g.group_id for g in result.valid}

    def close(self) -> None:
        self.consumer.close()
        self.letter_reader.close()

    def snapshot(self) -> Snapshot:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        from streams.topics import topic_specs

        meta = self.admin.list_topics(timeout=10).topics
        wanted = {s.name for s in topic_specs(self.settings)}
        wanted |= {n for n in meta if n.startswith(self.settings.topics.events_prefix)}
        names = sorted(n for n in wanted if n in meta and meta[n].error is None)
        ends, lows = {}, {}
        for name in names:
            for p in meta[name].partitions:
                low, high = self.consumer.get_watermark_offsets(TopicPartition(name, p), timeout=10)
                ends[(name, p)], lows[(name, p)] = high, low
        reads = stage_groups(self.settings, set(names))
        groups = self.chosen or list(reads)
        committed: dict[str, dict[TP, int | None]] = {}
        for group in groups:
            offsets: dict[TP, int | None] = {tp: None for tp in ends if tp[0] in reads.get(group, [])}
            futures = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
            result = futures[group].result(timeout=10)
            for tp in result.topic_partitions:
                if tp.offset >= 0:
                    offsets[(tp.topic, tp.partition)] = tp.offset
            committed[group] = offsets
        self._count_letters(ends)
        snap = Snapshot(time.monotonic(), ends, lows, committed, self.letters)
        self._scrape(snap)
        return snap

    def _count_letters(self, ends: dict[TP, int], budget_s: float = 10.0) -> None:
        """Read the dead-letter topic from where the last snapshot stopped to its end now, counting."""
        from confluent_kafka import TopicPartition

        topic = self.settings.topics.dlq
        parts = {p: end for (t, p), end in ends.items() if t == topic}
        if not parts:
            return
        if self._letter_positions is None:
            self._letter_positions = {}
            starts = []
            for p in parts:
                low, _high = self.letter_reader.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                self._letter_positions[p] = low
                starts.append(TopicPartition(topic, p, low))
            self.letter_reader.assign(starts)
        positions = self._letter_positions
        deadline = time.monotonic() + budget_s
        while any(positions.get(p, 0) < end for p, end in parts.items()) and time.monotonic() < deadline:
            for msg in self.letter_reader.consume(1000, 0.2):
                if not msg.error():
                    self.letters += 1
            for tp in self.letter_reader.position([TopicPartition(topic, p) for p in parts]):
                if tp.offset >= 0:
                    positions[tp.partition] = tp.offset

    def _scrape(self, snap: Snapshot) -> None:
        import httpx

        for url in self.metrics_urls:
            try:
                response = httpx.get(url, timeout=3)
                response.raise_for_status()
                snap.scraped[url] = parse_prometheus(response.text)
            except httpx.HTTPError as exc:
                snap.unreachable[url] = str(exc) or type(exc).__name__


def render(view: View) -> str:
    lines = [f"{'group':<22} {'topic':<26} {'part':>4} {'committed':>10} {'lag':>9} {'out/s':>9}"]
    for g in view.groups:
        committed = "-" if g.committed is None else str(g.committed)
        lines.append(f"{g.group:<22} {g.topic:<26} {g.partition:>4} {committed:>10} {g.lag:>9} {g.out_per_s:>9.1f}")
    if any(g.committed is None for g in view.groups):
        lines.append("(committed -: nothing committed yet; lag counts from the first offset held)")
    lines.append("")
    lines.append(f"{'topic':<34} {'end offset':>10} {'offsets/s':>9}")
    for t in view.topics:
        lines.append(f"{t.topic:<34} {t.end_offset:>10} {t.offsets_in_per_s:>9.1f}")
    lines.append("")
    lines.append(f"dead letters: {view.dead_letters} ({view.dead_letters_per_s:+.2f}/s)")
    for url, samples in view.workers.items():
        lines.append(f"{url}:")
        lines.extend(f"  {k} = {v:g}" for k, v in sorted(samples.items()))
    for url, why in view.unreachable.items():
        lines.append(f"{url}: no answer ({why})")
    return "\n".join(lines)
