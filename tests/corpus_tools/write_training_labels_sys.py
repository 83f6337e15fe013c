"""Write corpus/training/labels/*.json: hand-checked multiline event labels for the 44 training files.

Every range below was read off the file by eye (tests/corpus_tools/show_sys.py) and decided from the
grammar of the program that printed it; the `source` comes from corpus/training/SOURCES.md.
Conventions: a logger record header whose traceback/stack follows belongs to the event; blank lines
inside an event belong to it, trailing blank lines after the last line do not; each docker json-file
record or per-process-prefixed line counts as the line it is in the file.
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "corpus" / "training"


def sources() -> dict[str, str]:
    out, name = {}, None
    for line in (ROOT / "SOURCES.md").read_text().splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
        m = re.match(r"- Source URL: (\S+)", line)
        if m and name:
            out[name] = m.group(1)
    return out


def ev(first, last, kind):
    return {"first": first, "last": last, "kind": kind}


def lines_ev(nums, kind):
    return {"lines": sorted(nums), "kind": kind}


def pairs(path, head_re, tail_re, kind):
    """2-line records: a line matching head_re immediately followed by one matching tail_re."""
    ls = (ROOT / path).read_text().split("\n")
    out = []
    for i in range(len(ls) - 1):
        if re.search(head_re, ls[i]) and re.search(tail_re, ls[i + 1]):
            out.append(ev(i + 1, i + 2, kind))
    return out


L = {}
N = {}

N["accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"] = (
    "2 accelerate/DeepSpeed launches. Multiline: RequestsDependencyWarning 2-line Python warnings; the "
    "'WARNING:torch.distributed.run:' OMP banner (one logging record, 4 lines); launcher traceback whose "
    "ChildFailedError message is the multi-line 'train.py FAILED' box (one event, traceback + box). Shell prompts single.")
L["accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"] = (
    [ev(a, a + 1, "python_warning") for a in (3, 15, 17, 19, 21, 23, 25, 74, 86, 88, 91, 95, 97, 99)]
    + [ev(5, 8, "banner"), ev(76, 79, "banner"), ev(39, 69, "python_traceback"), ev(113, 143, "python_traceback")])

N["bigscience_deepspeed_zero3_offload_stage3_init_n16.log"] = (
    "DeepSpeed 0.4 ZeRO-3 init: C++ Adam 'Config:'/'Adam Optimizer' prints (out of order, each line its own print, "
    "labelled single), [INFO] lines single; 2 DeepSpeedEngine config values dumped as multi-line JSON (header line through '}').")
L["bigscience_deepspeed_zero3_offload_stage3_init_n16.log"] = [ev(56, 63, "json_dump"), ev(74, 81, "json_dump")]

N["bigscience_hf_trainer_deepspeed_zero3_n4_tqdm_cr.log"] = (
    "HF Trainer + DeepSpeed: 2 FutureWarning 2-line records, 4 multi-line JSON config dumps ('... {' through '}'); "
    "tqdm lines with \\r redraws are single lines (one event each); every [INFO|trainer.py] line is its own logger call.")
L["bigscience_hf_trainer_deepspeed_zero3_n4_tqdm_cr.log"] = [
    ev(11, 12, "python_warning"), ev(13, 14, "python_warning"),
    ev(57, 64, "json_dump"), ev(75, 82, "json_dump"), ev(111, 146, "json_dump"), ev(149, 200, "json_dump")]

N["bigscience_meg_ds_3d_n16_ds_on_iterations_rank_memory.log"] = (
    "All single events. The Megatron ' iteration ...' line (print_rank_last) and the 'time (ms)' line (timers.log -> "
    "print_rank_0) come from different ranks' print calls, so they are separate events, not a 2-line record; "
    "line 60 holds two spliced rank-memory records (one line, one event).")
L["bigscience_meg_ds_3d_n16_ds_on_iterations_rank_memory.log"] = []

N["bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log"] = (
    "Lines 1-10: tail of DeepSpeed PipelineModule's partition report ('stage=15 layers=8' + indented layer lines + "
    "'  loss: CrossEntropy'), one block. Everything else one line per event (NCCL INFO, '> number of parameters', "
    "spliced lines followed by empty lines).")
L["bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log"] = [ev(1, 10, "indented_block")]

N["bigscience_nccl_all_reduce_bench_n1_16gb.log"] = (
    "all_reduce_bench.py: the torch.distributed.launch OMP banner (one print, 3 lines) and 20 result blocks, each one "
    "print() call with 4 arguments ('N:' + ' duration' + ' algo throughput' + ' busbw', the leading space is print's "
    "separator). NCCL INFO and 'ignore me' lines single.")
L["bigscience_nccl_all_reduce_bench_n1_16gb.log"] = [ev(4, 6, "banner")] + [
    ev(a, a + 3, "multiline") for a in (168, 172, 176, 181, 188, 193, 197, 201, 209, 213, 217, 221, 228, 232, 237,
                                       241, 249, 253, 257, 261)]

N["bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log"] = (
    "4 ERROR lines single; lines 5-34 are two ranks' chained tracebacks written into one stdout with mid-line splices "
    "(lines 18, 19, 27, 31 hold text of both): no exact boundary exists, labelled ignore.")
L["bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log"] = [ev(5, 34, "ignore")]

N["bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"] = "Megatron init lines single; 1 traceback (11-22)."
L["bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"] = [ev(11, 22, "python_traceback")]

N["bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log"] = (
    "One terminate/what()/'Exception raised from'/frame #0-#6 block, every line prefixed [default3]:.")
L["bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log"] = [ev(1, 10, "cpp_frames")]

N["bigscience_tr11-176B_eval_hang_iteration_and_pulse.log"] = (
    "Iteration line single; Megatron's validation report framed by dashed rules (3 print_rank_last calls, one framed "
    "block) lines 2-4; PULSE lines single.")
L["bigscience_tr11-176B_eval_hang_iteration_and_pulse.log"] = [ev(2, 4, "banner")]

N["deepspeed_chat_dpo_8gpu_launch_init_config.log"] = (
    "DeepSpeed-Chat launch: FutureWarning 2-line records x8, cpp_extension UserWarning 3-line records (message has an "
    "embedded newline) x7, 4 multi-line JSON config dumps; line 49 is a splice of two prints (single).")
L["deepspeed_chat_dpo_8gpu_launch_init_config.log"] = (
    [ev(a, a + 1, "python_warning") for a in range(88, 103, 2)]
    + [ev(a, a + 2, "python_warning") for a in (107, 119, 131, 145, 157, 169, 182)]
    + [ev(204, 211, "json_dump"), ev(215, 239, "json_dump"), ev(266, 274, "json_dump"), ev(292, 299, "json_dump")])

N["deepspeed_chat_dpo_8gpu_tail_exit.log"] = "All single-line events."
L["deepspeed_chat_dpo_8gpu_tail_exit.log"] = []

N["deepspeed_chat_reward_model_grad_overflow_two_line_records.log"] = (
    "DeepSpeed fused_optimizer logs logger.info('\\nGrad overflow on iteration N'): each such record is 2 lines "
    "(header ending '_update_scale]' + 'Grad overflow on iteration N'); the last header (line 120) is cut by the excerpt "
    "and stays single.")
L["deepspeed_chat_reward_model_grad_overflow_two_line_records.log"] = pairs(
    "deepspeed_chat_reward_model_grad_overflow_two_line_records.log", r"_update_scale\]$", r"^Grad overflow on iteration",
    "multiline")

N["deepspeed_chat_sft_overflow_logdist_timer.log"] = "All single-line events."
L["deepspeed_chat_sft_overflow_logdist_timer.log"] = []

N["fixture_fluentbit_multiline_regex001_java.log"] = (
    "fluent-bit multiline example (hand-written fixture): 1 Java exception with 5 frames (lines 2-7) between two "
    "single lines.")
L["fixture_fluentbit_multiline_regex001_java.log"] = [ev(2, 7, "java_stack")]

N["fixture_fluentbit_tail_dockermode_firstline_detection.log"] = (
    "Docker json-file fixture; expected output (tests/runtime/data/tail/out/dockermode_firstline_detection.out) "
    "joins lines 4-8 into one record ('2020-03-24 Multiple lines:' + 4 bullet lines).")
L["fixture_fluentbit_tail_dockermode_firstline_detection.log"] = [ev(4, 8, "multiline")]

N["fixture_fluentbit_tail_dockermode_split_multiline.log"] = (
    "Docker json-file fixture: lines 4-6 are partial records ('third ', 'bullet ', 'point\\n') of one log line; with the "
    "first-line regex lines 1-7 are one event, line 8 another.")
L["fixture_fluentbit_tail_dockermode_split_multiline.log"] = [ev(1, 7, "multiline")]

N["fixture_fluentbit_tail_multiline_json_wrapped_java.log"] = (
    "6 JSON records whose 'message' fields form 1 Java exception (expected output multiline_001.out).")
L["fixture_fluentbit_tail_multiline_json_wrapped_java.log"] = [ev(1, 6, "java_stack")]

for f in ("fixture_loki_drain_journald_mixed_formats.log", "fixture_loki_drain_kafka.log",
          "fixture_loki_drain_kubernetes_klog.log"):
    N[f] = "Loki drain test data: one log entry per line (tab-led journald lines are entries of their own)."
    L[f] = []

N["hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log"] = (
    "wandb update notice (one termlog call, 2 'wandb:' lines), 1 FutureWarning 2-line record; \\r tqdm lines are single "
    "lines; loss dicts single.")
L["hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log"] = [ev(2, 3, "multiline"), ev(15, 16, "python_warning")]

N["java_apex_hadoop_log4j_stacktraces_wrong_fs.log"] = (
    "log4j records; 6 carry a Java stack trace (header line through last '\\tat' frame). The two 'Stopped running due to "
    "an exception. java.lang...' INFO records embed the exception text in the message and end with an empty line, "
    "which is not counted (events end at their last non-blank line).")
L["java_apex_hadoop_log4j_stacktraces_wrong_fs.log"] = [
    ev(10, 22, "java_stack"), ev(23, 34, "java_stack"), ev(40, 50, "java_stack"),
    ev(64, 76, "java_stack"), ev(77, 88, "java_stack"), ev(94, 104, "java_stack")]

N["llama_cpp_cuda_illegal_memory_gdb_compute_sanitizer.log"] = (
    "ggml CUDA error block (GGML_ABORT line + 'CUDA error:' + 2 indented detail lines, 1-4); gdb attach lines single; "
    "gdb backtrace #0-#8 (14-22); 1 prose line; 2 compute-sanitizer reports (26-43 with its closing '=========', 44-60 "
    "cut by the excerpt).")
L["llama_cpp_cuda_illegal_memory_gdb_compute_sanitizer.log"] = [
    ev(1, 4, "cuda_error"), ev(14, 22, "gdb_bt"), ev(26, 43, "sanitizer_report"), ev(44, 60, "sanitizer_report")]

N["llama_cpp_metal_ggml_assert_lldb_bt.log"] = (
    "4 GGML_ASSERT lines single; lldb stop report ('Process N stopped' through 'Target 0: (main) stopped.', with "
    "disassembly) 5-13; '(lldb) bt' command single; bt output (stop header + frames #0-#12) 15-28.")
L["llama_cpp_metal_ggml_assert_lldb_bt.log"] = [ev(5, 13, "lldb_stop"), ev(15, 28, "lldb_bt")]

N["llama_cpp_server_lldb_assertion_backtrace.log"] = (
    "llama-server log lines single (the '....' load progress line too); GGML_ASSERT and lldb attach error single; "
    "lldb stop report 179-187 (no bt output in this excerpt).")
L["llama_cpp_server_lldb_assertion_backtrace.log"] = [ev(179, 187, "lldb_stop")]

N["llamafactory_vllm_rank0_prefixed_traceback_fork_error.log"] = (
    "2 vLLM worker logger.exception records, every line prefixed (header 'Exception in worker ... Traceback' through the "
    "trailing prefixed empty line), 2-12 and 15-25; [rank0]/[rank1]-prefixed tracebacks 30-71, 72-113; INFO single.")
L["llamafactory_vllm_rank0_prefixed_traceback_fork_error.log"] = [
    ev(2, 12, "python_traceback"), ev(15, 25, "python_traceback"),
    ev(30, 71, "python_traceback"), ev(72, 113, "python_traceback")]

for f in ("ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_head.log",
          "ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_tail.log"):
    N[f] = "JSON lines: one record per line."
    L[f] = []
N["ms_swift_sft_metax_2026.log"] = "All single-line events (line 1 is a doc annotation)."
L["ms_swift_sft_metax_2026.log"] = []
N["ms_swift_sft_qwen2_7b_self_cognition_2024.log"] = "All single-line events."
L["ms_swift_sft_qwen2_7b_self_cognition_2024.log"] = []

N["sglang_nccl_watchdog_timeout_hardwrapped.log"] = (
    "Reporter's terminal hard-wrapped long lines: 13-14, 15-16, 17-18 are each one record split in two; the watchdog "
    "'terminated with exception' record carries the c10 error text and its 'Exception raised from' frame list (21-32); "
    "terminate/what() block 34-40 cut by the excerpt.")
L["sglang_nccl_watchdog_timeout_hardwrapped.log"] = [
    ev(13, 14, "hardwrap"), ev(15, 16, "hardwrap"), ev(17, 18, "hardwrap"),
    ev(21, 32, "cpp_frames"), ev(34, 40, "cpp_frames")]

N["sglang_router_docker_json_file_rust_panics.log"] = (
    "Docker json-file records; 7 Rust panics spread over 2-3 records each (panicked-at line, message, and for the first "
    "one the RUST_BACKTRACE note).")
L["sglang_router_docker_json_file_rust_panics.log"] = [ev(11, 13, "rust_panic")] + [
    ev(a, a + 1, "rust_panic") for a in (19, 22, 24, 26, 28, 30)]

N["verl_fsdp_ray_nccl_warn_cuda_failure_700.log"] = (
    "Traceback whose head is cut by the excerpt (1-43, message spans 4 lines); NCCL writes each WARN as '\\n<header> "
    "NCCL WARN ...', so under Ray's per-line prefix the empty '(WorkerDict pid=N)' line and the WARN line are one write "
    "(44-45, 46-47).")
L["verl_fsdp_ray_nccl_warn_cuda_failure_700.log"] = [
    ev(1, 43, "python_traceback"), ev(44, 45, "nccl_warn"), ev(46, 47, "nccl_warn")]

N["vllm_async_engine_chained_cancelled_error_under_load.log"] = (
    "Prefixed logger.exception record 1-29; asyncio 'Exception in callback' record (2-line message + chained traceback) "
    "30-67; reporter's '(...)' elisions single; prefixed traceback cut by the reporter 71-77; 2 uvicorn 'Exception in "
    "ASGI application' records with tracebacks (81-136 chained, 137-149).")
L["vllm_async_engine_chained_cancelled_error_under_load.log"] = [
    ev(1, 29, "python_traceback"), ev(30, 67, "python_traceback"), ev(71, 77, "python_traceback"),
    ev(81, 136, "python_traceback"), ev(137, 149, "python_traceback")]

N["vllm_async_timeout_chained_then_metrics_line.log"] = "1 chained traceback (1-71) + 1 metrics line."
L["vllm_async_timeout_chained_then_metrics_line.log"] = [ev(1, 71, "python_traceback")]

N["vllm_benchmark_serving_latency_tables.log"] = (
    "Reporter's paste: prose line, shell commands continued with backslashes (one command each), benchmark_serving "
    "result tables framed by '====' rules (one table each).")
L["vllm_benchmark_serving_latency_tables.log"] = [
    ev(3, 9, "shell_command"), ev(11, 21, "shell_command"), ev(23, 43, "table"),
    ev(45, 55, "shell_command"), ev(57, 77, "table"), ev(79, 89, "shell_command"), ev(91, 111, "table"),
    ev(113, 123, "shell_command"), ev(125, 145, "table")]

N["vllm_double_prefixed_wrapper_metrics_chained_timeout.log"] = (
    "Wrapper-prefixed lines; the 'Engine background task failed' logger.exception record with its chained traceback "
    "is 10-31; the rest single.")
L["vllm_double_prefixed_wrapper_metrics_chained_timeout.log"] = [ev(10, 31, "python_traceback")]

N["vllm_multiproc_startup_throughput_then_assertion.log"] = (
    "8 FutureWarning 2-line records (6 with the '(VllmWorkerProcess pid=N)' prefix on both lines); prefixed "
    "logger.exception record 105-123; line 30 is a splice of two prints (single).")
L["vllm_multiproc_startup_throughput_then_assertion.log"] = (
    [ev(a, a + 1, "python_warning") for a in range(8, 23, 2)] + [ev(105, 123, "python_traceback")])

N["vllm_ray_pp_nccl_info_warn_init_failure.log"] = (
    "NCCL/vLLM lines single (the NCCL WARN has an unprefixed empty line before it, which is blank); 3 tracebacks: "
    "ERROR-prefixed record 43-76, [rank0] 77-167, Ray-worker-prefixed record 168-201.")
L["vllm_ray_pp_nccl_info_warn_init_failure.log"] = [
    ev(43, 76, "python_traceback"), ev(77, 167, "python_traceback"), ev(168, 201, "python_traceback")]

N["vllm_ray_sigsegv_fatal_python_stack_actor_died.log"] = (
    "Ray-prefixed abseil '*** SIGSEGV received' dump (1-4) and the same dump re-logged by Ray's logging.cc one record "
    "per line (5-8, grouped as the one dump it is); faulthandler 'Fatal Python error' + Stack + 'Extension modules' "
    "(9-46); engine logger.exception record 49-85 (ActorDiedError message spans lines, ends with a prefixed empty line).")
L["vllm_ray_sigsegv_fatal_python_stack_actor_died.log"] = [
    ev(1, 4, "cpp_frames"), ev(5, 8, "cpp_frames"), ev(9, 46, "python_faulthandler"), ev(49, 85, "python_traceback")]

N["vllm_rocm_worker_traceback_plus_ipython_chained.log"] = (
    "3 worker tracebacks each starting 'Process VllmWorkerProcess:'; pid 17498 contiguous (3-31), pid 17499 interleaved "
    "with an INFO line and pid 17500's first line (lines list), pid 17500 likewise; IPython-formatted chained exception "
    "93-216.")
L["vllm_rocm_worker_traceback_plus_ipython_chained.log"] = [
    ev(3, 31, "python_traceback"),
    lines_ev([32] + list(range(34, 61)) + [62], "python_traceback"),
    lines_ev([61] + list(range(63, 91)), "python_traceback"),
    ev(93, 216, "python_traceback")]

N["vllm_serve_jamba_cuda_oom_kv_cache.log"] = (
    "2 FutureWarning 2-line records; 'Process SpawnProcess-1:' + traceback (49-90); rest single.")
L["vllm_serve_jamba_cuda_oom_kv_cache.log"] = [
    ev(13, 14, "python_warning"), ev(15, 16, "python_warning"), ev(49, 90, "python_traceback")]

N["vllm_worker_nccl_illegal_memory_watchdog_chained.log"] = (
    "Prefixed chained logger.exception record 1-100; a WARNING record whose message holds the CUDA error's 4 lines, "
    "each prefixed (102-106); watchdog record with 'Exception raised from' frames 107-122; terminate/what() with 2 frame "
    "lists 124-147; server lines single.")
L["vllm_worker_nccl_illegal_memory_watchdog_chained.log"] = [
    ev(1, 100, "python_traceback"), ev(102, 106, "multiline"), ev(107, 122, "cpp_frames"), ev(124, 147, "cpp_frames")]


def main():
    src = sources()
    logs = sorted(p.name for p in ROOT.glob("*.log"))
    assert set(logs) == set(L), (set(logs) ^ set(L))
    (ROOT / "labels").mkdir(exist_ok=True)
    for name in logs:
        out = {"source": src[name], "notes": N[name], "events": L[name]}
        (ROOT / "labels" / (name[:-4] + ".json")).write_text(json.dumps(out, indent=1) + "\n")
    print(len(logs), "label files written")


if __name__ == "__main__":
    main()
