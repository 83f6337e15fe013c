from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import fastavro
import pytest
from corpus_helpers import TRAINING, lines

from devtools.testing.fuzzing import pb_bytes, varint
from streams.assemble.decode import decode_record, final_redraw
from streams.assemble.partials import PartialJoiner
from streams.errors import DecodeError

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
RAW_BATCH = fastavro.parse_schema(json.loads((SCHEMAS / "raw_batch.avsc").read_text()))


def _wire(schema_id: int, batch: dict) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, RAW_BATCH, batch)
    return b"\x00" + struct.pack(">I", schema_id) + buf.getvalue()


def _batch(texts: list[str]) -> dict:
    return {"source": {"host": "gpu-node-7", "pod": "trainer-0", "stream": "stderr", "rank": 3},
            "labels": {"project": "llm-pretrain"},
            "lines": [{"line": t, "file_offset": 100 * i, "ts": 1_700_000_000_000 + i} for i, t in enumerate(texts)],
            "sent_ts": None}


def test_avro_wire_format_batch():
    texts = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 11, 13)
    out = decode_record(_wire(7, _batch(texts)), b"k", lambda sid: RAW_BATCH if sid == 7 else None)
    assert [ln.text for ln in out] == texts
    assert [ln.file_offset for ln in out] == [0, 100, 200]
    assert [ln.index for ln in out] == [0, 1, 2]
    assert out[0].source["host"] == "gpu-node-7" and out[0].source["rank"] == 3
    assert out[0].labels == {"project": "llm-pretrain"}


def test_avro_unknown_schema_id():
    with pytest.raises(DecodeError) as ei:
        decode_record(_wire(99, _batch(["x"])), None, lambda sid: None)
    assert ei.value.error_type == "schema_not_found"
    assert "99" in str(ei.value)


def test_avro_lookup_failure_is_schema_not_found():
    def boom(sid):
        raise ConnectionError("registry down")
    with pytest.raises(DecodeError) as ei:
        decode_record(_wire(1, _batch(["x"])), None, boom)
    assert ei.value.error_type == "schema_not_found"


def test_avro_corrupt_body():
    good = _wire(7, _batch(["hello"]))
    with pytest.raises(DecodeError) as ei:
        decode_record(good[:9], None, lambda sid: RAW_BATCH)
    assert ei.value.error_type == "corrupt_avro"
    with pytest.raises(DecodeError) as ei:
        decode_record(good + b"\x01\x02", None, lambda sid: RAW_BATCH)
    assert ei.value.error_type == "corrupt_avro"


def _retyped(where: tuple[str, ...], avro_type: object) -> dict:
    """The RawBatch contract with one field of another type: another subject's schema, or a producer's own."""
    schema = json.loads((SCHEMAS / "raw_batch.avsc").read_text())
    fields = schema["fields"]
    if where[0] in ("lines", "source") and len(where) == 2:
        holder = next(f for f in fields if f["name"] == where[0])["type"]
        fields = (holder["items"] if where[0] == "lines" else holder)["fields"]
    field = next(f for f in fields if f["name"] == where[-1])
    field["type"] = avro_type
    field.pop("default", None)
    return fastavro.parse_schema(schema)


@pytest.mark.parametrize(("where", "avro_type", "value", "named"), [
    (("lines", "line"), "bytes", b"step 1", "lines[0].line is bytes"),
    (("lines", "ts"), "double", 1.7e12, "lines[0].ts is float"),
    (("lines", "ts"), {"type": "int", "logicalType": "date"}, 19000, "lines[0].ts is date"),
    (("lines", "file_offset"), "string", "12", "lines[0].file_offset is str"),
    (("source", "rank"), "string", "3", "source.rank is str"),
    (("source", "host"), "int", 7, "source.host is int"),
    (("labels",), {"type": "array", "items": "string"}, ["llm"], "labels is list"),
    (("labels",), {"type": "map", "values": "int"}, {"project": 1}, "a label's value is int"),
    (("lines",), {"type": "array", "items": "string"}, ["step 1"], "lines[0] is str"),
])
def test_avro_schema_of_other_types_is_a_letter_that_names_the_field(where, avro_type, value, named) -> None:
    """A registry id whose schema reads into values of other types than the contract's is a corrupt_avro letter
    naming the field, not a TypeError in a later step (an internal letter that named nothing)."""
    schema = _retyped(where, avro_type)
    batch = {"source": {"host": "h", "rank": 3}, "labels": {"project": "llm"},
             "lines": [{"line": "step 1", "file_offset": 12, "ts": 1_700_000_000_000}], "sent_ts": None}
    if len(where) == 2:
        batch[where[0]] = [{**batch["lines"][0], where[1]: value}] if where[0] == "lines" else {
            **batch["source"], where[1]: value}
    else:
        batch[where[0]] = value
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, batch)
    with pytest.raises(DecodeError) as ei:
        decode_record(b"\x00" + struct.pack(">I", 9) + buf.getvalue(), None, lambda sid: schema)
    assert ei.value.error_type == "corrupt_avro"
    assert f"schema id 9 is not a sluice.v1.RawBatch: {named}" in str(ei.value)


def test_avro_lines_of_another_type_are_not_counted_as_lines() -> None:
    """The count read ahead of a RawBatch's lines is an array's: a string's length read there was a too_many_lines
    letter for a record that holds no lines at all."""
    schema = _retyped(("lines",), "string")
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, {"source": {}, "labels": {}, "sent_ts": None, "lines": "x" * 500})
    with pytest.raises(DecodeError) as ei:
        decode_record(b"\x00" + struct.pack(">I", 9) + buf.getvalue(), None, lambda sid: schema, 100)
    assert ei.value.error_type == "corrupt_avro" and "lines is str, not an array" in str(ei.value)


def test_avro_times_of_another_precision_still_read() -> None:
    schema = _retyped(("lines", "ts"), ["null", {"type": "long", "logicalType": "timestamp-micros"}])
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, {"source": {}, "labels": {}, "sent_ts": None,
                                             "lines": [{"line": "x", "file_offset": 1, "ts": 1_700_000_000_000_000}]})
    out = decode_record(b"\x00" + struct.pack(">I", 9) + buf.getvalue(), None, lambda sid: schema)
    assert [(ln.text, ln.ts_ms) for ln in out] == [("x", 1_700_000_000_000)]


@pytest.mark.parametrize("cut", [
    b"\x00" * 9 + varint(2**63),  # the lines array announces 2**62 items: fastavro's EOFError has no message
    b"\x00" * 8 + varint(2**63),  # and so does a labels map of 2**62 entries
])
def test_avro_count_past_the_end_is_a_letter_that_says_so(cut: bytes) -> None:
    with pytest.raises(DecodeError) as ei:
        decode_record(b"\x00" + struct.pack(">I", 7) + cut, None, lambda sid: RAW_BATCH)
    assert ei.value.error_type == "corrupt_avro"
    assert str(ei.value).startswith("Avro body does not match schema id 7: it ends before the data it announces")


def test_empty_value_is_undecodable():
    with pytest.raises(DecodeError) as ei:
        decode_record(b"", None)
    assert ei.value.error_type == "empty_record"


def test_docker_json_file_records_from_corpus():
    raw = (TRAINING / "sglang_router_docker_json_file_rust_panics.log").read_bytes().split(b"\n")
    out = decode_record(raw[10])
    assert out[0].text == "thread 'actix-rt|system:0|arbiter:0' panicked at src/router.rs:589:79:"
    assert out[0].source["stream"] == "stderr" and not out[0].partial
    assert out[0].ts_ms == 1747799520752  # 2025-05-21T03:52:00.752381579Z


def test_docker_partials_joined_fluentbit_fixture():
    # fluent-bit expects 6 log lines after joining the partial records of this file
    raw = (TRAINING / "fixture_fluentbit_tail_dockermode_split_multiline.log").read_bytes().split(b"\n")
    joiner = PartialJoiner()
    got = []
    for i, r in enumerate(x for x in raw if x):
        for ln in decode_record(r):
            j = joiner.push("s", ln, i)
            if j is not None:
                got.append((j[0].text, j[1]))
    assert [t for t, _ in got] == ["2020-03-24 Multiple lines: ", "first bullet point", "second bullet point",
                                   "third bullet point", "fourth bullet point", "2020-03-24 Single line"]
    assert got[3][1] == 3  # the joined line keeps the offset of its first fragment


def test_partial_joiner_is_bounded():
    j = PartialJoiner(max_bytes=10)
    from streams.assemble.lines import RawLine
    assert j.push("s", RawLine("12345", partial=True), 1) is None
    assert j.oldest_offset() == 1
    line, off = j.push("s", RawLine("678901", partial=True), 2)
    assert line.text == "12345678901" and off == 1 and j.oldest_offset() is None


def test_filebeat_envelope():
    text = lines("vllm_serve_jamba_cuda_oom_kv_cache.log", 2, 2)[0]
    env = {"@timestamp": "2024-08-29T10:31:50.123Z", "message": text,
           "log": {"offset": 4711, "file": {"path": "/var/log/pods/x/vllm/0.log"}}, "host": {"name": "gpu-3"},
           "kubernetes": {"namespace": "inference", "pod": {"name": "vllm-0"}, "container": {"name": "vllm"},
                          "labels": {"project": "jamba"}}}
    ln = decode_record(json.dumps(env).encode())[0]
    assert ln.text == text and ln.file_offset == 4711 and ln.ts_ms == 1724927510123
    assert ln.source["file"] == "/var/log/pods/x/vllm/0.log" and ln.source["host"] == "gpu-3"
    assert ln.source["namespace"] == "inference" and ln.source["pod"] == "vllm-0"
    assert ln.labels["project"] == "jamba"


def test_vector_and_fluentbit_envelopes():
    text = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 22, 22)[0]
    v = decode_record(json.dumps({"message": text, "file": "/logs/train.out", "host": "n1",
                                  "source_type": "file", "timestamp": "2021-08-12T08:19:28Z"}).encode())[0]
    assert v.text == text and v.source["file"] == "/logs/train.out" and v.source["host"] == "n1"
    fb = decode_record(json.dumps({"log": text + "\n", "stream": "stderr",
                                   "kubernetes": {"pod_name": "p", "namespace_name": "ns",
                                                  "container_name": "c", "host": "node-a"}}).encode())[0]
    assert fb.text == text and fb.source["pod"] == "p" and fb.source["namespace"] == "ns"
    assert fb.source["host"] == "node-a" and not fb.partial


def test_cri_lines_and_partials():
    text = lines("vllm_worker_nccl_illegal_memory_watchdog_chained.log", 124, 124)[0]
    p = decode_record(f"2025-01-31T18:23:56.123456789Z stderr P {text[:20]}".encode())[0]
    f = decode_record(f"2025-01-31T18:23:56.223456789Z stderr F {text[20:]}\n".encode())[0]
    assert p.partial and not f.partial and p.source["stream"] == "stderr"
    assert p.ts_ms == 1738347836123
    j = PartialJoiner()
    assert j.push("s", p, 5) is None
    assert j.push("s", f, 6)[0].text == text


def test_plain_text_survives_bad_bytes():
    out = decode_record(b"ok \xff\xfe bad\x00 nul\r\n")
    assert out[0].text == "ok \ufffd\ufffd bad nul"
    assert decode_record(b"{not json at all")[0].text == "{not json at all"


def test_ms_swift_json_line_is_the_line_itself():
    raw = (TRAINING / "ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_head.log").read_bytes().split(b"\n")[0]
    assert decode_record(raw)[0].text == raw.decode()


def test_tqdm_redraw_keeps_final_state():
    raw = (TRAINING / "hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log").read_bytes().split(b"\n")[21]
    assert raw.count(b"\r") > 100
    text = decode_record(raw)[0].text
    assert "\r" not in text
    assert text.endswith("'epoch': 0.0}") and "200/8264" in text
    assert final_redraw("a\rb\r") == "b"


def test_a_lookup_without_logical_types_decodes_the_same_lines() -> None:
    from types import SimpleNamespace

    from streams.assemble.outputs import registry_schema_lookup

    registry = SimpleNamespace(get_schema=lambda sid: SimpleNamespace(
        schema_str=(SCHEMAS / "raw_batch.avsc").read_text()))
    texts = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 1, 60)
    value = _wire(7, _batch(texts) | {"sent_ts": 1_700_000_000_500})
    plain, logical = registry_schema_lookup(registry, logical_types=False), registry_schema_lookup(registry)
    assert fastavro.schemaless_reader(io.BytesIO(value[5:]), plain(7))["lines"][0]["ts"] == 1_700_000_000_000
    assert decode_record(value, b"k", plain) == decode_record(value, b"k", logical)
    assert [ln.ts_ms for ln in decode_record(value, b"k", plain)] == [1_700_000_000_000 + i for i in range(len(texts))]


def test_fluent_bit_tail_log_is_a_whole_line_not_a_partial() -> None:
    # a record exactly as Fluent Bit 5.1.1's tail (path_key path) + kafka (format json) sends it
    texts = lines("vllm_worker_nccl_illegal_memory_watchdog_chained.log", 1, 3)
    for t in texts:
        rec = json.dumps({"@timestamp": 1796123248.346622, "path": "/var/log/train/job-rc1.log", "log": t})
        ln = decode_record(rec.encode())[0]
        assert ln.text == t and not ln.partial
        assert ln.source["file"] == "/var/log/train/job-rc1.log" and ln.ts_ms == 1796123248346


def test_docker_rule_holds_only_for_dockers_shape() -> None:
    part = decode_record(b'{"log":"half a li","stream":"stderr","time":"2025-05-21T03:52:00.40688383Z"}')[0]
    assert part.partial and part.text == "half a li"
    parsed = decode_record(json.dumps({"@timestamp": 1.5e9, "log": "half a li", "stream": "stderr",
                                       "time": "2025-05-21T03:52:00.4Z", "path": "/x"}).encode())[0]
    assert parsed.partial  # Fluent Bit's docker parser keeps docker's fields: docker's rule
    plain = decode_record(json.dumps({"@timestamp": 1.5e9, "log": "a whole line", "path": "/x"}).encode())[0]
    assert not plain.partial


def test_a_container_line_inside_an_agents_envelope_is_decoded_as_the_files_line() -> None:
    inner = '2025-01-31T18:23:56.123456789Z stderr P first half'
    ln = decode_record(json.dumps({"@timestamp": 1.5e9, "log": inner, "path": "/var/log/containers/x.log"}).encode())[0]
    assert ln.text == "first half" and ln.partial and ln.source["stream"] == "stderr"
    assert ln.source["file"] == "/var/log/containers/x.log"


def test_rfc5424_with_structured_data_and_bom() -> None:
    v = ('<133>1 2026-12-01T11:39:19.031+00:00 gpu-3 train - - [file@32473 path="/var/log/a \\"b\\".log"] '
         '\ufeff  File "x.py", line 1\n')
    ln = decode_record(v.encode())[0]
    assert ln.text == '  File "x.py", line 1' and ln.source["host"] == "gpu-3"
    assert ln.source["file"] == '/var/log/a "b".log' and ln.ts_ms == 1796125159031
    assert decode_record(b"<not syslog> at all")[0].text == "<not syslog> at all"


def test_collector_raw_string_and_a_broken_otlp_record() -> None:
    assert decode_record(b'"\\tat org.Foo.bar(Foo.java:1)\\n"')[0].text == "\tat org.Foo.bar(Foo.java:1)"
    assert decode_record(b'"unterminated')[0].text == '"unterminated'
    with pytest.raises(DecodeError) as ei:
        decode_record(b"\x0a\x05\x12\x03\x1a\x09x")  # resource_logs whose log record runs past its end
    assert ei.value.error_type == "corrupt_otlp"
    assert [ln.text for ln in decode_record(b"\nnot protobuf")] == ["", "not protobuf"]  # text, not OTLP


def test_a_json_logger_record_with_message_is_the_line_itself():
    # python-json-logger / Ray's JSON logs: "message" beside the level and the application's own keys
    rec = {"asctime": "2024-06-01 12:00:00,123", "name": "trainer", "levelname": "WARNING", "message": "loss spike",
           "step": 1200, "loss": 9.87}
    raw = json.dumps(rec)
    assert decode_record(raw.encode())[0].text == raw
    # the same keys with one only an agent writes: an agent's envelope (its JSON parser merged the line in)
    env = decode_record(json.dumps({**rec, "source_type": "file", "file": "/x.log"}).encode())[0]
    assert env.text == "loss spike" and env.source["file"] == "/x.log"
    # "message" and keys of the line's own but no logger's: Fluent Bit's multiline test files, joined as lines
    plain = decode_record(json.dumps({"key1": 12345, "time": "2006-07-28T13:22:04Z", "message": " at a.B(C.java:1)"})
                          .encode())[0]
    assert plain.text == " at a.B(C.java:1)"
    # "message" and training state (python-json-logger with extra= and no level in its format): the record itself
    step = json.dumps({"message": "checkpoint saved", "step": 500, "loss": 0.31, "run": "r1"})
    assert decode_record(step.encode())[0].text == step


def _otlp_proto(body: bytes, attrs: bytes = b"") -> bytes:
    """resource_logs { scope_logs { log_records { body: body, attributes... } } }"""
    return pb_bytes(1, pb_bytes(2, pb_bytes(2, pb_bytes(5, body) + attrs)))


@pytest.mark.parametrize("member", [5, 6])  # ArrayValue, KeyValueList
def test_otlp_protobuf_nested_past_the_depth_limit_is_a_dead_letter_not_a_recursion_error(member: int) -> None:
    value = pb_bytes(1, b"x")
    for _ in range(20_000):  # about 100 KB: far below the message limit
        value = pb_bytes(member, pb_bytes(1, value if member == 5 else pb_bytes(1, b"a") + pb_bytes(2, value)))
    with pytest.raises(DecodeError) as ei:
        decode_record(_otlp_proto(value))
    assert ei.value.error_type == "corrupt_otlp" and "nested" in str(ei.value)
    shallow = pb_bytes(1, b"x")
    for _ in range(20):
        shallow = pb_bytes(5, pb_bytes(1, shallow))
    assert decode_record(_otlp_proto(shallow))[0].text == "[" * 20 + '"x"' + "]" * 20


def test_an_offset_or_time_of_another_type_than_an_integer_is_not_believed() -> None:
    # log.file.record_offset as a boolValue: True is an int to Python, not to the Avro writer
    flag = pb_bytes(6, pb_bytes(1, b"log.file.record_offset") + pb_bytes(2, varint(2 << 3) + varint(1)))
    (ln,) = decode_record(_otlp_proto(pb_bytes(1, b"hello"), flag))
    assert ln.text == "hello" and ln.file_offset is None
    attr = {"key": "log.file.record_offset", "value": {"boolValue": True}}
    rec = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "hi"}, "attributes": [attr]}]}]}]}
    (ln,) = decode_record(json.dumps(rec).encode())
    assert ln.text == "hi" and ln.file_offset is None


def test_an_agents_labels_of_another_type_than_text_name_no_project() -> None:
    # Vector's or Filebeat's top-level labels as Kubernetes labels are read: null, a list or an object is no
    # label (its repr, "None" or "['Team-A']", would route the line to a project nobody named)
    labels = {"project": None, "task_id": ["Team-A"], "phase": {"a": 1}, "rank": 3, "team": "nlp",
              "big": "x" * 10_000, "ok": True}
    (ln,) = decode_record(json.dumps({"message": "hi", "source_type": "file", "labels": labels}).encode())
    assert ln.labels == {"rank": "3", "team": "nlp"}


def test_keys_an_operator_had_the_agent_add_are_labels() -> None:
    # Fluent Bit's record_modifier (beside its tail's log and path), Vector's remap (beside its file source's keys)
    # and Filebeat's custom ``fields`` name the cluster or the environment: kept, where they were dropped
    rec = {"log": "step 1\n", "path": "/var/log/train.log", "cluster": "a100-pool", "gpus": 8, "tags": ["x"]}
    (ln,) = decode_record(json.dumps(rec).encode())
    assert ln.labels == {"cluster": "a100-pool", "gpus": "8"}
    rec = {"message": "hi", "source_type": "file", "file": "/f", "host": "h", "timestamp": "2024-01-01T00:00:00Z",
           "env": "prod"}
    (ln,) = decode_record(json.dumps(rec).encode())
    assert ln.labels == {"env": "prod"} and ln.source["host"] == "h"
    rec = {"@timestamp": "2024-01-01T00:00:00Z", "message": "hi", "agent": {"type": "filebeat"}, "input": {},
           "ecs": {"version": "8.0.0"}, "fields": {"project": "llm", "team": "nlp"}}
    (ln,) = decode_record(json.dumps(rec).encode())
    assert ln.labels == {"project": "llm", "team": "nlp"}


def test_an_application_record_an_agent_merged_beside_its_line_gives_no_labels() -> None:
    # Fluent Bit's kubernetes filter with Merge_Log copies the line's JSON keys into the record: they are the
    # line's (its parse lifts them), not the operator's; an added key beside them still is
    line = '{"level": "info", "msg": "saved", "step": 5, "loss": 1.2, "run": "r1"}'
    rec = {"log": line, "stream": "stdout", "time": "2024-01-01T00:00:00Z", "kubernetes": {"pod_name": "p"},
           "level": "info", "msg": "saved", "step": 5, "loss": 1.2, "run": "r1", "cluster": "c"}
    (ln,) = decode_record(json.dumps(rec).encode())
    assert ln.text == line and ln.labels == {"cluster": "c"}
