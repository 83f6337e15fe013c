"""One record size, end to end: ``kafka.max_message_bytes``.

The producers refuse a record over it (librdkafka's ``message.max.bytes``), events are capped under it
(``assemble.max_bytes``, in bytes), dead letters are cut to fit it (streams/letters.py), and every topic
a stage writes must accept it (the topic's ``max.message.bytes``, else the broker's
``message.max.bytes``). If a topic accepts less, the broker refuses the records in between, and a
stage that cannot write its output (or its dead letters) stops on every retry; so each worker checks
at start, from the broker's own answer, and fails at once with what to change.
"""

from __future__ import annotations

import logging

from streams.config import Settings
from streams.errors import ConfigError
from streams.topics import state_max_message_bytes

log = logging.getLogger(__name__)

# Room an event needs besides its message: ids, times, source and labels, fields, the record's headers.
EVENT_OVERHEAD = 64 * 1024


def event_bytes_bound(settings: Settings) -> int:
    """The most an event's Avro body can take: its message, its attributes (each value cut at
    ``max_attribute_chars`` characters, four bytes at most each) and the rest."""
    f = settings.assemble.fields
    return settings.assemble.max_bytes + f.max_attributes * (f.max_attribute_chars * 4 + 256) + EVENT_OVERHEAD


def check_event_caps(settings: Settings) -> None:
    bound, limit = event_bytes_bound(settings), settings.kafka.max_message_bytes
    if bound > limit:
        raise ConfigError(
            f"an event can take up to {bound} bytes (assemble.max_bytes={settings.assemble.max_bytes}, plus "
            f"{settings.assemble.fields.max_attributes} attributes of up to "
            f"{settings.assemble.fields.max_attribute_chars} characters, plus {EVENT_OVERHEAD} for the rest), "
            f"over kafka.max_message_bytes={limit}: lower SLUICE_ASSEMBLE__MAX_BYTES or the attribute limits, or "
            "raise SLUICE_KAFKA__MAX_MESSAGE_BYTES (and the topics' max.message.bytes with it)")


def written_topics(settings: Settings, stage: str) -> dict[str, int]:
    """The topics ``stage`` writes, each with the record size it must accept."""
    t, limit = settings.topics, settings.kafka.max_message_bytes
    if stage == "assemble":
        topics = {t.events_topic(p): limit for p in settings.projects()}
        topics.update({t.metrics: limit, t.dlq: limit,
                       settings.assemble.state_topic_name(): state_max_message_bytes(settings)})
        return topics
    if stage == "watch":
        return {t.alerts: limit, t.dlq: limit}
    return {t.dlq: limit}


def topic_limits(settings: Settings, topics: list[str], timeout_s: float = 10.0) -> dict[str, int]:
    """``max.message.bytes`` of each topic as the broker applies it (its own default included); topics that
    do not exist are left out."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient(settings.kafka.client_config())
    existing = set(admin.list_topics(timeout=timeout_s).topics)
    wanted = [ConfigResource(ConfigResource.Type.TOPIC, name) for name in topics if name in existing]
    if not wanted:
        return {}
    out = {}
    for resource, future in admin.describe_configs(wanted, request_timeout=timeout_s).items():
        entry = future.result(timeout=timeout_s).get("max.message.bytes")
        if entry is not None and entry.value is not None:
            out[resource.name] = int(entry.value)
    return out


def check_message_sizes(settings: Settings, stage: str) -> None:
    """Fail fast (ConfigError) if the event caps or a topic ``stage`` writes disagree with
    ``kafka.max_message_bytes``. A broker that cannot be asked now is not a reason to stop: the worker
    waits for Kafka anyway, and says so."""
    if stage == "assemble":
        check_event_caps(settings)
    wanted = written_topics(settings, stage)
    try:
        limits = topic_limits(settings, sorted(wanted))
    except Exception as exc:  # noqa: BLE001 - Kafka away at start: the check is skipped, not the worker
        log.warning("could not read the topics' max.message.bytes from %s (%s); record sizes not checked",
                    settings.kafka.bootstrap_servers, exc)
        return
    short = {name: (limits[name], need) for name, need in wanted.items() if name in limits and limits[name] < need}
    if short:
        lines = "; ".join(f"{name} accepts {have} bytes, needs {need}" for name, (have, need) in sorted(short.items()))
        name, (_have, need) = sorted(short.items())[0]
        raise ConfigError(
            f"the {stage} stage writes records of up to kafka.max_message_bytes="
            f"{settings.kafka.max_message_bytes} bytes, but on {settings.kafka.bootstrap_servers} {lines} "
            f"(max.message.bytes). Raise each topic's limit (kafka-configs.sh --alter --entity-type topics "
            f"--entity-name {name} --add-config max.message.bytes={need}; deploy/k8s/topics.yaml sets it) "
            "or lower SLUICE_KAFKA__MAX_MESSAGE_BYTES")
