"""`sluice top`: lag per group, topic and partition; rates in and out per project; throttling; DLQ growth.

Everything comes from Kafka itself (end offsets and the groups' committed offsets), so it works with
no worker reachable; worker metrics endpoints (``--metrics URL``) add throttling and budgets.
Pure arithmetic (:func:`compare`) is separate from the reads (:func:`take_snapshot`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from streams.config import Settings

TP = tuple[str, int]


@dataclass
class Snapshot:
    at: float
    ends: dict[TP, int]  # end offset per topic-partition
    committed: dict[str, dict[TP, int]]  # group -> committed offset per topic-partition
    scraped: dict[str, dict[str, float]] = field(default_factory=dict)  # url -> metric sample -> value


@dataclass(frozen=True)
class GroupRow:
    group: str
    topic: str
    partition: int
    lag: int
    out_per_s: float


@dataclass(frozen=True)
class TopicRow:
    topic: str
    end: int
    in_per_s: float


@dataclass
class View:
    groups: list[GroupRow]
    topics: list[TopicRow]
    dlq_growth_per_s: float
    throttling: dict[str, dict[str, float]]


def compare(prev: Snapshot | None, cur: Snapshot, dlq_topic: str) -> View:
    dt = (cur.at - prev.at) if prev else 0.0

    def rate(now: int, before: int | None) -> float:
        return (now - before) / dt if prev and dt > 0 and before is not None else 0.0

    groups = []
    for group, offsets in sorted(cur.committed.items()):
        for tp, committed in sorted(offsets.items()):
            # A partition the group had never committed before started from 0 as far as rates go.
            before = prev.committed.get(group, {}).get(tp, 0) if prev else None
            groups.append(GroupRow(group, tp[0], tp[1], max(0, cur.ends.get(tp, committed) - committed),
                                   rate(committed, before)))
    per_topic: dict[str, tuple[int, int | None]] = {}
    for tp, end in cur.ends.items():
        before = prev.ends.get(tp, 0) if prev else None
        total, total_before = per_topic.get(tp[0], (0, 0))
        per_topic[tp[0]] = (total + end, None if before is None or total_before is None else total_before + before)
    topics = [TopicRow(t, end, rate(end, before)) for t, (end, before) in sorted(per_topic.items())]
    dlq = next((row.in_per_s for row in topics if row.topic == dlq_topic), 0.0)
    throttling = {url: {k: v for k, v in samples.items()
                        if k.startswith(("sluice_sink_throttled_total", "sluice_rate_budget_events",
                                         "sluice_partitions_paused"))}
                  for url, samples in cur.scraped.items()}
    return View(groups, topics, dlq, throttling)


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


def default_groups(settings: Settings) -> list[str]:
    return [settings.assemble.app_id, settings.hot.group_id, settings.cold.group_id, settings.watch.app_id]


def take_snapshot(settings: Settings, groups: list[str], metrics_urls: list[str], admin: Any = None,
                  consumer: Any = None) -> Snapshot:
    import httpx
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    from streams.topics import topic_specs

    admin = admin or AdminClient(settings.kafka.client_config())
    if consumer is None:
        from confluent_kafka import Consumer

        consumer = Consumer({**settings.kafka.client_config(), "group.id": "sluice-top-reader"})
    meta = admin.list_topics(timeout=10).topics
    names = [s.name for s in topic_specs(settings) if s.name in meta]
    ends = {}
    for name in names:
        for p in meta[name].partitions:
            _low, high = consumer.get_watermark_offsets(TopicPartition(name, p), timeout=10)
            ends[(name, p)] = high
    committed: dict[str, dict[TP, int]] = {}
    for group in groups:
        futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        try:
            result = futures[group].result(timeout=10)
        except Exception:  # noqa: BLE001, S112 - a group that never committed is simply absent
            continue
        offsets = {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}
        if offsets:
            committed[group] = offsets
    scraped = {}
    for url in metrics_urls:
        try:
            scraped[url] = parse_prometheus(httpx.get(url, timeout=3).text)
        except httpx.HTTPError as exc:
            scraped[url] = {f"unreachable: {exc}": float("nan")}
    return Snapshot(time.monotonic(), ends, committed, scraped)


def render(view: View) -> str:
    lines = [f"{'group':<22} {'topic':<26} {'part':>4} {'lag':>9} {'out/s':>9}"]
    for g in view.groups:
        lines.append(f"{g.group:<22} {g.topic:<26} {g.partition:>4} {g.lag:>9} {g.out_per_s:>9.1f}")
    lines.append("")
    lines.append(f"{'topic':<34} {'records':>10} {'in/s':>9}")
    for t in view.topics:
        lines.append(f"{t.topic:<34} {t.end:>10} {t.in_per_s:>9.1f}")
    lines.append("")
    lines.append(f"dead letters: {view.dlq_growth_per_s:.2f}/s")
    for url, samples in view.throttling.items():
        lines.append(f"{url}:")
        lines.extend(f"  {k} = {v:g}" for k, v in sorted(samples.items()))
    return "\n".join(lines)
