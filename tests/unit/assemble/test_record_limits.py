"""One hostile record costs its partition a bounded amount of work and comes out as one dead letter.

Each case is a record someone could write onto ``logs.raw`` (or into a job's stdout), fed through the
Assembler as the worker feeds it, between two ordinary records that must still come out as events.
"""

from __future__ import annotations

import pytest

from devtools.testing import fuzzing
from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import MAX_RECORD_LINES, Assembler, Output, RawRecord
from streams.native import NATIVE

T0 = 1_700_000_000_000
ENGINES = ["python"] + (["native"] if NATIVE is not None else [])


def _feed(values: list[bytes], engine: str, **opts: int) -> list[Output]:
    asm = Assembler(fuzzing.lookup, encode=encode_body, engine=engine, topic="logs.raw", **opts)
    out: list[Output] = []
    for offset, value in enumerate(values):
        out += asm.feed(RawRecord("logs.raw", 0, offset, value, b"node-1/train.log", T0 + offset))
    return out + asm.flush_all()


def _between(value: bytes, engine: str, **opts: int) -> tuple[list[dict], list[dict]]:
    """The dead letters and events of ``value`` fed between two ordinary lines."""
    out = _feed([b"before\n", value, b"after\n"], engine, **opts)
    letters = [o.value for o in out if o.kind == "dead_letter"]
    events = [o.value for o in out if o.kind == "event"]
    assert [e["message"] for e in events if e["raw"]["first_offset"] != 1] == ["before", "after"]
    return letters, events


def cut_deep_protobuf() -> bytes:
    """What the fuzzer found: an OTLP protobuf record nested 20,000 arrays deep, cut short by one byte. Its
    length no longer fits, so it is read as text: 0x0A is both protobuf's field-1 tag and a newline, and
    the record falls apart into some 20,000 lines of a few bytes each (over 2 CPU-seconds of events)."""
    return fuzzing.pb_bytes(1, fuzzing._nested_arrays(20_000))[:-1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "value"), [
    ("tiny lines", b"x\n" * (MAX_RECORD_LINES + 1)),
    ("blank lines", b"\r\n" * (MAX_RECORD_LINES + 1)),
    ("CRI partial fragments", b"2024-05-01T10:00:00Z stdout P x\n" * (MAX_RECORD_LINES + 1)),
    ("UTF-16 lines", b"\xff\xfe" + "x\n".encode("utf-16-le") * (MAX_RECORD_LINES + 1)),
    ("binary cut at each 0x0A", cut_deep_protobuf()),
])
def test_a_record_of_too_many_lines_is_one_letter_and_no_events(engine: str, name: str, value: bytes) -> None:
    letters, events = _between(value, engine)
    assert [(d["offset"], d["error_type"]) for d in letters] == [(1, "too_many_lines")], name
    assert "assemble.max_record_lines=10,000" in letters[0]["error"] and "logs.raw/0@1" in letters[0]["error"]
    assert letters[0]["original"] == value
    assert len(events) == 2


def _escaped_lines() -> dict[str, bytes]:
    """Records whose lines are not their 0x0A bytes: JSON escapes them, OTLP and Avro count them as items."""
    import json

    n = 20_000
    return {
        "docker line of escaped newlines": json.dumps({"log": "\n" * n}).encode(),
        "collector raw string": json.dumps("x\n" * n).encode(),
        "OTLP JSON of empty log records":
            json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [{}] * n}]}]}).encode(),
        "OTLP protobuf of empty log records": fuzzing.pb_bytes(1, fuzzing.pb_bytes(2, b"\x12\x00" * n)),
    }


# What reading each costs in memory at most, per byte of the record, with a limit of 100 lines: the parse of
# the JSON or protobuf itself (JSON's objects are large), not the 20,000 lines (each line built cost 45 to 260).
ESCAPED_PEAK_PER_BYTE = {"docker line of escaped newlines": 20, "collector raw string": 20,
                         "OTLP JSON of empty log records": 60, "OTLP protobuf of empty log records": 100}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(ESCAPED_PEAK_PER_BYTE))
def test_lines_past_the_limit_are_counted_not_built(engine: str, name: str) -> None:
    """A record's lines are counted from its bytes only for plain text: 4 MB of JSON escapes or empty OTLP log
    records are over a million lines, built before the limit was checked (seconds, and hundreds of MB)."""
    import tracemalloc

    value = _escaped_lines()[name]
    tracemalloc.start()
    try:
        letters, events = _between(value, engine, max_record_lines=100)  # (the two around it come out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(d["offset"], d["error_type"]) for d in letters] == [(1, "too_many_lines")], name
    assert "assemble.max_record_lines=100:" in letters[0]["error"] and letters[0]["original"] == value
    assert len(events) == 2
    assert peak < ESCAPED_PEAK_PER_BYTE[name] * len(value), (name, peak / len(value))


PLAIN_ID = 11  # the RawBatch contract without logical types, as the worker reads it (and the extension with it)


def _batch_lookup(schema_id: int) -> object:
    import json

    import fastavro

    from streams.contracts import schema_text

    def plain(schema: object) -> object:
        if isinstance(schema, dict):
            return {k: plain(v) for k, v in schema.items() if k != "logicalType"}
        return [plain(v) for v in schema] if isinstance(schema, list) else schema

    return fastavro.parse_schema(plain(json.loads(schema_text("raw_batch")))) if schema_id == PLAIN_ID else \
        fuzzing.lookup(schema_id)


def _avro_batch(schema_id: int, lines: int, text: str = "") -> bytes:
    import io
    import struct

    import fastavro

    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, schema_id))
    fastavro.schemaless_writer(buf, _batch_lookup(schema_id), {  # type: ignore[arg-type]
        "source": {}, "labels": {}, "sent_ts": None,
        "lines": [{"line": text, "file_offset": None, "ts": None}] * lines})
    return buf.getvalue()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("schema_id", [PLAIN_ID, fuzzing.RAW_SCHEMA_ID])
def test_an_avro_batch_of_too_many_lines_is_counted_before_it_is_read(engine: str, schema_id: int) -> None:
    """Avro writes an empty line in 3 bytes: 60 KB are 20,000 lines, each decoded (by fastavro or the extension)
    before the limit was checked. The lines array's block count says how many there are before any is read."""
    import tracemalloc

    value = _avro_batch(schema_id, 20_000)
    asm = Assembler(_batch_lookup, encode=encode_body, engine=engine, topic="logs.raw", max_record_lines=100)
    tracemalloc.start()
    try:
        out = asm.feed(RawRecord("logs.raw", 0, 1, value, b"node-1/train.log", T0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(o.kind, o.value["error_type"]) for o in out] == [("dead_letter", "too_many_lines")]
    assert "a record of 20,000 lines or more, over assemble.max_record_lines=100:" in out[0].value["error"]
    assert peak < 20 * len(value), peak / len(value)  # (each line decoded cost 85 to 105 a byte of the record)
    at_limit = _avro_batch(schema_id, 100, "step 1 done")
    outs = asm.feed(RawRecord("logs.raw", 0, 2, at_limit, b"node-1/train.log", T0)) + asm.flush_all()
    assert [o.kind for o in outs] == ["event"] * 100


RESOURCES = {
    "60,000 pod labels": [{"key": f"k8s.pod.labels.l{i}", "value": {"stringValue": "v"}} for i in range(20_000)],
    # (brackets enough that the JSON's depth is scanned whatever the number of records: that scan is the bytes')
    "a host name of 2 MB": [{"key": "host.name", "value": {"stringValue": "h" * 2_000_000}},
                            {"key": "note", "value": {"stringValue": "[" * 200}}],
}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_line_s_labels_are_bounded_in_characters_in_all(engine: str) -> None:
    """Every event of a line carries all its labels: 127 labels of a kilobyte on a batch of 8,000 short lines
    (260 KB) made 960 MB of events and 7 CPU-seconds. The first that fit in MAX_LABEL_CHARS are kept, and a
    short label after the long ones (the project's) still is."""
    import io
    import struct

    import fastavro

    from streams.assemble.pipeline import LABELS_DROPPED, MAX_LABEL_CHARS
    from streams.contracts import parsed_schema

    labels = {f"note{i}": "v" * 1000 for i in range(126)} | {"project": "p"}
    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, fuzzing.RAW_SCHEMA_ID))
    fastavro.schemaless_writer(buf, parsed_schema("raw_batch"), {
        "source": {"host": "h"}, "labels": labels, "sent_ts": None,
        "lines": [{"line": f"step {i} done", "file_offset": None, "ts": None} for i in range(500)]})
    out = _feed([buf.getvalue()], engine)
    assert [o.kind for o in out] == ["event"] * 500
    kept = out[0].value["labels"]
    assert sum(len(k) + len(v) for k, v in kept.items()) <= MAX_LABEL_CHARS
    assert kept["project"] == "p" and out[0].value["project"] == "p"
    assert int(kept[LABELS_DROPPED]) == len(labels) - (len(kept) - 1) > 100
    assert sum(len(o.body or b"") for o in out) < 500 * (MAX_LABEL_CHARS + 2048)


def _otel_resource(records: int, attrs: list[dict]) -> bytes:
    import json

    return json.dumps({"resourceLogs": [{"resource": {"attributes": attrs}, "scopeLogs": [{"logRecords": [
        {"body": {"stringValue": f"line {i}"}} for i in range(records)]}]}]}).encode()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("resource", list(RESOURCES))
def test_a_large_resource_is_read_once_for_all_its_log_records(engine: str, resource: str) -> None:
    """A resource's pod labels were read again, and its source fields cut and hashed again, for each of its
    log records: 100 records of a resource of 60,000 labels (4 MB) cost 4.6 CPU-seconds, 1,000 records of a
    3 MB host name 2.7. Eight times the records must not cost anywhere near eight times as much (it did)."""
    import time

    def cost(records: int) -> float:
        value = _otel_resource(records, RESOURCES[resource])
        asm = Assembler(fuzzing.lookup, encode=encode_body, engine=engine, topic="logs.raw")
        best = float("inf")
        for offset in range(3):
            start = time.process_time()
            out = asm.feed(RawRecord("logs.raw", 0, offset, value, b"node-%d" % offset, T0)) + asm.flush_all()
            best = min(best, time.process_time() - start)
        assert [o.kind for o in out] == ["event"] * records
        assert len(out[0].value["labels"]) <= 128 and out[-1].value["labels"] == out[0].value["labels"]
        assert out[-1].value["source"] == out[0].value["source"]
        return best

    few, many = cost(10), cost(80)
    assert many < 4 * few, (few, many)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_record_at_the_line_limit_is_read(engine: str) -> None:
    letters, events = _between(b"x\n" * 50, engine, max_record_lines=50)
    assert not letters and len(events) == 52
    letters, events = _between(b"x\n" * 51, engine, max_record_lines=50)
    assert [d["error_type"] for d in letters] == ["too_many_lines"] and len(events) == 2


def test_the_fuzzed_record_holds_through_the_whole_per_record_path() -> None:
    run = [RawRecord(fuzzing.TOPIC, fuzzing.PARTITION, 0, cut_deep_protobuf(), b"node-1/train.log", fuzzing.T0)]
    assert fuzzing.check(run, restart_at=0) == []
    assert [o.value["error_type"] for o in fuzzing.run_input(run)] == ["too_many_lines"]


@pytest.mark.parametrize("stamp", [2**62, 2**63 - 1, 253_402_300_800_000, -1, -(2**63)])
def test_a_record_stamped_with_any_long_comes_out_readable(stamp: int) -> None:
    """Kafka keeps whatever timestamp a producer sets. A block stamped past year 9999 was never quiet long
    enough for flush_all (the record was lost), and an event stamped before year 1 did not read back."""
    run = [RawRecord(fuzzing.TOPIC, fuzzing.PARTITION, 0, b"x\n", b"node-1/train.log", stamp),
           RawRecord(fuzzing.TOPIC, fuzzing.PARTITION, 1, b"y\n", b"node-1/train.log", fuzzing.T0)]
    assert fuzzing.check(run, restart_at=1) == []
    events = [o.value for o in fuzzing.run_input(run) if o.kind == "event"]
    assert [e["message"] for e in events] == ["x", "y"]
    assert 0 <= events[0]["timestamp"] <= 253_402_300_799_999


def test_a_megabyte_key_is_a_source_of_a_bounded_id_and_state() -> None:
    """A key is the source id: held per source in every table and written twice into its saved state."""
    from streams.assemble.pipeline import MAX_SID_CHARS
    from streams.assemble.state import source_state

    asm = fuzzing.new_assembler()
    keys = [bytes([i]) * (1 << 20) for i in (1, 2)] + [b"\x01" * (1 << 20) + b"x"]
    for offset, key in enumerate(keys):
        asm.feed(RawRecord("logs.raw", 0, offset, b"Traceback (most recent call last):\n", key, T0))
    sids = list(asm.merger._src)
    assert len(sids) == 3, "keys that differ anywhere are different sources"
    assert all(len(sid) <= MAX_SID_CHARS for sid in sids)
    assert all(len(source_state(asm, sid) or b"") < 16 * 1024 for sid in sids)
    assert not asm._sid_of_key
    outs = asm.flush_all()
    assert [o.kind for o in outs] == ["event"] * 3


@pytest.mark.parametrize("engine", ENGINES)
def test_labels_are_bounded_in_number_and_name_length(engine: str) -> None:
    """Every event of a line carries its labels, each redacted: 100,000 of them cost seconds an event."""
    import io
    import json
    import struct

    import fastavro

    from streams.assemble.pipeline import LABELS_DROPPED, MAX_LABELS
    from streams.contracts import parsed_schema

    many = {f"l{i}": "v" for i in range(100_000)}
    envelope = json.dumps({"log": "x\n", "kubernetes": {"labels": {"project": "p", **many}}}).encode()
    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, fuzzing.RAW_SCHEMA_ID))
    fastavro.schemaless_writer(buf, parsed_schema("raw_batch"), {
        "source": {"host": "h"}, "labels": {"n" * 400: "long name", "team": "a"}, "sent_ts": None,
        "lines": [{"line": f"line {i}", "file_offset": i, "ts": None} for i in range(3)]})
    letters, events = _between(envelope, engine)
    assert not letters
    labels = events[1]["labels"]
    assert len(labels) == MAX_LABELS and labels["project"] == "p" and events[1]["project"] == "p"
    assert labels[LABELS_DROPPED] == str(100_001 - (MAX_LABELS - 1))
    out = _feed([buf.getvalue()], engine)
    assert [o.value["labels"] for o in out] == [{"team": "a", LABELS_DROPPED: "1"}] * 3


def _otel(pod: str) -> dict:
    return {"resourceLogs": [{"resource": {"attributes": [
        {"key": "k8s.pod.name", "value": {"stringValue": pod}},
        {"key": "k8s.namespace.name", "value": {"stringValue": "ns"}}]},
        "scopeLogs": [{"logRecords": [{"body": {"stringValue": "x"}}]}]}]}


BIG = "p" * 900_000


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("agent", "envelope", "field"), [
    ("Fluent Bit", lambda v: {"log": "x\n", "stream": "stdout", "time": "2024-05-01T10:00:00Z",
                              "kubernetes": {"pod_name": v, "namespace_name": "ns"}}, "pod"),
    ("Vector", lambda v: {"message": "x", "file": "/var/log/" + v, "source_type": "kubernetes_logs"}, "file"),
    ("Filebeat", lambda v: {"message": "x", "host": {"name": v}, "agent": {"type": "filebeat"}}, "host"),
    ("Filebeat container", lambda v: {"message": "x", "agent": {}, "kubernetes": {"container": {"name": v}}},
     "container"),
    ("OpenTelemetry", _otel, "pod"),
])
def test_a_megabyte_source_field_is_cut_to_its_start_and_a_hash(engine: str, agent: str, envelope, field: str) -> None:
    """An agent's source field is held per source and written into every event of it: a 900 KB pod name
    made 900 KB events. Cut, it keeps its start and a hash of the whole: two such pods stay two sources."""
    import json

    from streams.assemble.pipeline import MAX_SOURCE_VALUE

    values = [json.dumps(envelope(BIG + tail)).encode() for tail in ("a", "b")]
    out = _feed(values, engine)
    assert [o.kind for o in out] == ["event", "event"], agent
    kept = [o.value["source"][field] for o in out]
    assert all(len(v) == MAX_SOURCE_VALUE and v.startswith(("ppp", "/var/log/ppp")) for v in kept)
    assert kept[0] != kept[1], "pods that differ past the cut are still told apart"
    assert all(len(o.body or b"") < 8 * 1024 for o in out)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_megabyte_batch_source_field_or_label_value_is_bounded(engine: str) -> None:
    """The same for a sluice.v1.RawBatch (read natively), and for label values, which no agent map bounds
    (an Avro batch's labels, a Kubernetes container image)."""
    import io
    import json
    import struct

    import fastavro

    from streams.assemble.pipeline import MAX_SOURCE_VALUE
    from streams.contracts import parsed_schema

    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, fuzzing.RAW_SCHEMA_ID))
    fastavro.schemaless_writer(buf, parsed_schema("raw_batch"), {
        "source": {"host": BIG, "file": "/f"}, "labels": {"team": BIG}, "sent_ts": None,
        "lines": [{"line": f"line {i}", "file_offset": i, "ts": None} for i in range(3)]})
    image = json.dumps({"log": "x\n", "kubernetes": {"container_image": BIG, "pod_name": "p"}}).encode()
    out = _feed([buf.getvalue(), image], engine)
    assert [o.kind for o in out] == ["event"] * 4
    assert {len(o.value["source"]["host"]) for o in out[:3]} == {MAX_SOURCE_VALUE}
    assert {len(o.value["labels"]["team"]) for o in out[:3]} == {MAX_SOURCE_VALUE}
    assert len(out[3].value["labels"]["k8s.container.image"]) == MAX_SOURCE_VALUE
    assert all(len(o.body or b"") < 8 * 1024 for o in out)


SPLIT = "a中😀éb".encode()


def _cri(tag: str, body: bytes) -> bytes:
    return b"2024-05-01T10:00:00Z stdout " + tag.encode() + b" " + body + b"\n"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cut", range(2, len(SPLIT) - 1))
def test_a_character_cut_between_cri_fragments_is_joined_whole(engine: str, cut: int) -> None:
    """A runtime splits a long line by bytes: a character across its P and F fragments was two U+FFFD,
    one from each fragment decoded alone. Kept as bytes for the join, it is the character again."""
    out = _feed([_cri("P", SPLIT[:cut]), _cri("F", SPLIT[cut:])], engine)
    assert [(o.kind, o.value["message"]) for o in out] == [("event", "a中😀éb")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cut", [2, 3, 5, 7])
def test_a_character_cut_between_fragments_is_joined_after_a_restart(engine: str, cut: int) -> None:
    """The P fragment is in the source's saved state when the worker stops: its cut bytes are kept there."""
    from streams.assemble.state import restore_source, source_state

    first = Assembler(fuzzing.lookup, encode=encode_body, engine=engine, topic="logs.raw")
    assert first.feed(RawRecord("logs.raw", 0, 0, _cri("P", SPLIT[:cut]), b"k", T0)) == []
    (sid,) = first.joiner.held
    state = source_state(first, sid)
    assert state is not None and state.isascii()
    second = Assembler(fuzzing.lookup, encode=encode_body, engine=engine, topic="logs.raw")
    restore_source(second, state)
    out = second.feed(RawRecord("logs.raw", 0, 1, _cri("F", SPLIT[cut:]), b"k", T0 + 1)) + second.flush_all()
    assert [(o.kind, o.value["message"]) for o in out] == [("event", "a中😀éb")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("records", "message"), [
    ([_cri("P", b"x\xe4\xb8")], "x\ufffd"),  # the rest never came: as a lone fragment decodes
    ([_cri("F", b"\xb8\xadx")], "\ufffd\ufffdx"),  # stray continuation bytes, nothing before them
    ([_cri("P", b"x\xe4\xb8"), _cri("F", b"y")], "x\ufffdy"),  # the next fragment does not finish it
    ([_cri("P", b"x\xe4"), _cri("F", b"\xb8\xb8\xb8y")], "x\u4e38\ufffdy"),  # bytes as one decoding reads them
    ([_cri("P", b"x\xc0"), _cri("F", b"\x80y")], "x\ufffd\ufffdy"),  # no character starts with C0
])
def test_bytes_that_join_no_character_stay_replacement_characters(engine: str, records: list[bytes],
                                                                   message: str) -> None:
    out = _feed(records, engine)
    assert [(o.kind, o.value["message"]) for o in out] == [("event", message)]


@pytest.mark.parametrize("engine", ENGINES)
def test_sluice_parse_joins_a_character_cut_between_fragments(engine: str, tmp_path) -> None:
    from streams.assemble.pipeline import parse_files

    path = tmp_path / "container.log"
    path.write_bytes(_cri("P", SPLIT[:2]) + _cri("F", SPLIT[2:]) + _cri("F", b"\xadz"))
    events = [e for e in parse_files([path], default_ts_ms=T0, engine=engine) if e.get("kind") != "dead_letter"]
    assert [e["message"] for e in events] == ["a中😀éb", "\ufffdz"]
