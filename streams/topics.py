"""Topic definitions (partitions, retention, compaction) and their creation on the broker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streams.config import Settings
from streams.errors import SluiceError


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: dict[str, str] = field(default_factory=dict)
    # The Avro contract of the values, registered as <name>-value; None = not Avro (internal).
    schema: str | None = None


def topic_specs(settings: Settings) -> list[TopicSpec]:
    t = settings.topics
    specs = [
        TopicSpec(
            t.raw, t.raw_partitions,
            {"retention.ms": str(t.raw_retention_ms), "cleanup.policy": "delete", "compression.type": "producer"},
            "raw_batch",
        ),
        TopicSpec(t.metrics, t.metrics_partitions, {"retention.ms": str(t.events_retention_ms)}, "metric_point"),
        # Alerts are keyed by a deterministic incident id: compaction keeps the latest state of each
        # incident, deletion after the retention bounds the topic.
        TopicSpec(
            t.alerts, t.alerts_partitions,
            {"cleanup.policy": "compact,delete", "retention.ms": str(t.dlq_retention_ms)},
            "alert",
        ),
        # Incidents too: a late collateral error updates a decided incident in place, under its id.
        TopicSpec(
            t.incidents, t.incidents_partitions,
            {"cleanup.policy": "compact,delete", "retention.ms": str(t.dlq_retention_ms)},
            "incident",
        ),
        TopicSpec(t.dlq, t.dlq_partitions, {"retention.ms": str(t.dlq_retention_ms)}, "dead_letter"),
    ]
    specs += [
        TopicSpec(t.events_topic(p), t.events_partitions, {"retention.ms": str(t.events_retention_ms)}, "log_event")
        for p in settings.projects()
    ]
    specs.append(assemble_state_spec(settings))
    return specs


def assemble_state_spec(settings: Settings) -> TopicSpec:
    """The assemble stage's open blocks per source: compacted, one partition per raw partition."""
    return TopicSpec(settings.assemble.state_topic_name(), settings.topics.raw_partitions,
                     {"cleanup.policy": "compact", "min.compaction.lag.ms": "0", "segment.ms": str(3600 * 1000),
                      "max.message.bytes": str(state_max_message_bytes(settings))})


def state_max_message_bytes(settings: Settings) -> int:
    """The state topic's record limit: a source's state holds its open block (up to assemble.max_bytes)
    and a held partial line, as JSON (escapes and all), so it gets four times kafka.max_message_bytes;
    the assemble stage's producer, which writes it, has the same limit."""
    return 4 * settings.kafka.max_message_bytes


def ensure_assemble_state_topic(settings: Settings, timeout_s: float = 30.0) -> None:
    """Create the state topic if missing, with as many partitions as logs.raw has (a worker's start)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(settings.kafka.client_config())
    topics = admin.list_topics(timeout=timeout_s).topics
    raw = topics.get(settings.topics.raw)
    if raw is None or raw.error is not None:
        raise SluiceError(f"topic {settings.topics.raw} does not exist on {settings.kafka.bootstrap_servers}; "
                          "run `sluice topics create`")
    spec = assemble_state_spec(settings)
    state = topics.get(spec.name)
    if state is None:
        create_topics(settings, [TopicSpec(spec.name, len(raw.partitions), spec.config)], timeout_s)
    elif len(state.partitions) < len(raw.partitions):
        raise SluiceError(f"{spec.name} has {len(state.partitions)} partitions, {settings.topics.raw} has "
                          f"{len(raw.partitions)}: add partitions to {spec.name} to match before starting assemble")


def message_size_config(settings: Settings) -> dict[str, str]:
    """Topic config that lets a topic take the largest record Sluice writes (``kafka.max_message_bytes``)."""
    return {"max.message.bytes": str(settings.kafka.max_message_bytes)}


def create_topics(settings: Settings, specs: list[TopicSpec] | None = None, timeout_s: float = 30.0) -> list[str]:
    """Create missing topics; returns the names created. Existing topics are left as they are."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    specs = specs if specs is not None else topic_specs(settings)
    admin = AdminClient(settings.kafka.client_config())
    existing = set(admin.list_topics(timeout=timeout_s).topics)
    wanted = [s for s in specs if s.name not in existing]
    if not wanted:
        return []
    futures = admin.create_topics(
        [NewTopic(s.name, num_partitions=s.partitions, replication_factor=settings.topics.replication_factor,
                  config={**message_size_config(settings), **s.config}) for s in wanted],
        operation_timeout=timeout_s,
    )
    created = []
    for name, future in futures.items():
        try:
            future.result(timeout=timeout_s)
            created.append(name)
        except KafkaException as exc:
            if "TOPIC_ALREADY_EXISTS" in str(exc):
                continue
            raise SluiceError(
                f"could not create topic {name} on {settings.kafka.bootstrap_servers}: {exc}; "
                "check that the broker is up and reachable from here (kafka.bootstrap_servers)"
            ) from exc
    return created


def describe_topics(settings: Settings, names: list[str]) -> dict[str, dict[str, str] | None]:
    """Partition count and the non-default configs of each topic, as the broker reports them; None for
    a topic the broker does not have."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient(settings.kafka.client_config())
    meta = admin.list_topics(timeout=10).topics
    present = [n for n in names if n in meta and meta[n].error is None]
    result: dict[str, dict[str, str] | None] = dict.fromkeys(names)
    resources = [ConfigResource(ConfigResource.Type.TOPIC, n) for n in present]
    for res, future in (admin.describe_configs(resources).items() if resources else ()):
        entries = future.result(timeout=10)
        conf = {k: str(v.value) for k, v in entries.items() if not v.is_default}
        conf["partitions"] = str(len(meta[res.name].partitions))
        result[res.name] = conf
    return result


def isolated_settings(settings: Settings, tag: str, **topic_overrides: Any) -> Settings:
    """A copy of ``settings`` whose topics all carry ``tag`` (created, contracts registered): a benchmark
    or a test beside the live pipeline, touching none of its topics."""
    from streams.contracts import register_all

    topics = settings.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics",
        "dlq": f"{tag}.dlq", "alerts": f"{tag}.alerts", "incidents": f"{tag}.incidents", **topic_overrides})
    isolated = settings.model_copy(update={"topics": topics})
    create_topics(isolated, topic_specs(isolated))
    register_all(isolated)
    return isolated
