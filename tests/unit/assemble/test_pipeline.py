from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import fastavro
from corpus_helpers import TRAINING, lines

from streams.assemble.pipeline import Assembler, RawRecord

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
RAW_BATCH = fastavro.parse_schema(json.loads((SCHEMAS / "raw_batch.avsc").read_text()))
T0 = 1_700_000_000_000


def _records(texts: list[str], key: bytes = b"host-a|trainer-0|stderr", start: int = 0) -> list[RawRecord]:
    return [RawRecord("logs.raw", 2, start + i, (t + "\n").encode(), key, T0 + i) for i, t in enumerate(texts)]


def _run(asm: Assembler, recs) -> list:
    out = []
    for r in recs:
        out += asm.feed(r)
    return out


def test_events_metrics_and_ids():
    texts = lines("vllm_async_timeout_chained_then_metrics_line.log", 1, 72)
    asm = Assembler()
    out = _run(asm, _records(texts)) + asm.flush_all()
    evs = [o for o in out if o.kind == "event"]
    assert len(evs) == 1 and evs[0].value["event_id"] == "logs.raw/2/0"
    assert evs[0].topic == "logs.events.default" and evs[0].value["raw"]["last_offset"] == 70
    # vLLM's stats line is a metric point: its throughput and queue figures, on logs.metrics
    (point,) = [o for o in out if o.kind == "metric"]
    assert point.topic == "logs.metrics" and point.value["event_id"] == "logs.raw/2/71"
    assert {"generation_throughput_tokens_s", "gpu_kv_cache_usage_pct"} <= set(point.value["metrics"])


def test_step_metrics_go_to_metrics_topic_only():
    texts = lines("ms_swift_sft_qwen2_7b_self_cognition_2024.log", 1, 35)
    asm = Assembler()
    out = _run(asm, _records(texts)) + asm.flush_all()
    metrics = [o for o in out if o.kind == "metric"]
    assert len(metrics) == 22 and {o.topic for o in metrics} == {"logs.metrics"}
    assert not any("'loss'" in o.value.get("message", "") for o in out if o.kind == "event")


def test_dead_letter_keeps_original_bytes():
    asm = Assembler(schema_lookup=lambda sid: None)
    bad = b"\x00\x00\x00\x00\x2a" + b"\x02"
    (dl,) = asm.feed(RawRecord("logs.raw", 1, 77, bad, b"k", T0))
    assert dl.kind == "dead_letter" and dl.topic == "logs.dlq"
    assert dl.value["original"] == bad and dl.value["offset"] == 77 and dl.value["error_type"] == "schema_not_found"
    assert "logs.raw/1@77" in dl.value["error"]
    schema = fastavro.parse_schema(json.loads((SCHEMAS / "dead_letter.avsc").read_text()))
    fastavro.validation.validate(dl.value, schema, raise_errors=True)


def test_avro_batch_uses_file_offsets_for_ids():
    texts = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 10, 22)
    batch = {"source": {"host": "n1", "file": "/logs/tr1.out"}, "labels": {"project": "tr1-13B"},
             "lines": [{"line": t, "file_offset": 1000 + 10 * i, "ts": T0} for i, t in enumerate(texts)],
             "sent_ts": T0}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, RAW_BATCH, batch)
    value = b"\x00" + struct.pack(">I", 3) + buf.getvalue()
    asm = Assembler(schema_lookup=lambda sid: RAW_BATCH)
    out = asm.feed(RawRecord("logs.raw", 0, 5, value, b"n1:/logs/tr1.out", T0)) + asm.flush_all()
    assert [o.value["line_count"] for o in out] == [1, 12]
    assert out[1].topic == "logs.events.tr1-13b"
    assert out[1].value["raw"]["first_file_offset"] == 1010 and out[1].value["raw"]["last_file_offset"] == 1120
    again = Assembler(schema_lookup=lambda sid: RAW_BATCH)
    out2 = again.feed(RawRecord("logs.raw", 9, 123, value, b"n1:/logs/tr1.out", T0)) + again.flush_all()
    # same source + file offset -> same id, whatever partition/offset the replay lands on
    assert [o.value["event_id"] for o in out] == [o.value["event_id"] for o in out2]


def test_committable_offset_holds_open_traceback():
    texts = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 1, 22)
    asm = Assembler(idle_timeout_ms=60_000)
    _run(asm, _records(texts[:15], start=100))
    assert asm.committable_offset() == 110  # line 11 (the Traceback) is at offset 110, still open
    _run(asm, _records(texts[15:], start=115))
    out = asm.flush_idle(T0 + 21 + 60_000)
    assert len(out) == 1 and out[0].value["line_count"] == 12
    assert asm.committable_offset() == 122


def test_interleaved_sources_do_not_mix():
    a = lines("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", 11, 22)
    b = lines("java_apex_hadoop_log4j_stacktraces_wrong_fs.log", 10, 22)
    recs = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            recs.append(RawRecord("logs.raw", 0, len(recs), a[i].encode(), b"A", T0))
        if i < len(b):
            recs.append(RawRecord("logs.raw", 0, len(recs), b[i].encode(), b"B", T0))
    asm = Assembler()
    out = _run(asm, recs) + asm.flush_all()
    assert sorted(o.value["line_count"] for o in out) == [12, 13]


def test_corpus_file_through_feed_matches_offline_mode():
    from streams.assemble.pipeline import parse_files
    f = "vllm_worker_nccl_illegal_memory_watchdog_chained.log"
    texts = (TRAINING / f).read_bytes().decode().split("\n")[:154]
    asm = Assembler()
    out = _run(asm, _records(texts, start=1)) + asm.flush_all()
    live = sorted((o.value["raw"]["first_offset"], o.value["raw"]["last_offset"]) for o in out)
    offline = sorted((e["raw"]["first_offset"], e["raw"]["last_offset"]) for e in parse_files([TRAINING / f]))
    assert live == offline
