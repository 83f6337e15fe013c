"""The sink consumers' librdkafka settings, as built from the product's settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from streams.config import KafkaSettings, Settings
from streams.sinks.kafka_io import sink_consumer_config


def conf_for(**kafka: object) -> dict[str, object]:
    return sink_consumer_config(Settings(kafka=KafkaSettings(**kafka)), "sluice-hot")  # type: ignore[arg-type]


def test_unset_the_session_and_heartbeat_are_librdkafkas_own() -> None:
    conf = conf_for()
    assert "session.timeout.ms" not in conf and "heartbeat.interval.ms" not in conf
    assert conf["group.id"] == "sluice-hot" and conf["enable.auto.commit"] is False


def test_the_sink_session_timeout_sets_the_session_and_a_heartbeat_six_times_within_it() -> None:
    from confluent_kafka import Consumer

    conf = conf_for(sink_session_timeout_s=6.0, bootstrap_servers="127.0.0.1:1")
    assert conf["session.timeout.ms"] == 6000
    assert conf["heartbeat.interval.ms"] == 1000
    # librdkafka knows both names (it raises on one it does not); nothing listens on port 1.
    Consumer({**conf, "log_level": 0}).close()


def test_a_short_session_heartbeats_at_most_twice_a_second() -> None:
    conf = conf_for(sink_session_timeout_s=1.5)
    assert (conf["session.timeout.ms"], conf["heartbeat.interval.ms"]) == (1500, 500)


def test_a_session_under_a_second_is_refused() -> None:
    with pytest.raises(ValidationError, match="sink_session_timeout_s"):
        KafkaSettings(sink_session_timeout_s=0.2)
