"""Fuzzing the assemble stage's per-record path: inputs in the real formats, and what must hold.

An input is a short run of one raw partition: records (and idle-timer ticks) as the worker sees
them, built from a stream of choices so that one generator serves every engine (Hypothesis draws,
atheris' coverage-guided bytes, a seeded random). Records come in the formats that reach
``logs.raw``: ``sluice.v1.RawBatch`` Avro records (also cut short or with a byte flipped), docker
json-file, Fluent Bit, Vector, Filebeat and OpenTelemetry JSON envelopes with any field of any JSON
type, OpenTelemetry protobuf (``otlp_proto``) with any AnyValue anywhere, nested past any stack, CRI lines
(partial and whole), plain text (real corpus lines, tracebacks, nested JSON, numbers
past every integer type, odd unicode, NUL bytes) and bytes.

:func:`check` runs an input through the Assembler as the worker runs it (Avro bodies written by the
worker's encoder, source states serialised after every record, idle flushes on stream time) and
reports a :class:`Finding` for each of: an exception leaving the Assembler; a dead letter saying
``internal`` (a bug of Sluice's own code); an output whose body does not read back under its
contract; a record that no output holds (lost); a restart from the saved source states that gives
other outputs than the run without it.

Crashers (inputs that once found something) are kept as JSON files, one per input, and replayed.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import fastavro
import msgpack

from devtools import CORPUS_DIR
from streams.assemble.decode import decode_record
from streams.assemble.merger import MAX_SHIFT, split_prefix, terminal_text
from streams.assemble.outputs import CONTRACT_OF_KIND, encode_body
from streams.assemble.pipeline import MAX_RECORD_LINES, NOT_COUNTED_BY_NEWLINES, Assembler, Output, RawRecord, source_id
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter
from streams.assemble.state import forget_source, restore_source, sid_of_key, source_state, state_key
from streams.contracts import parsed_schema

RAW_SCHEMA_ID = 1
TOPIC, PARTITION = "logs.raw", 0
T0 = 1_700_000_000_000
IDLE_MS = 1000
MAX_OUTPUT_BYTES = 1 << 20  # small enough that a fuzzed input can reach it


@dataclass(frozen=True)
class Tick:
    """The idle timer: ``flush_idle`` at stream time ``now_ms``."""

    now_ms: int


Item = RawRecord | Tick


class Choices(Protocol):
    """Where an input's choices come from."""

    def integer(self, lo: int, hi: int) -> int: ...

    def raw(self, max_size: int) -> bytes: ...

    def unicode(self, max_size: int) -> str: ...


class RandomChoices:
    """Choices from a seeded ``random.Random``."""

    def __init__(self, rng: Any) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return lo + int(self.rng.random() * (hi - lo + 1))

    def raw(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.integer(0, max_size))

    def unicode(self, max_size: int) -> str:
        n = self.integer(0, max_size)
        if self.rng.random() < 0.5:
            return self.rng.randbytes(n).decode("latin-1")
        return "".join(map(chr, (self.integer(0, 0x10FFFF) for _ in range(n))))


class DrawChoices:
    """Choices drawn from Hypothesis' ``st.data()``: shrinkable."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, lo: int, hi: int) -> int:
        return int(self.data.draw(self.st.integers(lo, hi)))

    def raw(self, max_size: int) -> bytes:
        return bytes(self.data.draw(self.st.binary(max_size=max_size)))

    def unicode(self, max_size: int) -> str:
        return str(self.data.draw(self.st.text(max_size=max_size)))


class ProviderChoices:
    """Choices from atheris' ``FuzzedDataProvider``: coverage-guided bytes."""

    def __init__(self, provider: Any) -> None:
        self.p = provider

    def integer(self, lo: int, hi: int) -> int:
        return int(self.p.ConsumeIntInRange(lo, hi))

    def raw(self, max_size: int) -> bytes:
        return bytes(self.p.ConsumeBytes(self.p.ConsumeIntInRange(0, max_size)))

    def unicode(self, max_size: int) -> str:
        return str(self.p.ConsumeUnicode(self.p.ConsumeIntInRange(0, max_size)))


# -- the pieces inputs are made of -------------------------------------------------------------------
ODD_TEXT = (
    "", " ", "\t", "\r", "\r\n", "\x00", "\x00\x00abc", "\ufeff", "\u202e", "\u200b", "e\u0301", "\U0001f600",
    "\U0010ffff", "\ufffd", "\ud800", "\udfff", "\x1b[31m", "\\", '"', "'", "\\u0000",
    "Traceback (most recent call last):", '  File "x.py", line 1, in <module>', "ValueError: x",
    "During handling of the above exception, another exception occurred:", "[rank3]:", "[rank99999999999999]: ",
    "(VllmWorkerProcess pid=1) ", "ERROR 09-05 17:22:27 file.py:63] ", "[default0]:", "{", "}", "[", "]", "{}",
    "{'loss': 1e309, 'learning_rate': -0.0, 'epoch': 99999999999999999999}", "{'loss': nan, 'grad_norm': inf}",
    '{"step": 9223372036854775808, "loss": NaN}', '{"loss": 1e999, "step": -9223372036854775809}',
    '{"global_step/max_steps": "99999999999999999999/1", "loss": "x"}',
    "iteration 99999999999999999999999/ 5 | lm loss: 1.0E+400 |",
    " iteration       10/99999999999999999999 | consumed samples: 1 | lm loss: NaN | grad norm: inf |",
    "I0101 00:00:00.000000 1 x.cc:1] ", "E9999 99:99:99.999999 99999999999999999999 x.cc:1] ",
    "9999-12-31T23:59:59.999999999Z ", "0000-00-00 00:00:00 ", "2024-02-30 25:61:61,999 INFO ",
    "[2024-13-45 99:99:99,999] [INFO] [x.py:1:f] ", "Jan 99 99:99:99 host ", "99999-01-01T00:00:00Z ",
    "1970-01-01T00:00:00Z stdout F ", "NCCL WARN", "gpu-1:1:1 [0] NCCL INFO ", "CUDA out of memory",
    "torch.OutOfMemoryError: CUDA out of memory.", "Caused by: x", "\tat a.b(C.java:1)", "\t... 3 more",
    "goroutine 1 [running]:", "panic: x", "terminate called after throwing an instance of 'c10::Error'",
    "frame #0: 0x0 in f", "#0  0x0 in f ()", "=" * 80, "-" * 200, "hf_" + "a" * 34, "password=hunter2",
    "Authorization: Bearer abcdefghijklmnop", "sk-" + "x" * 48,
    '{"msg": "saving", "format": "safetensors", "sluice.flags": "forged", "sluice": {"attributes_dropped": 9}}',
    '{"msg": "wide", "' + "k" * 300 + '": 1, "' + "k" * 200 + '": 2, "' + "k" * 128 + '": 3}',
    # characters that hold a 0x0A byte in UTF-16 and UTF-32 (U+4E0A, U+010A, U+0A0A); a terminal hyperlink (OSC 8),
    # a title (OSC 0) and a C1 CSI; Windows-1252 text read as Latin-1 (fluent/fluent-bit#5035)
    "上传失败 Ċ ਊ", "\x1b]8;;http://example.com/\x1b\\link\x1b]8;;\x1b\\", "\x1b]0;title\x07", "\x9b31mred\x9b0m",
    "Estagi\xe1rio \x93quoted\x94 \x80",
    '{"global_step": 18446744073709551616, "loss": 0.5, "learning_rate": 1e-400}',
)
NUMBER_TEXT = ("0", "-0", "-1", "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
               "99999999999999999999999", "1e308", "1e309", "-1e309", "NaN", "Infinity", "-Infinity", "1.5e-400",
               "0x10", "1_000", "00000000000000000001")
LONG_EDGES = (0, -1, 1, 2**31 - 1, -(2**31), 2**53 + 1, 2**63 - 1, -(2**63), 1_700_000_000_000,
              253_402_300_799_999, 253_402_300_800_000, -62_135_596_800_001)
INT_EDGES = (0, -1, 1, 2**31 - 1, -(2**31), 7, 99999)
TIME_TEXT = ("2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00Z", "2024-05-01 10:00:00", "9999-12-31T23:59:59Z",
             "0001-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "2024-13-45T99:99:99Z", "2024-05-01T10:00:00+99:99",
             "1714557600", "", "now", "2024-05-01T10:00:00.1234567891234567891234Z")
STREAMS = ("stdout", "stderr", "", "STDOUT", "stdin")


def _corpus_lines(limit: int = 4000) -> tuple[str, ...]:
    """Real lines of the training and loghub corpus (never corpus/wild), a fixed sample."""
    files = sorted((CORPUS_DIR / "training").glob("*.log")) + sorted((CORPUS_DIR / "loghub").glob("*/*_2k.log"))
    per_file = max(1, limit // max(1, len(files)))
    out: list[str] = []
    for f in files:
        lines = f.read_bytes().decode("utf-8", "replace").split("\n")
        step = max(1, len(lines) // per_file)
        out += lines[::step][:per_file]
    return tuple(out) or ("a line",)


CORPUS_LINES = _corpus_lines()


def pick(c: Choices, seq: Sequence[Any]) -> Any:
    return seq[c.integer(0, len(seq) - 1)]


def text(c: Choices, depth: int = 0) -> str:
    """A line: pieces of real lines, odd text, numbers and random unicode (and JSON, but not in JSON
    in JSON: the generator's own work stays bounded)."""
    parts = []
    for _ in range(c.integer(1, 4)):
        kind = c.integer(0, 9 if depth < 2 else 8)
        if kind <= 3:
            parts.append(pick(c, CORPUS_LINES))
        elif kind <= 6:
            parts.append(pick(c, ODD_TEXT))
        elif kind == 7:
            parts.append(pick(c, NUMBER_TEXT))
        elif kind == 8:
            parts.append(c.unicode(40) if c.integer(0, 3) else deep_json_text(c))
        else:
            parts.append(json.dumps(any_json(c, 0, depth + 1)))  # nested JSON in a line
    return "".join(parts)


def deep_json_text(c: Choices) -> str:
    """JSON nested past Python's own stack (a parser recurses once per level), closed or not."""
    n = pick(c, (150, 1100, 1500, 5000))
    opening, closing = pick(c, (("[", "]"), ('{"a":', "}")))
    return '{"k": ' + opening * n + "1" + closing * n * c.integer(0, 1) + "}"


def any_json(c: Choices, depth: int, text_depth: int = 0) -> Any:  # noqa: PLR0911 - one case per JSON type
    kind = c.integer(0, 10 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return c.integer(0, 1) == 1
    if kind == 2:
        return c.integer(-1000, 1000)
    if kind == 3:
        return pick(c, (*LONG_EDGES, 2**63, -(2**63) - 1, 10**23, -(10**40)))
    if kind == 4:
        return pick(c, (0.0, -0.0, 1.5, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf")))
    if kind in (5, 6):
        return text(c, text_depth)
    if kind == 7:
        return [any_json(c, depth + 1, text_depth) for _ in range(c.integer(0, 3))]
    if kind == 8:
        return {text(c, text_depth)[:20]: any_json(c, depth + 1, text_depth) for _ in range(c.integer(0, 3))}
    if kind == 9:  # past the depth limit, sometimes (json.dumps itself stops short of Python's stack)
        inner: Any = any_json(c, 3, text_depth)
        as_list = c.integer(0, 1) == 1
        for _ in range(c.integer(1, 200)):
            inner = [inner] if as_list else {"a": inner}
        return inner
    return pick(c, TIME_TEXT)


def field(c: Choices, good: Callable[[], Any]) -> Any:
    """A field's value: mostly of the right type, sometimes any JSON value at all."""
    return good() if c.integer(0, 3) else any_json(c, 1)


def _maybe(c: Choices, obj: dict[str, Any]) -> dict[str, Any]:
    """Drop some keys: envelopes come with fields missing."""
    return {k: v for k, v in obj.items() if c.integer(0, 5)}


def _k8s_fluentbit(c: Choices) -> Any:
    return field(c, lambda: _maybe(c, {
        "pod_name": field(c, lambda: text(c)[:40]), "namespace_name": field(c, lambda: text(c)[:40]),
        "container_name": field(c, lambda: text(c)[:40]), "host": field(c, lambda: text(c)[:40]),
        "labels": field(c, lambda: {text(c)[:20]: text(c)[:20] for _ in range(c.integer(0, 2))}
                        if c.integer(0, 19) else _many_labels(c))}))


def _many_labels(c: Choices) -> dict[str, str]:
    """More labels than a line keeps, some named longer than any Kubernetes label."""
    return {f"l{i}" * (1 if i % 50 else 100): text(c)[:10] if i < 3 else "v" for i in range(300)}


def _k8s_filebeat(c: Choices) -> Any:
    return field(c, lambda: _maybe(c, {
        "namespace": field(c, lambda: text(c)[:40]), "pod": field(c, lambda: {"name": field(c, lambda: text(c)[:40])}),
        "container": field(c, lambda: {"name": field(c, lambda: text(c)[:40])}), "node": {"name": any_json(c, 2)},
        "labels": field(c, lambda: {text(c)[:20]: any_json(c, 2) for _ in range(c.integer(0, 2))})}))


def docker_json(c: Choices) -> dict[str, Any]:
    return _maybe(c, {"log": field(c, lambda: text(c) + ("\n" if c.integer(0, 2) else "")),
                      "stream": field(c, lambda: pick(c, STREAMS)), "time": field(c, lambda: pick(c, TIME_TEXT))})


def fluent_bit(c: Choices) -> dict[str, Any]:
    return {**docker_json(c), **_maybe(c, {"kubernetes": _k8s_fluentbit(c), "host": field(c, lambda: text(c)[:30]),
                                           "hostname": any_json(c, 1)})}


def vector(c: Choices) -> dict[str, Any]:
    return _maybe(c, {"message": field(c, lambda: text(c)), "file": field(c, lambda: "/var/log/" + text(c)[:30]),
                      "host": field(c, lambda: text(c)[:30]), "timestamp": field(c, lambda: pick(c, TIME_TEXT)),
                      "source_type": field(c, lambda: "file"), "stream": field(c, lambda: pick(c, STREAMS)),
                      "labels": field(c, lambda: {pick(c, LABEL_NAMES): field(c, lambda: text(c)[:20])
                                                  for _ in range(c.integer(0, 2))})})


def filebeat(c: Choices) -> dict[str, Any]:
    return _maybe(c, {
        "@timestamp": field(c, lambda: pick(c, TIME_TEXT)), "message": field(c, lambda: text(c)),
        "log": field(c, lambda: _maybe(c, {"offset": field(c, lambda: pick(c, LONG_EDGES)),
                                           "file": field(c, lambda: {"path": field(c, lambda: text(c)[:40])})})),
        "host": field(c, lambda: {"name": field(c, lambda: text(c)[:30])}), "kubernetes": _k8s_filebeat(c),
        "stream": field(c, lambda: pick(c, STREAMS))})


def otel(c: Choices) -> dict[str, Any]:
    """The OpenTelemetry Collector's ``otlp_json`` encoding of logs."""
    def attr() -> Any:
        return {"key": field(c, lambda: pick(c, ("k8s.pod.name", "k8s.namespace.name", "host.name", "log.file.path",
                                                 "service.name", "log.file.record_offset",
                                                 "k8s.pod.labels.project"))),
                "value": field(c, lambda: {pick(c, ("stringValue", "intValue", "boolValue")): any_json(c, 2)})}

    record = _maybe(c, {"timeUnixNano": field(c, lambda: str(pick(c, LONG_EDGES))),
                        "observedTimeUnixNano": any_json(c, 2), "severityText": field(c, lambda: pick(c, ("ERROR", "")))
                        , "body": field(c, lambda: {"stringValue": field(c, lambda: text(c))}),
                        "attributes": field(c, lambda: [attr() for _ in range(c.integer(0, 2))])})
    return {"resourceLogs": field(c, lambda: [{
        "resource": field(c, lambda: {"attributes": [attr() for _ in range(c.integer(0, 3))]}),
        "scopeLogs": field(c, lambda: [{"scope": {}, "logRecords": field(c, lambda: [record])}])}])}


def gelf(c: Choices) -> dict[str, Any]:
    """GELF as Fluent Bit's flb_msgpack_to_gelf and Docker's gelf driver write it."""
    return {"version": field(c, lambda: "1.1"), "short_message": field(c, lambda: text(c)),
            **_maybe(c, {"full_message": field(c, lambda: "\n".join(text(c) for _ in range(c.integer(0, 4)))),
                         "host": field(c, lambda: text(c)[:30]), "timestamp": field(c, lambda: pick(c, LONG_EDGES)),
                         "_kubernetes_pod_name": field(c, lambda: text(c)[:30]),
                         "_kubernetes_labels_project": any_json(c, 1), "_container_name": any_json(c, 1)})}


def vector_native(c: Choices) -> dict[str, Any]:
    """Vector's native_json codec: the event under ``log``."""
    return {"log": vector(c)}


def journal(c: Choices) -> dict[str, Any]:
    """systemd-journald's JSON export (``MESSAGE`` may be a list of byte values)."""
    return {"MESSAGE": field(c, lambda: text(c) if c.integer(0, 3) else [c.integer(0, 300) for _ in range(9)]),
            **_maybe(c, {"__REALTIME_TIMESTAMP": field(c, lambda: str(pick(c, LONG_EDGES))),
                         "_HOSTNAME": field(c, lambda: text(c)[:30]), "SYSLOG_IDENTIFIER": any_json(c, 1),
                         "_SYSTEMD_UNIT": field(c, lambda: text(c)[:30]),
                         "CONTAINER_PARTIAL_MESSAGE": field(c, lambda: "true")})}


ENVELOPES: tuple[Callable[[Choices], dict[str, Any]], ...] = (docker_json, fluent_bit, vector, filebeat, otel, gelf,
                                                              vector_native, journal)
LABEL_NAMES = ("project", "sluice.io/project", "task_id", "rank", "team")


def varint(n: int) -> bytes:
    """``n`` as a protobuf base-128 varint (the OTLP records' wire encoding)."""
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def pb_bytes(field_no: int, payload: bytes) -> bytes:
    """A protobuf length-delimited field: its tag, its length, ``payload``."""
    return varint(field_no << 3 | 2) + varint(len(payload)) + payload


def _any_value_proto(c: Choices, depth: int = 0) -> bytes:  # noqa: PLR0911 - one case per AnyValue member
    """An OTLP ``AnyValue``: a string, a bool, an int, a double, bytes, or an array or key-value list of them,
    sometimes nested thousands deep (a few bytes a level)."""
    kind = c.integer(0, 6 if depth < 3 else 4)
    if kind == 0:
        return pb_bytes(1, text(c).encode("utf-8", "replace"))
    if kind == 1:
        return varint(2 << 3) + varint(c.integer(0, 1))
    if kind == 2:
        return varint(3 << 3) + varint(pick(c, LONG_EDGES) % (1 << 64))
    if kind == 3:
        return varint(4 << 3 | 1) + struct.pack("<d", pick(c, (0.5, float("nan"), float("inf"), 1e308)))
    if kind == 4:
        return pb_bytes(7, c.raw(20))
    if kind == 5:
        if c.integer(0, 3) == 0:  # deeper than any parser's stack
            return _nested_arrays(pick(c, (100, 130, 5000, 20_000)))
        return pb_bytes(5, b"".join(pb_bytes(1, _any_value_proto(c, depth + 1)) for _ in range(c.integer(0, 3))))
    return pb_bytes(6, b"".join(pb_bytes(1, _key_value_proto(c, depth + 1)) for _ in range(c.integer(0, 3))))


def _nested_arrays(levels: int) -> bytes:
    """An ``AnyValue`` of ``levels`` arrays, each holding the next, around a string; built outside in, once."""
    inner = pb_bytes(1, b"x")
    size, heads = len(inner), []
    for _ in range(levels):
        for field_no in (1, 5):  # ArrayValue.values[0], then AnyValue.array_value
            head = varint(field_no << 3 | 2) + varint(size)
            heads.append(head)
            size += len(head)
    return b"".join(reversed(heads)) + inner


def _key_value_proto(c: Choices, depth: int = 0) -> bytes:
    key = pick(c, ("k8s.pod.name", "host.name", "log.file.path", "log.file.record_offset", "log.iostream",
                   "k8s.pod.labels.project", "k8s.pod.annotations.x", "other"))
    return pb_bytes(1, key.encode()) + pb_bytes(2, _any_value_proto(c, depth))


def otel_proto(c: Choices) -> bytes:
    """The OpenTelemetry Collector's ``otlp_proto`` encoding of logs: resource_logs { resource, scope_logs {
    log_records { time_unix_nano, body, attributes } } }, any AnyValue anywhere; sometimes cut short."""
    def record() -> bytes:
        out = varint(1 << 3 | 1) + struct.pack("<Q", pick(c, LONG_EDGES) % (1 << 64))
        out += pb_bytes(5, _any_value_proto(c)) if c.integer(0, 5) else b""
        return out + b"".join(pb_bytes(6, _key_value_proto(c)) for _ in range(c.integer(0, 3)))

    resource = pb_bytes(1, b"".join(pb_bytes(1, _key_value_proto(c)) for _ in range(c.integer(0, 2))))
    scope = pb_bytes(2, b"".join(pb_bytes(2, record()) for _ in range(c.integer(0, 3))))
    value = pb_bytes(1, resource + scope)
    if c.integer(0, 9) == 0:
        value = value[:c.integer(1, len(value))]
    return value


def _avro_text(s: str) -> str:
    return s.encode("utf-8", "replace").decode("utf-8")  # an Avro string holds no lone surrogate


def raw_batch(c: Choices) -> bytes:
    def opt(make: Callable[[], Any]) -> Any:
        return None if c.integer(0, 3) == 0 else make()

    source = {k: opt(lambda: _avro_text(text(c)[:40])) for k in
              ("host", "namespace", "pod", "container", "file", "stream", "node_role")}
    source["rank"] = opt(lambda: pick(c, INT_EDGES))
    batch = {"source": source, "labels": {_avro_text(text(c)[:20]): _avro_text(text(c)[:30])
                                          for _ in range(c.integer(0, 2))},
             "lines": [{"line": _avro_text(text(c)), "file_offset": opt(lambda: pick(c, LONG_EDGES)),
                        "ts": opt(lambda: pick(c, LONG_EDGES))} for _ in range(c.integer(0, 6))],
             "sent_ts": opt(lambda: pick(c, LONG_EDGES))}
    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, RAW_SCHEMA_ID if c.integer(0, 9) else c.integer(0, 2**32 - 1)))
    fastavro.schemaless_writer(buf, parsed_schema("raw_batch"), batch)
    value = bytearray(buf.getvalue())
    damage = c.integer(0, 9)
    if damage == 0 and len(value) > 5:
        del value[c.integer(5, len(value) - 1):]  # cut short
    elif damage == 1:
        i = c.integer(0, len(value) - 1)
        value[i] ^= 1 << c.integer(0, 7)  # one bit flipped
    elif damage == 2:
        value += c.raw(8)  # trailing garbage
    return bytes(value)


def cri(c: Choices) -> bytes:
    flag = pick(c, ("P", "F", "F", "X"))
    return f"{pick(c, TIME_TEXT)} {pick(c, STREAMS)} {flag} {text(c)}{pick(c, ('', '', chr(10)))}".encode(
        "utf-8", "surrogatepass")


WIDE_CODECS = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")


def wide(c: Choices) -> bytes:
    """A line of a UTF-16 or UTF-32 file as an agent that cuts at each 0x0A byte sends it (grafana/alloy#217,
    elastic/beats#2500): with or without its mark, the last newline's NULs before it (little-endian) or its own
    after it (big-endian), sometimes cut inside a character that holds a 0x0A byte."""
    codec = pick(c, WIDE_CODECS)
    value = (pick(c, ("\ufeff", "")) + text(c)).encode(codec, "surrogatepass")
    width = 4 if "32" in codec else 2
    if c.integer(0, 1):
        value = b"\x00" * (width - 1) + value if codec.endswith("le") else value + b"\x00" * (width - 1)
    if c.integer(0, 4) == 0:
        value = value[:c.integer(0, len(value))]
    return value or b"\x00"


FLOOD_LINE_CHARS = 256


def plain(c: Choices) -> bytes:
    lines = [text(c) for _ in range(c.integer(1, 4))]
    if c.integer(0, 49) == 0:  # a flood: one line again and again, under the lines a record may bring or past them
        # (each line cut first: a flood counts lines, and 10,001 copies of a 140 KB corpus line were a 1.4 GB value)
        lines = [ln[:FLOOD_LINE_CHARS] for ln in lines] * pick(c, (300, MAX_RECORD_LINES // len(lines) + 1))
    return ("\n".join(lines) + pick(c, ("\n", "", "\r\n"))).encode("utf-8", "surrogatepass")


def value_of(c: Choices) -> bytes:  # noqa: PLR0911 - one return per kind of record
    kind = c.integer(0, 9)
    if kind <= 2:
        return plain(c) if c.integer(0, 15) else wide(c)
    if kind == 3:
        return cri(c)
    if kind <= 6:
        if c.integer(0, 5) == 0:
            return otel_proto(c)
        obj = pick(c, ENVELOPES)(c)
        if c.integer(0, 4) == 0:  # Fluent Bit's format msgpack (a text with a lone surrogate packs as JSON)
            try:
                return msgpack.packb(obj)
            except (TypeError, ValueError, OverflowError):
                pass
        return json.dumps(obj, ensure_ascii=bool(c.integer(0, 1))).encode("utf-8", "surrogatepass")
    if kind <= 8:
        return raw_batch(c)
    return c.raw(120)


KEYS = (b"node-1/train.log", b"node-2/train.log", b"\xff\xfe odd key", None,
        b"node-3/" + b"\x01\xff" * 600)  # (a key past the longest source id)


def items(c: Choices, max_records: int = 8) -> list[Item]:
    """One input: records of one partition (offsets in order, times mostly in order) and ticks."""
    out: list[Item] = []
    ts = T0
    for offset in range(c.integer(1, max_records)):
        ts += pick(c, (0, 1, 10, 500, IDLE_MS, 10 * IDLE_MS, -5))
        stamp = ts if c.integer(0, 19) else pick(c, LONG_EDGES)  # a producer may stamp a record with any long
        out.append(RawRecord(TOPIC, PARTITION, offset, value_of(c), pick(c, KEYS), stamp))
        if c.integer(0, 4) == 0:
            out.append(Tick(ts + pick(c, (0, IDLE_MS - 1, IDLE_MS, 100 * IDLE_MS))))
    return out


# -- running an input, and what must hold --------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    kind: str  # raised | internal | unreadable | too_large | lost | restart
    signature: str  # the same bug, the same signature: for counting distinct crashers
    detail: str


def lookup(schema_id: int) -> Any:
    return parsed_schema("raw_batch") if schema_id == RAW_SCHEMA_ID else None


ROUTER, REDACTOR = ProjectRouter(), Redactor()  # made once: building the redactor's rules is not cheap


def new_assembler() -> Assembler:
    return Assembler(lookup, ROUTER, redactor=REDACTOR, topic=TOPIC, partition=PARTITION, max_lines=20,
                     max_bytes=4096, idle_timeout_ms=IDLE_MS, max_partial_bytes=1 << 30,
                     encode=encode_body, max_output_bytes=MAX_OUTPUT_BYTES)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    return f"{type(exc).__name__} at {Path(last.filename).name}:{last.lineno}" if last else type(exc).__name__


def _save(asm: Assembler, states: dict[bytes, bytes | None]) -> None:
    for sid in asm.take_dirty():
        states[state_key(PARTITION, sid)] = source_state(asm, sid)


def _run(asm: Assembler, run: Sequence[Item], states: dict[bytes, bytes | None]) -> list[Output]:
    """As the worker: feed, idle flushes on stream time ending a turn, each touched source's state
    saved at the end of a turn."""
    out: list[Output] = []
    for item in run:
        if isinstance(item, RawRecord):
            out += asm.feed(item)
        else:
            out += asm.flush_idle(item.now_ms)
            _save(asm, states)
    _save(asm, states)
    return out


def run_input(run: Sequence[Item], restart_at: int | None = None) -> list[Output]:
    """The outputs of ``run``; with ``restart_at``, a new Assembler restored from the saved states
    carries on after that many items, as a restarted worker would."""
    states: dict[bytes, bytes | None] = {}
    cut = len(run) if restart_at is None else restart_at
    asm = new_assembler()
    out = _run(asm, run[:cut], states)
    if restart_at is not None:
        asm = new_assembler()
        for key, value in states.items():
            if value is None:
                forget_source(asm, sid_of_key(key))
            else:
                restore_source(asm, value)
        asm.take_dirty()
        out += _run(asm, run[cut:], states)
    return out + asm.flush_all()


def _must_be_held(run: Sequence[Item]) -> set[int]:
    """Offsets of records that some output must hold: all but those of blank lines only, or of the
    later fragments of a partial line (the joined line has its first fragment's offset)."""
    open_partial: dict[str, bool] = {}
    must = set()
    for item in run:
        if not isinstance(item, RawRecord):
            continue
        value = item.value
        if value and value[0] not in NOT_COUNTED_BY_NEWLINES and value.count(b"\n") > MAX_RECORD_LINES:
            must.add(item.offset)  # lettered too_many_lines as the Assembler reads it: no line of it is joined
            continue
        try:
            lines = decode_record(value, item.key, lookup, MAX_RECORD_LINES)
        except Exception:  # noqa: BLE001 - a record that does not decode must be a dead letter
            must.add(item.offset)
            continue
        for ln in lines:
            sid = item.key.decode("utf-8", "replace") if item.key else source_id(item.key, ln)
            continuing = open_partial.get(sid, False)
            open_partial[sid] = ln.partial
            text = terminal_text(ln.text)  # (colour codes alone make a blank line)
            body = split_prefix(text)[1]
            if body.strip() and text[:1] == " ":
                # a copy's indent before a relay's stamp alone: the merger takes the indent off a pasted
                # source's lines (MultilineMerger._unshift), and what is left is a blank line
                rest = text.lstrip(" ")
                if len(text) - len(rest) <= MAX_SHIFT and not split_prefix(rest)[1].strip():
                    body = ""
            if not continuing and not ln.partial and body and not body.isspace():
                must.add(item.offset)
    return must


def _held(out: Output) -> tuple[int, int]:
    v = out.value
    if out.kind == "dead_letter":
        return v["offset"], int(v["headers"].get("last_offset", v["offset"]))
    return v["raw"]["first_offset"], v["raw"]["last_offset"]


def _view(outputs: list[Output]) -> list[tuple[Any, ...]]:
    # repr: a NaN loss is not equal to itself, its repr is
    return [(o.kind, o.key, repr(o.value)) for o in outputs]


def _read_back(out: Output) -> None:
    """Read the body as a consumer would; raise if it does not read back whole."""
    buf = io.BytesIO(out.body or b"")
    fastavro.schemaless_reader(buf, parsed_schema(CONTRACT_OF_KIND[out.kind]))
    if buf.tell() != len(out.body or b""):
        raise ValueError(f"{len(out.body or b'') - buf.tell()} bytes left over")


def _output_findings(out: Output) -> list[Finding]:
    if out.body is None:
        return [Finding("unreadable", f"no body for a {out.kind}", repr(out.value)[:500])]
    found = []
    try:
        _read_back(out)
    except Exception as exc:  # noqa: BLE001 - a body its consumers cannot read
        found.append(Finding("unreadable", f"unreadable {out.kind}: {_where(exc)}", repr(out.value)[:500]))
    if len(out.body) > MAX_OUTPUT_BYTES:
        found.append(Finding("too_large", f"{out.kind} of {len(out.body)} bytes", repr(out.value)[:300]))
    if out.kind == "dead_letter" and out.value["error_type"] == "internal":
        h = out.value["headers"]
        at = h.get("traceback", "").split(" <- ")[0]
        if at.startswith("<"):  # generated code (the Avro writers): one signature per writer
            at = at.split(":")[0]
        found.append(Finding("internal", f"internal {h.get('step')} {h.get('exception')} at {at}",
                             out.value["error"][:800]))
    return found


def check(run: Sequence[Item], restart_at: int | None = None) -> list[Finding]:
    """Everything that must hold for one input; an empty list when it all does."""
    try:
        outputs = run_input(run)
    except Exception as exc:  # noqa: BLE001 - what the fuzzer is for
        return [Finding("raised", f"raised {_where(exc)}", traceback.format_exc(limit=-8))]
    found = [f for out in outputs for f in _output_findings(out)]
    spans = [_held(o) for o in outputs]
    for offset in sorted(_must_be_held(run)):
        if not any(a <= offset <= b for a, b in spans):
            found.append(Finding("lost", "a record no output holds", f"offset {offset}"))
            break
    if restart_at is not None and not found:
        try:
            again = run_input(run, restart_at)
        except Exception as exc:  # noqa: BLE001 - a restored state that cannot carry on
            return [Finding("raised", f"raised after a restart {_where(exc)}", traceback.format_exc(limit=-8))]
        before, after = _view(outputs), _view(again)
        if after != before:
            # the same outputs at other times (a block emitted later) or other outputs
            what = "their order" if sorted(map(repr, after)) == sorted(map(repr, before)) else "them"
            found.append(Finding("restart", f"a restart changes {what}", _differ(outputs, again)))
    return found


def _differ(a: list[Output], b: list[Output]) -> str:
    for i, (x, y) in enumerate(zip(_view(a), _view(b), strict=False)):
        if x != y:
            va, vb = a[i].value, b[i].value
            diff = {k: (va.get(k), vb.get(k)) for k in va if repr(va.get(k)) != repr(vb.get(k))}
            return f"output {i}: {str(diff)[:600]}"
    return f"{len(a)} outputs without the restart, {len(b)} with it"


# -- crashers: inputs kept in the repository -------------------------------------------------------------
def _blob(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return None
    try:
        text_value = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode()}
    return {"text": text_value}


def _unblob(blob: dict[str, str] | None) -> bytes | None:
    if blob is None:
        return None
    return base64.b64decode(blob["b64"]) if "b64" in blob else blob["text"].encode()


def dump_crasher(run: Sequence[Item], found: str, restart_at: int | None = None) -> str:
    doc = {"found": found, "restart_at": restart_at, "items": [
        {"tick": i.now_ms} if isinstance(i, Tick) else
        {"offset": i.offset, "ts": i.timestamp_ms, "key": _blob(i.key), "value": _blob(i.value)} for i in run]}
    return json.dumps(doc, indent=1, ensure_ascii=True) + "\n"


def load_crasher(path: Path) -> tuple[list[Item], int | None]:
    doc = json.loads(path.read_text())
    run: list[Item] = []
    for i in doc["items"]:
        if "tick" in i:
            run.append(Tick(i["tick"]))
        else:
            run.append(RawRecord(TOPIC, PARTITION, i["offset"], _unblob(i["value"]), _unblob(i["key"]), i["ts"]))
    return run, doc.get("restart_at")


def crasher_name(signature: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", signature.lower()).strip("_")[:80] + ".json"
