"""BytesSchema decodes and encodes exactly as Faust's raw/raw schema does, with no codec calls."""

from __future__ import annotations

import asyncio
from typing import Any

import faust
import pytest
from faust.serializers import codecs
from faust.types.tuples import Message

from devtools import CORPUS_DIR
from streams.faust_bytes import BytesSchema, bytes_topic

CORPUS = CORPUS_DIR


def app() -> faust.App:
    return faust.App("t-bytes", broker="kafka://127.0.0.1:1", store="memory://", web_enabled=False)


def message(key: bytes | None, value: bytes | None) -> Message:
    return Message("logs.raw", 0, 7, 1_700_000_000.0, 0, [], key, value, None)


def records() -> list[tuple[bytes | None, bytes | None]]:
    """Keys and values as producers send them: corpus lines, an Avro header, none, empty."""
    lines = (CORPUS / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log").read_bytes().split(b"\n")
    some = [line for line in lines if line][:50]
    return ([(b"host-1/rank-0", line) for line in some] + [(None, some[0]), (b"k", None), (b"", b""),
            (b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x07\x02\xff")])


def decode(schema: faust.Schema, the_app: faust.App, msg: Message) -> Any:
    return asyncio.run(schema.compile(the_app)(msg))


@pytest.mark.parametrize(("key", "value"), records())
def test_events_carry_what_the_raw_schema_gives(key: bytes | None, value: bytes | None) -> None:
    a = app()
    ours = decode(BytesSchema(), a, message(key, value))
    theirs = decode(faust.Schema(key_serializer="raw", value_serializer="raw"), a, message(key, value))
    assert (ours.key, ours.value) == (theirs.key, theirs.value)
    assert ours.message.value is value


def test_no_codec_is_called_to_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []
    original = codecs.raw._loads

    def counted(self: Any, s: bytes) -> bytes:
        calls.append(s)
        return original(self, s)

    monkeypatch.setattr(codecs.raw, "_loads", counted)
    a = app()
    decode(faust.Schema(key_serializer="raw", value_serializer="raw"), a, message(b"k", b"v"))
    assert calls == [b"k", b"v"], "the premise: Faust's raw schema goes through the codec"
    calls.clear()
    event = decode(BytesSchema(), a, message(b"k", b"v"))
    assert (event.key, event.value, calls) == (b"k", b"v", [])


def test_a_bytes_topic_writes_as_a_raw_one() -> None:
    a = app()
    topic = bytes_topic(a, "logs.raw", acks=False)
    raw = a.topic("logs.raw", key_serializer="raw", value_serializer="raw", acks=False)
    for key, value in records():
        if key is None or value is None:
            continue
        assert topic.prepare_key(key, None) == raw.prepare_key(key, None)
        assert topic.prepare_value(value, None) == raw.prepare_value(value, None)
    assert topic.acks is False and topic.get_topic_name() == "logs.raw"
