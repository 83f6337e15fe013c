"""The assemble stage's turns go on past poison records: their outputs and offsets are committed.

The stage runs as in the worker (its real ``commit``: the encoder, the source states, the offsets)
with a fake broker behind it (``Broker`` of test_assemble_turns). The poison records are the crashers
kept for the fuzzer, each fed between good records of the same partition; a fault is injected into
the stage's encoding through its ``encode`` seam, on a record's turn and on the idle timer's.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import fastavro
from test_assemble_turns import Broker, record

from devtools.testing.fuzzing import load_crasher
from streams import observability as obs
from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import Output, RawRecord
from streams.config import AssembleSettings, KafkaSettings, Settings
from streams.contracts import parsed_schema
from streams.rdkafka import Message
from streams.workers.assemble import AssembleStage

CRASHERS = Path(__file__).parent / "assemble" / "crashers"
GOOD = [f"2024-05-01 10:00:{i:02d} INFO train.py:12] step {i} done".encode() for i in range(40)]


def stage_against(broker: Broker, encode: Any = None) -> AssembleStage:
    registry = SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(schema_id=1))
    stage = AssembleStage(Settings(assemble=AssembleSettings(idle_timeout_ms=1000)), registry, encode=encode)
    stage.writer = broker  # type: ignore[assignment]
    stage.load_state = broker.load_state
    stage.group_metadata = lambda: "member-1 of generation 1"
    return stage


def read(topic: str, value: bytes | None) -> dict[str, Any]:
    contract = "dead_letter" if topic.endswith("dlq") else "metric_point" if topic.endswith("metrics") else "log_event"
    buf = io.BytesIO(value[5:] if value else b"")
    return fastavro.schemaless_reader(buf, parsed_schema(contract))  # type: ignore[return-value]


def poison_values() -> list[bytes]:
    """The one-line record values of the kept crashers (the known poison inputs and those written from
    the fuzzer's finds; the fuzzer's own inputs, runs of multi-line records, are replayed in test_fuzz)."""
    values = []
    for path in sorted(p for p in CRASHERS.glob("*.json") if not p.name.startswith("fuzz_")):
        run, _restart = load_crasher(path)
        values += [i.value for i in run if isinstance(i, RawRecord) and i.value and not i.value.startswith(b"2024")]
    return values


def held_by(value: dict[str, Any], topic: str) -> tuple[int, int]:
    if topic.endswith("dlq"):
        return value["offset"], int(value["headers"].get("last_offset", value["offset"]))
    return value["raw"]["first_offset"], value["raw"]["last_offset"]


def test_poison_records_cost_one_output_each_and_the_turn_commits_past_them() -> None:
    poison = poison_values()
    assert len(poison) >= 6
    events, offset, poison_at = [], 100, []
    for i, value in enumerate(poison):  # good, poison (its own source), good, ...
        events.append(record(offset, b"node-1/train.log", GOOD[i]))
        events.append(Message(topic="logs.raw", partition=0, offset=offset + 1, value=value,
                              key=f"poison-{i}".encode(), timestamp=1_700_000_000.0, headers=None, generation_id=0))
        poison_at.append(offset + 1)
        offset += 2
    events.append(record(offset, b"node-1/train.log", GOOD[len(poison)]))
    broker = Broker()
    stage = stage_against(broker)

    asyncio.run(stage.on_batch(events))  # raises nothing
    for o in stage.states[0].assembler.flush_all():  # the last good block, as the idle timer would
        broker.outputs.append((o.topic, o.key, b"\0\0\0\0\1" + (o.body or b"")))

    assert broker.offsets == {0: offset + 1}, "the committed offset is past every record, poison included"
    outputs = [(topic, read(topic, value)) for topic, _key, value in broker.outputs]
    for at in poison_at:
        holding = [(t, v) for t, v in outputs if held_by(v, t)[0] <= at <= held_by(v, t)[1]]
        assert len(holding) == 1, (at, holding)
    messages = [v["message"] for t, v in outputs if "message" in v]
    assert sorted(m.encode() for m in messages if m.startswith("2024-05-01")) == sorted(GOOD[:len(poison) + 1])


class FailingEncoder:
    """The worker's body writer, failing for outputs whose message holds a marker."""

    def __call__(self, out: Output) -> bytes:
        if "POISON" in (out.value.get("message") or ""):
            raise OverflowError("cannot encode this one")
        return encode_body(out)


def counter(step: str, exception: str) -> float:
    return obs.REGISTRY.get_sample_value("sluice_internal_errors_total",
                                         {"stage": "assemble", "step": step, "exception": exception}) or 0.0


def test_an_encoding_failure_costs_its_block_not_the_turn_nor_the_idle_timer() -> None:
    broker = Broker()
    stage = stage_against(broker, encode=FailingEncoder())
    before = counter("encode", "OverflowError")
    lines = [GOOD[0], b"2024-05-01 10:01:00 ERROR train.py:80] POISON in a block", GOOD[1],
             b"2024-05-01 10:01:01 ERROR train.py:80] POISON again, the last line of a job that died"]
    asyncio.run(stage.on_batch([record(10 + i, b"node-1/train.log", line) for i, line in enumerate(lines)]))

    outputs = [(topic, read(topic, value)) for topic, _key, value in broker.outputs]
    assert [v.get("message") or v["error_type"] for _t, v in outputs] == [GOOD[0].decode(), "internal",
                                                                          GOOD[1].decode()]
    assert broker.offsets == {0: 14}
    assert counter("encode", "OverflowError") == before + 1

    stage.states[0].last_seen = time.monotonic() - 5  # quiet for longer than the idle timeout
    asyncio.run(stage.on_idle_tick())  # from the timer an exception crash-looped the worker
    topic, _key, value = broker.outputs[-1]
    letter = read(topic, value)
    assert topic == "logs.dlq" and letter["offset"] == 13 and letter["headers"]["step"] == "encode", letter
    assert stage.states[0].assembler.oldest_open_offset() is None
    assert counter("encode", "OverflowError") == before + 2


def test_the_workers_letters_are_sealed_and_fit_the_message_limit() -> None:
    """Written by the stage's encoder (the Assembler's hook): sealed, redacted, within the limit."""
    from pydantic import SecretStr

    from streams.config import DeadLetterSettings
    from streams.deadletter import letter_seal, new_key, open_original

    key = new_key()
    registry = SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(schema_id=1))
    settings = Settings(kafka=KafkaSettings(max_message_bytes=64 * 1024),
                        dead_letters=DeadLetterSettings(key=SecretStr(key)))
    stage = AssembleStage(settings, registry)
    broker = Broker()
    stage.writer = broker  # type: ignore[assignment]
    stage.group_metadata = lambda: "member-1 of generation 1"
    garbage = b"\x00\x00\x00\x00\x07 token=ghp_" + b"A" * 36 + b" " + b"x" * (200 * 1024)
    asyncio.run(stage.on_batch([record(5, b"node-1/train.log", garbage[:-1])]))

    (topic, _key, value), = broker.outputs
    assert topic == "logs.dlq" and value is not None and len(value) <= 64 * 1024
    letter = read(topic, value)
    assert letter["sealed"] and letter["headers"]["original_cut"] == "true"
    opened = open_original(letter, letter_seal(settings.dead_letters))
    assert garbage.startswith(opened) and len(opened) > 16 * 1024, "the head of the original, sealed"
    assert "ghp_AAAA" not in (letter["text"] or "") and "ghp_AAAA" not in letter["error"]


def test_a_redriven_record_that_fails_again_carries_its_marks_into_the_written_letter() -> None:
    broker = Broker()
    stage = stage_against(broker)
    garbage = b"\x00\x00\x00\x00\x07 still not a schema the registry has"
    message = Message(topic="logs.raw", partition=0, offset=40, value=garbage, key=b"node-1",
                      timestamp=1_700_000_000.0, generation_id=0,
                      headers=[("sluice-redriven-from", b"logs.dlq/0@7"), ("sluice-redrives", b"2")])
    asyncio.run(stage.on_batch([message]))
    (topic, _key, value), = broker.outputs
    letter = read(topic, value)
    assert letter["headers"]["sluice-redriven-from"] == "logs.dlq/0@7" and letter["headers"]["sluice-redrives"] == "2"


def test_an_event_over_kafka_max_message_bytes_is_a_too_large_letter_not_a_refused_transaction() -> None:
    """assemble.max_bytes keeps events under the default limit; a smaller kafka.max_message_bytes (a
    topic that takes less) makes the stage letter what the broker would refuse on every retry."""
    limit = 128 * 1024
    registry = SimpleNamespace(lookup_schema=lambda *_a, **_k: SimpleNamespace(schema_id=1))
    stage = AssembleStage(Settings(kafka=KafkaSettings(max_message_bytes=limit)), registry)
    broker = Broker()
    stage.writer = broker  # type: ignore[assignment]
    stage.group_metadata = lambda: "member-1 of generation 1"
    huge = b"2024-05-01 10:00:00 INFO train.py:12] config " + b"x" * (200 * 1024)  # under assemble.max_bytes
    asyncio.run(stage.on_batch([record(1, b"node-1/train.log", GOOD[0]), record(2, b"node-1/train.log", huge),
                                record(3, b"node-1/train.log", GOOD[1])]))
    stage.states[0].last_seen = time.monotonic() - 10  # the last block, as the idle timer emits it
    asyncio.run(stage.on_idle_tick())

    outputs = [(topic, read(topic, value), value) for topic, _key, value in broker.outputs]
    letters = [v for topic, v, _raw in outputs if topic.endswith("dlq")]
    events = [v for topic, v, _raw in outputs if topic.startswith("logs.events")]
    assert [v["error_type"] for v in letters] == ["too_large"]
    assert letters[0]["offset"] == 2 and "message limit" in letters[0]["error"]
    assert sorted(e["raw"]["first_offset"] for e in events) == [1, 3]
    assert all(len(raw or b"") <= limit for _topic, _v, raw in outputs)
