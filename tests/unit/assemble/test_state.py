"""The assembler's per-source state survives a restart at any record: same outputs, nothing twice.

Real corpus files, one source each, interleaved record by record (1 to 3 lines per record) into one
partition as the worker sees them. A continuous run is compared with runs that stop after record k,
keep only the states written for the sources touched (as the compacted topic would), and go on in a
fresh Assembler restored from them.
"""

from __future__ import annotations

import json

import pytest
from corpus_helpers import TRAINING

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.state import forget_source, restore_source, sid_of_key, source_state, state_key

FILES = {  # file: lines per record
    "bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log": 3,  # interleaved rank tracebacks
    "fixture_fluentbit_tail_dockermode_split_multiline.log": 1,  # docker json-file partial lines
    "llama_cpp_metal_ggml_assert_lldb_bt.log": 3,  # lldb backtrace
    "bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log": 2,  # untimed C++ frames after timed lines
    "deepspeed_chat_reward_model_grad_overflow_two_line_records.log": 3,
    "accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log": 2,  # untimed lines take the last timed one's time
}


def _records() -> list[RawRecord]:
    per_file = []
    for name, n in FILES.items():
        text = (TRAINING / name).read_bytes().split(b"\n")
        chunks = [b"\n".join(text[i:i + n]) for i in range(0, len(text), n)]
        per_file.append([(name.encode(), c) for c in chunks])
    out: list[RawRecord] = []
    while any(per_file):
        for chunks in per_file:
            if chunks:
                key, value = chunks.pop(0)
                out.append(RawRecord("logs.raw", 3, len(out), value, key, 1_700_000_000_000 + 10 * len(out)))
    return out


def _ids(outputs: list) -> list[tuple[str, str]]:
    return [(o.kind, o.value.get("event_id") or o.value.get("error", "")) for o in outputs]


def _run_with_restart(records: list[RawRecord], cut: int) -> list:
    first = Assembler()
    topic: dict[bytes, bytes | None] = {}  # the compacted state topic, partition 3
    outputs = []
    for i, rec in enumerate(records[:cut]):
        outputs += first.feed(rec)
        if i % 3 == 2 or i == cut - 1:  # a turn of a few records, then its transaction
            for sid in first.take_dirty():
                topic[state_key(3, sid)] = source_state(first, sid)
    second = Assembler()
    for key, value in topic.items():
        if value is None:
            forget_source(second, sid_of_key(key))
        else:
            assert restore_source(second, value) == sid_of_key(key)
    for rec in records[cut:]:
        outputs += second.feed(rec)
    return outputs + second.flush_all()


def test_restart_at_every_record_changes_nothing() -> None:
    records = _records()
    whole = Assembler()
    expected = [o for r in records for o in whole.feed(r)] + whole.flush_all()
    assert sum(o.kind == "event" and o.value["line_count"] > 1 for o in expected) > 20
    for cut in range(1, len(records)):
        got = _run_with_restart(records, cut)
        assert _ids(got) == _ids(expected), f"restart after record {cut} changed the outputs"
        assert [o.value for o in got] == [o.value for o in expected]


def test_restart_keeps_reading_a_copy_indented_as_a_whole() -> None:
    # the indent a copy put before every line (merger._unshift) is state: after a restart the exception
    # line is still read at the copy's column (a copy drops its trailing blank), and its message still goes on
    # after its blank line
    lines = [b"  2024-05-01 12:00:00,123 - INFO - train - begin epoch 1", b"  Traceback (most recent call last):",
             b'    File "/app/train.py", line 9, in <module>', b"      mp.spawn(run, nprocs=2)", b"  Exception:", b"",
             b"  -- Process 1 terminated with the following error:", b"  2024-05-01 12:00:01,000 - INFO - train - bye"]
    records = [RawRecord("logs.raw", 3, i, v, b"pasted", 1_700_000_000_000 + i) for i, v in enumerate(lines)]
    whole = Assembler()
    expected = [o for r in records for o in whole.feed(r)] + whole.flush_all()
    assert [o.value["line_count"] for o in expected if o.kind == "event"] == [1, 5, 1]  # (its blank line uncounted)
    for cut in range(1, len(records)):
        assert _ids(_run_with_restart(records, cut)) == _ids(expected), f"restart after record {cut}"


def test_a_source_with_nothing_open_is_deleted_and_a_bad_version_refused() -> None:
    asm = Assembler()
    asm.feed(RawRecord("logs.raw", 0, 0, b"one line", b"src", 0))
    assert source_state(asm, "src") is not None  # the plain line stays open: a continuation may follow
    asm.flush_all()
    assert source_state(asm, "src") is None
    with pytest.raises(ValueError, match="version"):
        restore_source(Assembler(), b'{"v": 99, "sid": "x"}')


def test_restored_blocks_flush_on_the_idle_timer_from_their_own_time() -> None:
    records = _records()
    first = Assembler()
    for rec in records[:40]:
        first.feed(rec)
    second = Assembler()
    for sid in first.take_dirty():
        value = source_state(first, sid)
        if value is not None:
            restore_source(second, value)
    assert second.merger.open_count() > 0
    stream_time = second.merger.newest_ts()  # what the worker restarts its stream time from
    assert stream_time == max(r.timestamp_ms for r in records[:40])
    flushed = second.flush_idle(stream_time + second.merger.idle_timeout_ms)
    assert len(flushed) == first.merger.open_count() and second.merger.open_count() == 0


def _journal(line: str, priority: str) -> bytes:
    return json.dumps({"__REALTIME_TIMESTAMP": "1717243260000000", "PRIORITY": priority,
                       "SYSLOG_IDENTIFIER": "python3", "MESSAGE": line}).encode()


def test_an_envelope_s_level_and_figures_survive_a_restart_inside_the_event() -> None:
    # journald's PRIORITY is the level of a line whose text names none, and GELF's additional fields are its
    # figures: both belong to the open block's first line, so they are state like its text
    lines = ["checkpoint upload slow:", "  shard 3 of 8 retried", "  shard 5 of 8 retried", "next"]
    records = [RawRecord("logs.raw", 3, i, _journal(t, "4"), b"node-1", 1_700_000_000_000 + i)
               for i, t in enumerate(lines)]
    gelf = [b'{"version":"1.1","host":"n1","short_message":"step 10 done","timestamp":1717243260.5,"level":6,'
            b'"_step":10,"_loss":0.25}', b'{"version":"1.1","host":"n1","short_message":"  more of it",'
            b'"timestamp":1717243261.5,"level":6}']
    records += [RawRecord("logs.raw", 3, len(records) + i, v, b"node-2", 1_700_000_000_100 + i)
                for i, v in enumerate(gelf)]
    whole = Assembler()
    expected = [o for r in records for o in whole.feed(r)] + whole.flush_all()
    events = [o.value for o in expected if o.kind == "event"]
    assert [(e["line_count"], e["level"]) for e in events] == [(3, "WARN"), (1, "WARN"), (2, "INFO")]
    assert events[2]["step"] == 10
    for cut in range(1, len(records)):
        got = _run_with_restart(records, cut)
        assert [o.value for o in got] == [o.value for o in expected], f"restart after record {cut}"
