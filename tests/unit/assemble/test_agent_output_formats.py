"""The other formats node agents' Kafka outputs can be set to: Fluent Bit's ``format msgpack`` and
``format gelf``, Vector's ``native_json`` and ``gelf`` codecs, Docker's gelf driver. Each record is built
the way its printer builds it (Fluent Bit's plugins/out_kafka/kafka.c and flb_pack_gelf.c; Vector's
NativeJsonSerializer, which serialises the event as ``{"log": {...}}``), and must give the lines, source
fields, labels and time that the same record in the agent's default JSON format gives."""

from __future__ import annotations

import json
import struct

import msgpack
import pytest

from streams.assemble.decode import decode_record
from streams.assemble.engine import decoder
from streams.assemble.msgpack_records import record_map
from streams.errors import DecodeError

# A record as Fluent Bit's tail input and kubernetes filter leave it (the kafka output adds the time).
RECORD = {
    "log": "Traceback (most recent call last):",
    "stream": "stderr",
    "kubernetes": {"pod_name": "trainer-0", "namespace_name": "ml", "container_name": "main",
                   "host": "gpu-node-7", "labels": {"project": "llm", "app.kubernetes.io/name": "trainer"}},
}
TS = 1796123248.34


def fluent_bit(record: dict, fmt: str, ts_key: str = "@timestamp", ts: object = TS) -> bytes:
    """What out_kafka's produce_message sends: the timestamp key first, then the record's keys."""
    packed = {ts_key: ts, **record}
    return msgpack.packb(packed) if fmt == "msgpack" else json.dumps(packed).encode()


def gelf_flatten(obj: dict, prefix: str, out: dict) -> None:
    """flb_msgpack_gelf_flatten: a nested map's keys joined to its prefix with ``_``."""
    for k, v in obj.items():
        if isinstance(v, dict):
            gelf_flatten(v, f"{prefix}_{k}", out)
        else:
            out[f"{prefix}_{k}"] = v


def fluent_bit_gelf(record: dict, short_message_key: str = "log") -> bytes:
    """flb_msgpack_to_gelf with ``Gelf_Short_Message_Key log``: version first, the named key as
    short_message, other keys ``_``-prefixed, maps flattened."""
    out: dict = {"version": "1.1", "timestamp": TS}
    for k, v in record.items():
        if k == short_message_key:
            out["short_message"] = v
        elif isinstance(v, dict):
            gelf_flatten(v, f"_{k}", out)
        else:
            out[f"_{k}"] = v
    return json.dumps(out).encode()


def test_fluent_bit_msgpack_gives_what_its_json_format_gives() -> None:
    as_json = decode_record(fluent_bit(RECORD, "json"))
    as_msgpack = decode_record(fluent_bit(RECORD, "msgpack"))
    assert as_msgpack == as_json
    (line,) = as_msgpack
    assert line.text == RECORD["log"] and line.ts_ms == 1796123248340
    assert (line.source["pod"], line.source["namespace"], line.source["container"]) == ("trainer-0", "ml", "main")
    assert line.labels["project"] == "llm"


def test_fluent_bit_msgpack_with_iso_time_and_a_map_of_more_than_fifteen_keys() -> None:
    record = {**RECORD, **{f"k{i}": i for i in range(20)}}  # map16 (0xde), not a fixmap
    value = fluent_bit(record, "msgpack", ts="2026-12-01T10:00:00.123456Z")
    assert value[0] == 0xDE
    (line,) = decode_record(value)
    assert line.text == RECORD["log"] and line.ts_ms == 1796119200123


def test_an_applications_own_record_packed_is_its_json_line() -> None:
    """No agent's keys: the map is the application's record, and its JSON is the line, NaN kept."""
    (line,) = decode_record(msgpack.packb({"step": 3, "loss": float("nan"), "msg": "x"}))
    assert line.text == '{"step":3,"loss":NaN,"msg":"x"}'


def test_fluent_bits_event_time_and_binary_values_read_as_json_would_hold_them() -> None:
    sec, nsec = 1796123248, 340_000_000
    packed = msgpack.packb({"time": msgpack.ExtType(0, struct.pack(">II", sec, nsec)), "log": b"line\n"},
                           use_bin_type=True)
    got = record_map(packed)
    assert got == {"time": pytest.approx(1796123248.34), "log": "line\n"}
    (line,) = decode_record(packed)
    assert line.text == "line" and line.ts_ms == 1796123248340


@pytest.mark.parametrize("value", [
    b"\x85garbage that is no map",        # the first byte opens a fixmap, the rest is not MessagePack
    b"\x81\xa1a\x01trailing bytes",       # one map, then more
    b"\x81\x01\x02",                      # a map with an integer key: no agent's record
    "\u07c0 NKo text".encode(),            # 0xdf as UTF-8's lead byte: text
])
def test_bytes_that_only_start_like_a_map_stay_plain_text(value: bytes) -> None:
    (line,) = decode_record(value)
    assert line.text == value.decode("utf-8", "replace")


def test_a_map_nested_past_the_limit_is_a_dead_letter_not_a_crash() -> None:
    with pytest.raises(DecodeError) as err:
        decode_record(b"\x81\xa1a" * 5000 + b"\x01")
    assert err.value.error_type == "msgpack_limits"
    with pytest.raises(DecodeError):
        decode_record(b"\x81\xa1a" * 200 + b"\x01")  # within msgpack's own stack, past the JSON limit


def test_fluent_bit_gelf_gives_the_line_source_and_labels_of_its_json_format() -> None:
    (gelf,) = decode_record(fluent_bit_gelf(RECORD))
    (plain,) = decode_record(fluent_bit(RECORD, "json"))
    assert gelf.text == plain.text and gelf.ts_ms == plain.ts_ms
    for field in ("pod", "namespace", "container", "host", "stream"):
        assert gelf.source[field] == plain.source[field], field
    assert gelf.labels["project"] == "llm" and gelf.labels["app.kubernetes.io/name"] == "trainer"


def test_gelf_full_message_is_the_whole_text_split_into_lines() -> None:
    """A sender with the whole text (a traceback) in full_message: the merger gets every line."""
    value = json.dumps({"version": "1.1", "host": "node-3", "short_message": "Traceback (most recent call last):",
                        "full_message": 'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: x\n',
                        "timestamp": TS, "level": 3, "_container_name": "trainer"}).encode()
    lines = decode_record(value)
    assert [ln.text for ln in lines] == ["Traceback (most recent call last):", '  File "a.py", line 1', "ValueError: x"]
    assert {ln.source["container"] for ln in lines} == {"trainer"} and lines[0].source["host"] == "node-3"


def test_vector_native_json_gives_what_its_json_codec_gives() -> None:
    event = {"message": "step 10 loss 2.5", "host": "node-3", "timestamp": "2026-12-01T10:00:00.123Z",
             "source_type": "kubernetes_logs", "stream": "stderr",
             "kubernetes": {"pod_name": "trainer-0", "pod_namespace": "ml", "container_name": "main",
                            "pod_labels": {"project": "llm"}}}
    assert decode_record(json.dumps({"log": event}).encode()) == decode_record(json.dumps(event).encode())
    (line,) = decode_record(json.dumps({"log": event}).encode())
    assert line.text == "step 10 loss 2.5" and line.labels == {"project": "llm"}


@pytest.mark.parametrize("value", [
    fluent_bit(RECORD, "msgpack"),
    b"\x85garbage that is no map",
    fluent_bit_gelf(RECORD),
])
def test_both_engines_read_these_records_alike(value: bytes) -> None:
    assert decoder("python")(value) == decoder(None)(value)


# journalctl -o json of a kernel line (the NVIDIA driver's Xid) and of a unit's line; the journal's own time
# is microseconds since the epoch, as text.
JOURNAL_KERNEL = {"__REALTIME_TIMESTAMP": "1796123248340123", "_TRANSPORT": "kernel", "PRIORITY": "4",
                  "SYSLOG_IDENTIFIER": "kernel", "_HOSTNAME": "gpu-node-7",
                  "MESSAGE": "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."}
JOURNAL_UNIT = {"__REALTIME_TIMESTAMP": "1796123249000000", "_TRANSPORT": "stdout", "_SYSTEMD_UNIT": "trainer.service",
                "SYSLOG_IDENTIFIER": "python3", "_HOSTNAME": "gpu-node-7", "_PID": "4242",
                "MESSAGE": "Traceback (most recent call last):"}


def test_journald_records_give_the_message_host_time_and_a_source_per_writer() -> None:
    (kernel,) = decode_record(json.dumps(JOURNAL_KERNEL).encode())
    (unit,) = decode_record(json.dumps(JOURNAL_UNIT).encode())
    assert kernel.text == JOURNAL_KERNEL["MESSAGE"] and kernel.ts_ms == 1796123248340
    assert kernel.source["host"] == unit.source["host"] == "gpu-node-7"
    # the kernel and the unit are two sources: their lines must not be merged into one another's events
    assert (kernel.source["file"], unit.source["file"]) == ("journal:kernel", "journal:trainer.service")


def test_journald_fields_as_fluent_bits_systemd_input_strips_them_and_a_message_that_is_bytes() -> None:
    stripped = {"@timestamp": TS, "HOSTNAME": "gpu-node-7", "SYSTEMD_UNIT": "kubelet.service",
                "MESSAGE": list("caf\xe9 \xff".encode("latin-1"))}
    (line,) = decode_record(json.dumps(stripped).encode())
    assert line.text == "caf\ufffd \ufffd" and line.ts_ms == 1796123248340
    assert (line.source["host"], line.source["file"]) == ("gpu-node-7", "journal:kubelet.service")


def test_dockers_journald_driver_marks_the_pieces_of_a_split_line_partial() -> None:
    piece = {"__REALTIME_TIMESTAMP": "1796123249000000", "_HOSTNAME": "h", "CONTAINER_NAME": "trainer",
             "CONTAINER_TAG": "abc", "SYSLOG_IDENTIFIER": "abc", "MESSAGE": "x" * 100,
             "CONTAINER_PARTIAL_MESSAGE": "true"}
    last = {k: v for k, v in piece.items() if k != "CONTAINER_PARTIAL_MESSAGE"}
    (first,) = decode_record(json.dumps(piece).encode())
    (end,) = decode_record(json.dumps(last).encode())
    assert first.partial and not end.partial and first.source["container"] == "trainer"


def test_a_record_with_a_message_key_of_its_own_is_not_taken_for_the_journal() -> None:
    """``MESSAGE`` alone, with none of the journal's fields: an application's record, kept whole."""
    value = json.dumps({"MESSAGE": "hello", "step": 3}).encode()
    (line,) = decode_record(value)
    assert line.text == value.decode()
