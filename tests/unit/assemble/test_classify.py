from __future__ import annotations

from corpus_helpers import block_at, events, lines

from streams.assemble.classify import classify


def test_cuda_oom_at_barrier():
    ev = block_at(events("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"), 11)
    assert ev["error_class"] == "cuda_oom" and ev["error_type"] == "RuntimeError" and ev["level"] == "ERROR"


def test_torch_out_of_memory_error_type():
    evs = events("vllm_serve_jamba_cuda_oom_kv_cache.log")
    tb = [e for e in evs if e["multiline_kind"] == "python_traceback"]
    assert len(tb) == 1  # SOURCES.md: 1 traceback (OOM)
    assert tb[0]["error_class"] == "cuda_oom" and tb[0]["error_type"] == "torch.OutOfMemoryError"


def test_chained_traceback_root_cause_is_first_exception():
    ev = block_at(events("vllm_async_engine_chained_cancelled_error_under_load.log"), 30)
    assert ev["error_class"] == "python_exception"
    assert ev["root_cause"] == "ValueError"
    assert ev["error_type"] == "vllm.engine.async_llm_engine.AsyncEngineDeadError"


def test_prefixed_chain_nccl_error():
    ev = block_at(events("vllm_worker_nccl_illegal_memory_watchdog_chained.log"), 1)
    assert ev["error_class"] == "nccl_error" and ev["root_cause"] == "RuntimeError"


def test_cuda_error_kind_from_c10_block():
    ev = block_at(events("vllm_worker_nccl_illegal_memory_watchdog_chained.log"), 107)
    assert ev["error_class"] == "cuda_error" and ev["error_type"] == "an illegal memory access was encountered"
    (c10,) = events("bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log")
    assert c10["error_class"] == "cuda_error" and c10["error_type"] == "unknown error"


def test_nccl_watchdog_timeout():
    ev = block_at(events("sglang_nccl_watchdog_timeout_hardwrapped.log"), 21)
    assert ev["error_class"] == "nccl_timeout"


def test_signal_from_childfailed_box():
    ev = block_at(events("accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"), 39)
    assert ev["signal"] == "SIGKILL" and ev["error_type"].endswith("ChildFailedError")


def test_signal_spellings():
    assert classify("Signals.SIGKILL: 9").signal == "SIGKILL"
    assert classify("  exitcode  : -9 (pid: 1)").signal == "SIGKILL"
    line = lines("vllm_ray_sigsegv_fatal_python_stack_actor_died.log", 1, 1)[0]
    c = classify(line)
    assert c.signal == "SIGSEGV" and c.error_class == "signal"
    assert classify("stop reason = signal SIGABRT").signal == "SIGABRT"


def test_java_exception():
    ev = block_at(events("java_apex_hadoop_log4j_stacktraces_wrong_fs.log"), 10)
    assert ev["error_class"] == "java_exception" and ev["error_type"] == "java.lang.IllegalArgumentException"


def test_rust_panic_is_a_panic():
    evs = events("sglang_router_docker_json_file_rust_panics.log")
    assert {e["error_class"] for e in evs if e["multiline_kind"] == "rust_panic"} == {"go_panic"}


def test_assertion():
    evs = events("vllm_multiproc_startup_throughput_then_assertion.log", include_metrics=False)  # stats lines: metrics
    tb = [e for e in evs if e["multiline_kind"] == "python_traceback"]
    assert len(tb) == 1 and tb[0]["error_class"] == "assertion" and tb[0]["error_type"] == "AssertionError"
    assert classify(lines("llama_cpp_metal_ggml_assert_lldb_bt.log", 2, 2)[0]).error_class == "assertion"


def test_quiet_lines_unclassified():
    assert classify("Setting ds_accelerator to cuda (auto detect)").error_class is None
