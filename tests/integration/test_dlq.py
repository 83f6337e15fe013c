"""`sluice dlq` on the real Kafka and registry: filters, show, re-drive once per group."""

from __future__ import annotations

import time

from click.testing import CliRunner
from confluent_kafka import Consumer

from streams.cli.main import cli
from streams.config import Settings
from streams.contracts import register_all
from streams.dlq import LetterFilter, list_letters, redrive
from streams.sinks.base import SinkRecord
from streams.sinks.kafka_io import KafkaDeadLetters


def _settings(stack: Settings, dlq: str) -> Settings:
    settings = stack.model_copy(update={"topics": stack.topics.model_copy(update={"dlq": dlq})})
    register_all(settings)
    return settings


def _read_raw(settings: Settings, topic: str, timeout_s: float = 6) -> list[tuple[bytes | None, bytes]]:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"r-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    out = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = consumer.poll(0.3)
        if msg is not None and not msg.error():
            out.append((msg.key(), msg.value()))
    consumer.close()
    return out


def test_list_filter_show_and_redrive_once(stack: Settings, new_topic) -> None:
    settings = _settings(stack, new_topic("dlq"))
    origin = new_topic("origin")
    letters = KafkaDeadLetters(settings)
    bad_avro = SinkRecord(origin, 0, 7, b"src-a", {}, b"\x00\x00\x00\x00\x63broken", "p", 10)
    conflict = SinkRecord(origin, 0, 8, b"src-b", {}, b"\x00\x00\x00\x00\x05event-bytes", "p", 10)
    letters.send(bad_avro, "assemble", "cannot decode the Avro value: schema 99 not found", "schema_not_found")
    letters.send(conflict, "hot_sink", "mapper_parsing_exception: failed to parse field [loss] of type [double]",
                 "mapping")
    letters.flush()

    everything = list_letters(settings, LetterFilter())
    assert [(lt.value["offset"], lt.value["stage"]) for lt in everything] == [(7, "assemble"), (8, "hot_sink")]
    mapping = list_letters(settings, LetterFilter(error_type="mapping"))
    assert [lt.value["original"] for lt in mapping] == [conflict.raw]
    assert list_letters(settings, LetterFilter(contains="FAILED TO PARSE"))[0].value["offset"] == 8

    result = CliRunner().invoke(cli, ["dlq", "ls", "--stage", "hot_sink"],
                                env={"SLUICE_TOPICS__DLQ": settings.topics.dlq})
    assert result.exit_code == 0, result.output
    assert "mapper_parsing_exception" in result.output
    assert result.stdout.splitlines()[0] == f"1 of 2 dead letter(s) in {settings.topics.dlq} match, newest last"

    group = f"redrive-{time.monotonic_ns()}"
    report = redrive(settings, LetterFilter(stage="hot_sink"), group_id=group)
    assert [s.letter.value["offset"] for s in report.sent] == [8]
    assert _read_raw(settings, origin) == [(b"src-b", conflict.raw)], "the original bytes, once, to their topic"
    again = redrive(settings, LetterFilter(stage="hot_sink"), group_id=group)
    assert again.sent == [] and again.matched == 0, "the same group never re-drives a letter twice"
    assert len(_read_raw(settings, origin)) == 1
