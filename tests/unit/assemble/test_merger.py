"""One test per multiline rule, on excerpts of the real corpus (file + line range)."""

from __future__ import annotations

from corpus_helpers import block_at, events, lines, only_events

from streams.assemble.lines import RawLine
from streams.assemble.merger import MultilineMerger, split_head, split_prefix


def _span(ev: dict) -> tuple[int, int]:
    return ev["raw"]["first_offset"], ev["raw"]["last_offset"]


def _first_last(ev: dict) -> tuple[str, str]:
    msg = ev["message"].split("\n")
    return msg[0], msg[-1]


def test_python_traceback_with_direct_cause_chain():
    f = "vllm_async_engine_chained_cancelled_error_under_load.log"
    ev = block_at(events(f), 30)
    # "ERROR:asyncio:Exception in callback" + handle line + 2 tracebacks joined by "The above exception ..."
    assert _span(ev) == (30, 67)
    assert _first_last(ev) == (lines(f, 30, 30)[0], lines(f, 67, 67)[0])
    assert ev["multiline_kind"] == "python_traceback"


def test_python_traceback_during_handling_chain():
    f = "vllm_async_engine_chained_cancelled_error_under_load.log"
    evs = events(f)
    ev = block_at(evs, 81)
    assert _span(ev) == (81, 136)
    assert "During handling of the above exception, another exception occurred:" in ev["message"]
    assert _span(block_at(evs, 137)) == (137, 149)


def test_vllm_level_prefix_traceback_kept_whole_with_prefix_in_message():
    f = "vllm_async_engine_chained_cancelled_error_under_load.log"
    ev = block_at(events(f), 1)
    assert _span(ev) == (1, 29)
    assert ev["message"].split("\n") == lines(f, 1, 29)


def test_prefixed_chained_traceback_vllm_worker():
    f = "vllm_worker_nccl_illegal_memory_watchdog_chained.log"
    ev = block_at(events(f), 1)
    assert _span(ev) == (1, 100)  # SOURCES.md: 1 prefixed chained traceback, lines 1-100
    assert ev["line_count"] == 100


def test_torch_rank_prefix_on_first_line_only_then_cpp_frames():
    f = "vllm_worker_nccl_illegal_memory_watchdog_chained.log"
    evs = events(f)
    assert _span(block_at(evs, 107)) == (107, 122)  # SOURCES.md: watchdog error+frames block (107-122)
    ev = block_at(evs, 124)
    assert _span(ev) == (124, 147)  # terminate/what() block with 2 frame lists (124-147)
    assert ev["multiline_kind"] == "cpp_frames"
    assert _first_last(ev) == (lines(f, 124, 124)[0], lines(f, 147, 147)[0])


def test_interleaved_rank_prefixes_merged_per_prefix():
    f = "llamafactory_vllm_rank0_prefixed_traceback_fork_error.log"
    evs = events(f)
    r0, r1 = block_at(evs, 30), block_at(evs, 72)
    assert _span(r0) == (30, 71) and _span(r1) == (72, 113)  # "2 rank-prefixed tracebacks (42 lines each)"
    assert r0["line_count"] == 42 and r1["line_count"] == 42
    assert all(ln.startswith("[rank0]:") for ln in r0["message"].split("\n"))
    assert r0["source"]["rank"] == 0 and r1["source"]["rank"] == 1


def test_interleaved_worker_pids_each_traceback_begins_with_process_line():
    f = "vllm_rocm_worker_traceback_plus_ipython_chained.log"
    evs = events(f)
    tbs = [e for e in evs if e["multiline_kind"] == "python_traceback" and "pid=" in e["message"][:40]]
    assert [e["message"].split("\n")[0].split(")")[0] for e in tbs] == [
        "(VllmWorkerProcess pid=17498", "(VllmWorkerProcess pid=17499", "(VllmWorkerProcess pid=17500"]
    for e in tbs:
        body = e["message"].split("\n")
        assert body[0].endswith("Process VllmWorkerProcess:")
        assert "RuntimeError: Cannot re-initialize CUDA" in body[-1]
        assert len({ln.split(")")[0] for ln in body}) == 1  # no line of another pid mixed in


def test_ipython_chain_is_one_event():
    f = "vllm_rocm_worker_traceback_plus_ipython_chained.log"
    ev = block_at(events(f), 93)
    assert ev["raw"]["last_offset"] == 216
    assert "The above exception was the direct cause" in ev["message"]
    assert ev["message"].split("\n")[-1] == "ChildProcessError: worker died"


def test_childfailederror_box_joins_launcher_traceback():
    f = "accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"
    evs = events(f)
    for first, last in ((39, 69), (113, 143)):
        ev = block_at(evs, first)
        assert _span(ev) == (first, last)
        assert ev["multiline_kind"] == "childfailed_box"
        assert _first_last(ev) == ("Traceback (most recent call last):", "=" * 55)


def test_default_prefixed_c10_frames_one_block():
    f = "bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log"
    (ev,) = events(f)
    assert _span(ev) == (1, 10) and ev["message"].split("\n") == lines(f, 1, 10)


def test_hard_wrapped_watchdog_lines_and_frames():
    f = "sglang_nccl_watchdog_timeout_hardwrapped.log"
    evs = events(f)
    assert _span(block_at(evs, 13)) == (13, 14)  # "lOut=1, ..." is a hard-wrap fragment of line 13
    assert _span(block_at(evs, 21)) == (21, 32)  # last [rank6] line + wraps + frames #0-#6
    assert _span(block_at(evs, 34)) == (34, 40)  # terminate/what() block


def test_java_stacks_log4j():
    f = "java_apex_hadoop_log4j_stacktraces_wrong_fs.log"
    evs = only_events(events(f))
    # SOURCES.md: traces at file lines 11, 23, 41, 65, 77, 95 (the exception line or the first frame)
    for first, trace_line in ((10, 11), (23, 24), (40, 41), (64, 65), (77, 78), (94, 95)):
        ev = block_at(evs, first)
        assert ev["raw"]["first_offset"] < trace_line <= ev["raw"]["last_offset"]
        assert ev["message"].split("\n")[-1].startswith("\tat ")
    assert _span(block_at(evs, 94)) == (94, 104)


def test_fluentbit_regex001_java_example():
    evs = events("fixture_fluentbit_multiline_regex001_java.log")
    assert [e["line_count"] for e in evs] == [1, 6, 1]  # 3 events, as the fluent-bit example expects


def test_json_wrapped_java_is_one_event():
    (ev,) = events("fixture_fluentbit_tail_multiline_json_wrapped_java.log")
    assert ev["line_count"] == 6 and ev["message"].startswith("Dec 14 06:41:08 Exception in thread main")


def test_rust_panics_in_docker_json():
    evs = events("sglang_router_docker_json_file_rust_panics.log")
    panics = [e for e in evs if e["multiline_kind"] == "rust_panic"]
    assert len(panics) == 7  # SOURCES.md: 7 panics, each 2-3 records
    assert [p["line_count"] for p in panics] == [3, 2, 2, 2, 2, 2, 2]
    assert all(p["message"].split("\n")[1].startswith("called `") for p in panics)


def test_gdb_backtrace_frames_together():
    f = "llama_cpp_cuda_illegal_memory_gdb_compute_sanitizer.log"
    evs = events(f)
    ev = block_at(evs, 14)
    assert _span(ev) == (14, 22)  # frames #0-#8
    # compute-sanitizer closes each report with a bare "=========": two reports, the second cut
    assert _span(block_at(evs, 26)) == (26, 43) and _span(block_at(evs, 44)) == (44, 60)


def test_lldb_bt_frames_together():
    f = "llama_cpp_metal_ggml_assert_lldb_bt.log"
    evs = events(f)
    assert _span(block_at(evs, 14)) == (14, 14)  # the "(lldb) bt" command echo is a line of its own
    ev = block_at(evs, 15)
    assert _span(ev) == (15, 28)  # the thread line, frames #0-#12
    assert _span(block_at(evs, 5)) == (5, 13)  # the lldb stop block


def test_two_line_python_warning():
    f = "accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"
    ev = block_at(events(f), 3)
    assert ev["message"].split("\n") == lines(f, 3, 4)


def test_header_with_empty_message_takes_next_line():
    f = "deepspeed_chat_reward_model_grad_overflow_two_line_records.log"
    ev = block_at(events(f), 6)
    assert ev["message"].split("\n") == lines(f, 6, 7)


def test_json_config_dump_until_closing_brace():
    # DeepSpeed config print: "... activation_checkpointing_config  {" (line 204) through "}" (211),
    # "autotuning_config ... {" (215) through "}" (239)
    f = "deepspeed_chat_dpo_8gpu_launch_init_config.log"
    assert lines(f, 204, 204)[0].endswith("{") and lines(f, 211, 211)[0] == "}"
    evs = events(f)
    for start, end in ((204, 211), (215, 239)):
        ev = block_at(evs, start)
        assert _span(ev) == (start, end) and ev["multiline_kind"] == "json_dump"


def test_deepspeed_json_dump_nested_braces():
    f = "bigscience_hf_trainer_deepspeed_zero3_n4_tqdm_cr.log"
    text = lines(f, 1, 262)
    assert text[148].endswith("json = {")
    end = next(i for i, t in enumerate(text, 1) if i > 149 and t == "}")
    ev = block_at(events(f), 149)
    assert _span(ev) == (149, end) and end - 149 > 40  # "spanning ~50 lines", nested "offload_*": {...}


def test_truncated_traceback_without_header_and_multiline_message():
    f = "verl_fsdp_ray_nccl_warn_cuda_failure_700.log"
    ev = block_at(events(f), 1)
    assert _span(ev) == (1, 43)  # SOURCES.md: truncated traceback lines 1-43, message spans 4 lines


def test_split_prefix_keys_writers_and_drops_their_times():
    a = split_prefix("(RayWorkerWrapper pid=336, ip=10.99.48.129) [2025-03-27 22:19:39,802 E 336 336] x")
    b = split_prefix("(RayWorkerWrapper pid=336, ip=10.99.48.129) PC: @     0x7fe64731b9fc  (unknown)")
    assert a[0] == b[0] == "(RayWorkerWrapper pid=336, ip=10.99.48.129)"
    assert split_prefix("[rank3]:[E129 x")[:3] == ("[rank3]:", "[E129 x", 3)
    # syslog: the time is volatile, host and program[pid] name the writer; a program's lines are its
    # own stream, the kernel's each a record (the relay's prefix is returned as their head)
    key, body, _rank, relay = split_prefix("Aug 20 05:33:17 ip-10-150-14-172 dockerd[742786]: goroutine 48 [chan")
    assert (key, body, relay) == ("ip-10-150-14-172 dockerd[742786]", "goroutine 48 [chan", None)
    key, body, _rank, relay = split_prefix("Aug 20 05:33:17 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79")
    assert (key, body) == ("node7 kernel", "NVRM: Xid (PCI:0000:3b:00): 79")
    assert relay == "Aug 20 05:33:17 node7 kernel: "


def test_split_head_returns_the_head_a_formatter_repeats_per_line():
    vllm = "ERROR 09-05 17:22:27 async_llm_engine.py:63] Traceback (most recent call last):"
    head, rhead, every, body = split_head(vllm)
    assert every  # vLLM's NewLineFormatter writes it on every line of a record
    assert rhead == "ERROR 09-05 17:22:27 async_llm_engine.py:63]" and body.startswith("Traceback")
    # a relay's head, then the program's own: the program's one is compared line to line
    relayed = "2024-07-13 15:07:34,930 - INFO - vLLM: ERROR 07-13 15:07:34 async_llm_engine.py:53] x"
    head, rhead, _every, body = split_head(relayed)
    assert rhead == "ERROR 07-13 15:07:34 async_llm_engine.py:53]" and body == "x"
    head, rhead, _every, body = split_head("2016-06-03 21:16:57,724 WARN org.apache.hadoop.Foo: Exit code")
    # log4j's "%d %p %c: %m": the head runs to the logger's separator, and is not repeated per line
    assert head == "2016-06-03 21:16:57,724 WARN org.apache.hadoop.Foo: " and rhead is None and body == "Exit code"


def _feed(m: MultilineMerger, texts: list[str], start: int = 0, ts: int = 0) -> list:
    out = []
    for i, t in enumerate(texts):
        out += m.push("src", RawLine(t), start + i, ts)
    return out


def test_idle_flush_emits_last_traceback_of_dead_job():
    f = "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    tb = lines(f, 11, 22)
    m = MultilineMerger(idle_timeout_ms=5000)
    assert _feed(m, tb, ts=1000) == []
    assert m.oldest_open_offset() == 0
    assert m.flush_idle(5999) == []  # not idle long enough
    (b,) = m.flush_idle(6000)
    assert b.texts == tb and m.oldest_open_offset() is None


def test_oldest_open_offset_and_replay_gives_same_blocks():
    """Crash mid-traceback: restart from the oldest open offset and nothing is lost or split."""
    f = "vllm_async_engine_chained_cancelled_error_under_load.log"
    text = lines(f, 1, 151)
    full = MultilineMerger()
    ref = _feed(full, text) + full.flush_all()
    ref_spans = sorted((b.first_offset, b.last_offset) for b in ref)

    crash_at = 50  # inside the 30-67 traceback
    m1 = MultilineMerger()
    before = _feed(m1, text[:crash_at])
    resume = m1.oldest_open_offset()
    assert resume == 29  # 0-based offset of line 30, the first line of the open block
    emitted = [b for b in before if b.last_offset < resume]
    m2 = MultilineMerger()
    after = _feed(m2, text[resume:], start=resume) + m2.flush_all()
    spans = sorted({(b.first_offset, b.last_offset) for b in emitted + after})
    assert spans == ref_spans


def test_max_lines_truncates_and_flags():
    f = "vllm_worker_nccl_illegal_memory_watchdog_chained.log"
    m = MultilineMerger(max_lines=10)
    out = _feed(m, lines(f, 1, 100)) + m.flush_all()
    assert out[0].truncated and len(out[0].texts) == 10
    # no line with content lost (two prefix-only blank lines fall between truncated pieces)
    got = [t for b in sorted(out, key=lambda b: b.first_offset) for t in b.texts]
    assert [t for t in got if t.split("] ", 1)[-1].strip()] == [
        t for t in lines(f, 1, 100) if t.split("] ", 1)[-1].strip()]


def test_blank_lines_never_grow_a_block_past_its_limits():
    """A source that writes blank lines after an open traceback: held, but only up to the limits."""
    f = "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    tb = lines(f, 11, 21)  # the traceback without its last line: the block stays open
    m = MultilineMerger(max_lines=100, max_bytes=4096)
    assert _feed(m, tb) == []
    out = _feed(m, [""] * 5000, start=len(tb))
    assert len(out) == 1 and out[0].texts == tb and not out[0].truncated, "closed, blank lines dropped"
    assert m.open_count() == 0 and m.source_count() == 0

    wide = MultilineMerger(max_lines=10**6, max_bytes=4096)
    assert _feed(wide, tb) == []
    (b,) = _feed(wide, [" " * 500] * 20, start=len(tb))  # whitespace lines count their bytes
    assert b.texts == tb and wide.open_count() == 0


def test_blank_lines_below_the_limits_still_join_a_chain_that_goes_on():
    f = "vllm_async_engine_chained_cancelled_error_under_load.log"
    chain = lines(f, 30, 67)  # two tracebacks joined by "The above exception ...", blank lines between
    m = MultilineMerger(max_lines=len(chain) + 1)
    got = _feed(m, chain) + m.flush_all()
    assert len(got) == 1 and got[0].texts == chain and not got[0].truncated


def test_sources_with_nothing_open_are_forgotten():
    """Sources come and go for ever (pods, files): one with no open block costs nothing."""
    f = "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    tb = lines(f, 11, 22)
    m = MultilineMerger(idle_timeout_ms=5000)
    for n in range(1000):
        for i, text in enumerate(tb):
            m.push(f"pod-{n}", RawLine(text), n * 100 + i, 1000)
    assert m.source_count() == 1000
    assert len(m.flush_idle(6000)) == 1000
    assert m.source_count() == 0 and m.open_count() == 0
    single = lines(f, 1, 1)[0]
    m.push("once", RawLine(single), 0, 1000)
    m.push("once", RawLine(single), 1, 1000)  # a new record closes the first one
    m.flush_all()
    assert m.source_count() == 0
