"""A poison record costs one dead letter, never the records around it, and nothing raises.

The Assembler runs as the worker runs it: with the worker's Avro body writer as its ``encode`` hook,
so an output that cannot be encoded is a failure of the per-record path too. Each poison input is fed
between good records of the same partition (its own source and a shared one); the good records come
out as events, the poison record is exactly one output. Faults are also injected through the
Assembler's public seams (the encoder, the router, the redactor, the merger) so that the isolation
is proven even for failures that the parsers, once fixed, no longer produce.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from streams.assemble import failures as F
from streams.assemble.merger import MultilineMerger
from streams.assemble.outputs import CONTRACT_OF_KIND, encode_body
from streams.assemble.pipeline import Assembler, Output, RawRecord
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter
from streams.contracts import parsed_schema

T0 = 1_700_000_000_000
GOOD = [f"2024-05-01 10:00:{i:02d} INFO train.py:12] step {i} done" for i in range(6)]

POISON = {  # name: (record value, the error type of its dead letter while the field or envelope bug lasts)
    "deeply_nested_json": (b'{"a":' * 5000, "json_limits"),
    "deeply_nested_closed_json": (b'{"a":' * 5000 + b"1" + b"}" * 5000, "json_limits"),
    # nested in an envelope's line, the line parser meets it: past the limits it is not parsed, a text event
    "deeply_nested_json_in_a_line": (json.dumps({"log": '{"a":' * 3000 + "1" + "}" * 3000 + "\n"}).encode(), ""),
    "step_beyond_long": (b'{"step": 9223372036854775808}', "internal"),
    "megatron_iteration_beyond_long": (b"iteration 99999999999999999999999/ 5 | consumed samples: 8 | "
                                       b"lm loss: 1.0E+00 |", "internal"),
    "envelope_host_number": (b'{"log": "hello\\n", "stream": "stdout", "host": 5}', "internal"),
    "envelope_host_list": (b'{"message": "hello", "host": ["a", "b"]}', "internal"),
    "fluentbit_namespace_dict": (b'{"log": "hello\\n", "kubernetes": {"namespace_name": {"x": 1}}}', "internal"),
    "filebeat_namespace_dict": (b'{"message": "hello", "kubernetes": {"namespace": {"x": 1}, "pod": {"name": '
                                b'["p"]}}}', "internal"),
}


def decoded(out: Output) -> dict:
    """The output's Avro body read back with fastavro: what a consumer of the topic gets."""
    assert out.body is not None, out
    buf = io.BytesIO(out.body)
    value = fastavro.schemaless_reader(buf, parsed_schema(CONTRACT_OF_KIND[out.kind]))
    assert buf.tell() == len(out.body)
    return value  # type: ignore[return-value]


def feed_all(asm: Assembler, records: list[RawRecord]) -> list[Output]:
    out = []
    for r in records:
        out += asm.feed(r)
    return out + asm.flush_all()


def record(offset: int, value: bytes, key: bytes) -> RawRecord:
    return RawRecord("logs.raw", 4, offset, value, key, T0 + offset)


def around(poison: bytes, poison_key: bytes) -> list[RawRecord]:
    """Good lines of source "node-1", the poison record in the middle under ``poison_key``."""
    good = [(text + "\n").encode() for text in GOOD]
    values = [*good[:3], poison, *good[3:]]
    keys = [b"node-1"] * 3 + [poison_key] + [b"node-1"] * 3
    return [record(i, v, k) for i, (v, k) in enumerate(zip(values, keys, strict=True))]


def outputs_of(outputs: list[Output], offset: int) -> list[Output]:
    """Outputs holding the record at ``offset``: dead letters from it, events and metrics made of it."""
    found = []
    for o in outputs:
        v = o.value
        first, last = (v["offset"], v["offset"]) if o.kind == "dead_letter" else (
            v["raw"]["first_offset"], v["raw"]["last_offset"])
        if first <= offset <= last:
            found.append(o)
    return found


@pytest.mark.parametrize("shared_source", [False, True], ids=["own_source", "same_source"])
@pytest.mark.parametrize("name", sorted(POISON))
def test_a_poison_record_is_one_output_and_the_good_ones_come_out(name: str, shared_source: bool) -> None:
    value, error_type = POISON[name]
    records = around(value, b"node-1" if shared_source else b"node-2")
    outputs = feed_all(Assembler(encode=encode_body), records)

    for out in outputs:
        assert decoded(out) is not None  # every output encodes: the worker can produce all of them
    events = [o.value for o in outputs if o.kind == "event"]
    assert sorted(e["message"] for e in events if e["raw"]["first_offset"] != 3) == sorted(GOOD)
    (poisoned,) = outputs_of(outputs, 3)
    if poisoned.kind == "dead_letter":
        letter = poisoned.value
        assert letter["error_type"] == error_type
        assert letter["topic"] == "logs.raw" and letter["partition"] == 4 and "logs.raw/4@3" in letter["error"]
        if error_type == "internal":  # failed after decoding: the letter holds the line the record decoded to
            assert letter["headers"]["exception"] and letter["headers"]["traceback"]
            assert letter["headers"]["original"] == "lines" and letter["original"].endswith(b"\n")
        else:
            assert letter["original"] == value
    else:  # the parser or the envelope decoder has been taught this input: one whole event (or metric point)
        assert poisoned.kind in ("event", "metric") and poisoned.value["raw"]["last_offset"] == 3
    if not error_type:
        assert poisoned.kind == "event", "nothing in it is bad data: it must be an event"


def test_deeply_nested_json_is_refused_before_the_parser_sees_it() -> None:
    (letter,) = Assembler(encode=encode_body).feed(record(0, b'{"a":' * 5000, b"k"))
    assert letter.value["error_type"] == "json_limits"
    assert "5000 levels deep" in letter.value["error"]
    assert letter.value["headers"] == {"step": "decode"}


class FailingEncoder:
    """The worker's body writer, failing for outputs whose message holds a marker (a future parser bug)."""

    def __init__(self, marker: str = "POISON") -> None:
        self.marker = marker

    def __call__(self, out: Output) -> bytes:
        if self.marker in (out.value.get("message") or ""):
            raise ValueError(f"cannot encode {out.value['message'][:20]!r}")
        return encode_body(out)


def test_an_output_that_fails_to_encode_is_its_blocks_dead_letter() -> None:
    tb = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
          "RuntimeError: POISON in the data"]
    lines = [GOOD[0], *tb, GOOD[1]]
    records = [record(i, (t + "\n").encode(), b"node-1") for i, t in enumerate(lines)]
    outputs = feed_all(Assembler(encode=FailingEncoder()), records)

    assert [o.kind for o in outputs] == ["event", "dead_letter", "event"]
    letter = decoded(outputs[1])
    assert letter["error_type"] == "internal" and letter["offset"] == 1
    assert letter["headers"]["step"] == "encode" and letter["headers"]["exception"] == "ValueError"
    assert letter["headers"]["original"] == "lines" and letter["headers"]["last_offset"] == "3"
    assert letter["original"] == ("\n".join(tb) + "\n").encode(), "the block's lines, ready to re-drive"
    assert letter["key"] == b"node-1"
    assert [o.value["message"] for o in outputs if o.kind == "event"] == [GOOD[0], GOOD[1]]


def test_the_idle_flush_dead_letters_a_failing_block_instead_of_raising() -> None:
    """From the idle timer an exception crash-looped the worker: the block that failed came back each time."""
    asm = Assembler(encode=FailingEncoder(), idle_timeout_ms=1000)
    assert asm.feed(record(0, b"POISON: the last line of a job that died\n", b"node-1")) == []
    (letter,) = asm.flush_idle(T0 + 5000)
    assert letter.kind == "dead_letter" and letter.value["headers"]["step"] == "encode"
    assert asm.oldest_open_offset() is None and asm.committable_offset() == 1
    assert asm.flush_idle(T0 + 10_000) == []


class FailingRouter(ProjectRouter):
    def project(self, labels: dict, source: dict) -> str:
        if labels.get("project") == "poison":
            raise KeyError("poison")
        return super().project(labels, source)


class FailingRedactor(Redactor):
    def __call__(self, text: str) -> str:
        if "POISON" in text:
            raise RecursionError("maximum recursion depth exceeded")
        return super().__call__(text)


def test_routing_and_redaction_failures_are_the_blocks_dead_letter() -> None:
    routed = json.dumps({"message": "routed here", "labels": {"project": "poison"}}).encode()
    redacted = b"POISON in a secret\n"
    records = [record(0, b"ok 1\n", b"a"), record(1, routed, b"b"), record(2, redacted, b"c"),
               record(3, b"ok 2\n", b"a")]
    outputs = feed_all(Assembler(router=FailingRouter(), redactor=FailingRedactor(), encode=encode_body), records)
    letters = {o.value["offset"]: o.value for o in outputs if o.kind == "dead_letter"}
    assert sorted(letters) == [1, 2]
    assert letters[1]["headers"]["exception"] == "KeyError" and letters[1]["original"] == b"routed here\n"
    assert letters[2]["headers"]["exception"] == "RecursionError" and letters[2]["original"] == redacted
    # the redactor fails on this letter's text too: the letter keeps its original, and no readable text
    assert letters[2]["text"].startswith("(no readable text: redacting this letter failed")
    assert [o.value["message"] for o in outputs if o.kind == "event"] == ["ok 1", "ok 2"]


class FailingMerger(MultilineMerger):
    """Fails halfway through a line holding the marker: the source's state is then half updated."""

    def push(self, sid, line, offset, arrival_ms):  # type: ignore[no-untyped-def]
        blocks = super().push(sid, line, offset, arrival_ms)
        if "POISON" in line.text:
            raise IndexError("list index out of range")
        return blocks


def test_a_merge_failure_letters_its_sources_held_lines_and_leaves_other_sources_alone() -> None:
    asm = Assembler(encode=encode_body)
    asm.merger = FailingMerger(asm.merger.max_lines, asm.merger.max_bytes, asm.merger.idle_timeout_ms)
    tb = ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>']
    other = ["Traceback (most recent call last):", '  File "b.py", line 2, in <module>', "ValueError: b"]
    values = [
        (b"a", tb[0]), (b"b", other[0]), (b"a", tb[1]), (b"b", other[1]),
        (b"a", "  POISON frame"),  # merging it fails: a's open traceback and this line are one letter
        (b"a", "2024-05-01 10:00:00 INFO after"), (b"b", other[2]),
    ]
    outputs = feed_all(asm, [record(i, (t + "\n").encode(), k) for i, (k, t) in enumerate(values)])

    letters = [decoded(o) for o in outputs if o.kind == "dead_letter"]
    assert len(letters) == 1
    letter = letters[0]
    assert letter["offset"] == 0 and letter["key"] == b"a"
    assert letter["original"].decode().splitlines()[:2] == tb
    assert letter["original"].decode().splitlines()[2:] == ["  POISON frame"]
    assert letter["headers"]["step"] == "merge" and letter["headers"]["exception"] == "IndexError"
    events = [o.value for o in outputs if o.kind == "event"]
    assert [e["message"] for e in events] == ["\n".join(other), "2024-05-01 10:00:00 INFO after"]
    assert events[0]["raw"]["first_offset"] == 1, "source b's block went on, whole"
    assert asm.oldest_open_offset() is None


def test_a_merge_failure_takes_the_held_partial_line_with_it() -> None:
    asm = Assembler(encode=encode_body)
    asm.merger = FailingMerger(asm.merger.max_lines, asm.merger.max_bytes, asm.merger.idle_timeout_ms)
    part = b"2024-05-01T10:00:00.000000000Z stdout P first half, "
    rest = b"2024-05-01T10:00:00.100000000Z stdout F POISON second half\n"
    outputs = feed_all(asm, [record(0, part, b"a"), record(1, rest, b"a"), record(2, b"after\n", b"a")])
    letter = next(o.value for o in outputs if o.kind == "dead_letter")
    assert letter["original"] == b"first half, POISON second half\n" and letter["offset"] == 0
    assert [o.value["message"] for o in outputs if o.kind == "event"] == ["after"]


def test_the_step_of_an_internal_error_is_read_from_the_traceback() -> None:
    from streams.assemble.route import sanitize

    try:
        sanitize(None)  # type: ignore[arg-type]
    except AttributeError as exc:
        failure = F.internal(exc, "build")
    assert failure.step == "route" and failure.error_type == "internal"
    assert failure.headers["exception"] == "AttributeError"
    assert "route.py" in failure.headers["traceback"]
    assert "a bug in Sluice" in failure.error


def test_a_letter_over_the_message_limit_is_cut_to_fit_and_flagged() -> None:
    limit = 64 * 1024
    asm = Assembler(encode=encode_body, max_output_bytes=limit)
    huge = b"\x00\x00\x00\x00\x07" + b"x" * (200 * 1024)  # an Avro record of a schema the registry lacks
    (letter,) = asm.feed(record(0, huge, b"k"))
    assert letter.body is not None and len(letter.body) <= limit
    value = decoded(letter)
    assert value["headers"]["original_cut"] == "true" and value["headers"]["original_bytes"] == str(len(huge))
    assert huge.startswith(value["original"]) and len(value["original"]) > limit // 2


def test_an_event_over_the_message_limit_is_a_too_large_letter() -> None:
    asm = Assembler(encode=encode_body, max_output_bytes=4096, max_bytes=1 << 20)
    outputs = feed_all(asm, [record(0, b"y" * 10_000 + b"\n", b"k"), record(1, b"small\n", b"k")])
    assert [o.kind for o in outputs] == ["dead_letter", "event"]
    assert outputs[0].value["error_type"] == "too_large" and len(outputs[0].body or b"") <= 4096


@pytest.mark.parametrize("fragment", [
    b"2024-05-01T10:00:00.000000000Z stderr P a line the runtime split, and the container died",
    b'{"log": "a line the runtime split, and the container died", "stream": "stderr"}',
], ids=["cri", "docker"])
def test_the_last_partial_line_of_a_dead_container_is_released_by_the_idle_flush(fragment: bytes) -> None:
    asm = Assembler(encode=encode_body, idle_timeout_ms=5000)
    assert asm.feed(RawRecord("logs.raw", 0, 10, fragment, b"pod-1", T0)) == []
    assert asm.oldest_open_offset() == 10
    assert asm.flush_idle(T0 + 4999) == [], "not before the source has been quiet for the timeout"
    (event,) = asm.flush_idle(T0 + 5000)
    assert event.kind == "event" and event.value["message"] == "a line the runtime split, and the container died"
    assert event.value["raw"]["first_offset"] == 10
    assert asm.oldest_open_offset() is None and asm.committable_offset() == 11


def test_a_held_partial_line_keeps_its_quiet_time_across_a_restart() -> None:
    from streams.assemble.state import restore_source, source_state

    first = Assembler(idle_timeout_ms=5000)
    first.feed(RawRecord("logs.raw", 0, 10, b"2024-05-01T10:00:00Z stderr P half a line", b"pod-1", T0))
    state = source_state(first, "pod-1")
    assert state is not None
    second = Assembler(idle_timeout_ms=5000)
    restore_source(second, state)
    assert second.newest_ts() == T0
    assert second.flush_idle(T0 + 4000) == []
    assert [o.value["message"] for o in second.flush_idle(T0 + 5000)] == ["half a line"]


def test_a_letter_that_cannot_be_encoded_is_kept_bare() -> None:
    def encode(out: Output) -> bytes:
        if out.kind == "dead_letter" and out.value["original"]:
            raise ValueError("this letter does not encode")
        return encode_body(out)

    asm = Assembler(encode=encode)
    (letter,) = asm.feed(record(7, b"\x00\x00\x00\x00\x09garbage", b"k"))  # a schema the registry lacks
    value = decoded(letter)
    assert value["original"] == b"" and value["offset"] == 7 and value["error_type"] == "schema_not_found"
    assert "could not be encoded (ValueError)" in value["error"] and value["headers"]["exception"] == "ValueError"


def test_a_letter_of_a_record_with_a_huge_key_fits_too() -> None:
    limit = 64 * 1024
    asm = Assembler(encode=encode_body, max_output_bytes=limit)
    key = b"k" * (200 * 1024)
    (letter,) = asm.feed(record(0, b"\x00\x00\x00\x00\x07" + b"x" * (100 * 1024), key))
    # the body fits the limit; the key (the Kafka key too) fits the room the worker keeps beside it
    assert letter.body is not None and len(letter.body) <= limit and len(letter.key or b"") == F.MAX_KEY_BYTES
    assert decoded(letter)["headers"]["key_bytes"] == str(len(key))
