from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
from corpus_helpers import lines

from streams.assemble.parse import parse_line

P2024 = calendar.timegm((2024, 3, 1, 0, 0, 0)) * 1000


def utc(*a) -> int:
    return calendar.timegm(a[:6]) * 1000 + (a[6] if len(a) > 6 else 0)


def test_deepspeed_header():
    p = parse_line(lines("deepspeed_chat_reward_model_grad_overflow_two_line_records.log", 8, 8)[0], P2024)
    assert p.ts_ms == utc(2023, 4, 18, 3, 36, 0, 502) and p.level == "INFO"
    assert p.logger == "fused_optimizer.py:363:_update_scale"


def test_hf_trainer_header():
    f = "bigscience_hf_trainer_deepspeed_zero3_n4_tqdm_cr.log"
    text = next(t for t in lines(f, 1, 262) if t.startswith("[INFO|"))
    p = parse_line(text, P2024)
    assert p.level == "INFO" and p.logger.startswith("trainer.py:") and p.ts_ms is not None


def test_vllm_prefix_uses_producer_year():
    p = parse_line(lines("vllm_worker_nccl_illegal_memory_watchdog_chained.log", 1, 1)[0], P2024)
    assert p.level == "ERROR" and p.ts_ms == utc(2024, 1, 29, 20, 0, 47) and p.logger == "multiproc_worker_utils.py:240"


def test_python_basic_and_levels():
    p = parse_line(lines("accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log", 33, 33)[0], P2024)
    assert p.level == "WARN" and p.logger == "torch.distributed.elastic.multiprocessing.api"
    assert parse_line("CRITICAL 01-29 20:00:47 launcher.py:99] x", P2024).level == "FATAL"


def test_klog_line():
    text = lines("fixture_loki_drain_kubernetes_klog.log", 1, 150)
    k = next(t for t in text if t[:1] in "IWE" and t[1:5].isdigit())
    p = parse_line(k, P2024)
    assert p.fmt == "glog" and p.level in ("INFO", "WARN", "ERROR") and p.ts_ms is not None


def test_nccl_info_and_warn():
    p = parse_line(lines("bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log", 14, 14)[0], P2024)
    assert p.level == "INFO" and p.attributes["nccl_host"] == "r6i4n5" and p.attributes["device"] == "0"
    w = parse_line(lines("verl_fsdp_ray_nccl_warn_cuda_failure_700.log", 45, 45)[0], P2024)
    assert w.level == "WARN" and w.ts_ms == utc(2025, 6, 20, 10, 15, 41)


def test_nccl_warn_with_the_source_files_directory():
    text = next(t for t in lines("vllm_ray_pp_nccl_info_warn_init_failure.log", 1, 400) if "misc/nvmlwrap.cc" in t)
    p = parse_line(text, P2024)
    assert p.level == "WARN" and p.logger == "nccl" and p.attributes["device"] == "0"


def test_level_heads_without_a_time():
    swift = parse_line("[INFO:swift] Saving model checkpoint to /out/checkpoint-93", P2024)
    assert (swift.level, swift.logger) == ("INFO", "swift")
    assert parse_line("[swift:WARNING] other order", P2024).level == "WARN"
    uvicorn = parse_line('INFO:     172.19.0.4:53840 - "POST /v1/chat/completions HTTP/1.1" 500', P2024)
    assert uvicorn.level == "INFO" and uvicorn.ts_ms is None
    assert parse_line("WARNING:  Invalid HTTP request received.", P2024).level == "WARN"
    assert parse_line("ERROR: Unexpected bus error encountered in worker.", P2024).level == "ERROR"
    wandb = parse_line("wandb: WARNING The `run_name` is currently set to the same value", P2024)
    assert (wandb.level, wandb.logger) == ("WARN", "wandb")
    # no level word: wandb's plain termlog, a capitalised word that is the message's own
    assert parse_line("wandb: Tracking run with wandb version 0.16.0", P2024).level is None
    assert parse_line("Error: the config file is missing", P2024).level is None
    dask = parse_line("distributed.nanny - WARNING - Worker process 83572 exited with status 1", P2024)
    assert (dask.level, dask.logger) == ("WARN", "distributed.nanny")
    trt = parse_line("[TensorRT-LLM][WARNING] cancellation_check_period_ms is not specified", P2024)
    assert (trt.level, trt.logger) == ("WARN", "TensorRT-LLM")
    assert parse_line("log4j:WARN Please initialize the log4j system properly.", P2024).level == "WARN"
    assert parse_line("==1640574==ERROR: AddressSanitizer: heap-buffer-overflow on address", P2024).level == "ERROR"
    assert parse_line("ERROR in ch.qos.logback.core.joran.spi.Interpreter@21:41 - no applicable action",
                      P2024).level == "ERROR"


def test_the_programs_own_head_behind_a_stream_prefix():
    compose = parse_line("vllm_server  | ERROR 04-15 02:01:15 [core.py:387] EngineCore hit an exception", P2024)
    assert (compose.level, compose.logger) == ("ERROR", "core.py:387") and compose.ts_ms == utc(2024, 4, 15, 2, 1, 15)
    worker = parse_line("(VllmWorker TP1 pid=438) ERROR 08-28 07:32:18 [multiproc_executor.py:559] failed", P2024)
    assert worker.level == "ERROR" and worker.ts_ms == utc(2024, 8, 28, 7, 32, 18)
    assert parse_line('0|MINER  | INFO:     3.138.134.210:40490 - "POST /PerfInfo HTTP/1.1" 500', P2024).level == "INFO"
    # a relay's time stays when the program's line has only a level
    syslog = parse_line("Jul 09 14:15:08 host backup[2718]: ERROR: disk quota exceeded", P2024)
    assert syslog.level == "ERROR" and syslog.ts_ms == utc(2024, 7, 9, 14, 15, 8)


def test_rich_records_that_left_their_time_blank_and_other_timeless_columns():
    rich = parse_line("                    INFO     enable LoRA for U-Net                          lora.py:12", P2024)
    assert rich.level == "INFO" and rich.ts_ms is None
    assert parse_line(" WARNING  Sending process 14 closing signal SIGTERM         api.py:699", P2024).level == "WARN"
    assert parse_line("ERROR happened somewhere", P2024).level is None  # not rich's column: a sentence
    assert parse_line("[ERROR][CPU 0][     0.395791] kernel::panic: cpu panicked at", P2024).level == "ERROR"
    assert parse_line("[91169.504856] [DEBUG]optirun version 3.2.1 starting...", P2024).level == "DEBUG"
    assert parse_line("    ERROR: Failed building wheel for flash-attn", P2024).level == "ERROR"
    rust = parse_line("May 11 10:06:46 vector[2718]: May 11 10:06:46.440  INFO vector::topology: Removing", P2024)
    assert (rust.level, rust.logger) == ("INFO", "vector::topology") and rust.ts_ms == utc(2024, 5, 11, 10, 6, 46)
    nonebot = parse_line("10-08 22:25:00 [ERROR] uvicorn | Traceback (most recent call last):", P2024)
    assert nonebot.level == "ERROR" and nonebot.ts_ms == utc(2024, 10, 8, 22, 25, 0)
    assert parse_line("10-08 22:25:00 done", P2024).ts_ms is None  # no level word: not read as a time


def test_a_level_word_before_the_time_and_airflows_comma_before_the_time():
    paddle = parse_line("LAUNCH INFO 2023-06-02 09:57:50,115 elastic_timeout: 30", P2024)
    assert paddle.level == "INFO" and paddle.ts_ms == utc(2023, 6, 2, 9, 57, 50) + 115
    airflow = parse_line("[2022-01-20, 15:57:20 UTC] {base_task_runner.py:121} INFO - Job 129997: Subtask", P2024)
    assert airflow.level == "INFO" and airflow.ts_ms == utc(2022, 1, 20, 15, 57, 20)


def test_a_time_of_day_before_a_level_word_takes_the_latest_such_day():
    read = utc(2024, 3, 5, 16, 9, 3)
    flink = parse_line("14:04:55,763 INFO  org.apache.flink.mesos.scheduler.FlinkScheduler$  -  Current user", read)
    assert flink.level == "INFO" and flink.ts_ms == utc(2024, 3, 5, 14, 4, 55) + 763
    spark = parse_line("23:11:34 WARN  org.apache.spark.metrics.MetricsSystem  - Stopping a MetricsSystem", read)
    assert spark.level == "WARN" and spark.ts_ms == utc(2024, 3, 4, 23, 11, 34)  # the day before: not yet 23:11
    assert parse_line("00:00:05 Epoch 1 loss 0.5", read).ts_ms is None  # no level word: maybe an elapsed time


def test_ms_swift_jsonl_typed():
    # {"loss": 5.04565144, "acc": 0.125, "grad_norm": 484.0, ..., "epoch": 0.0, "global_step": 1}
    p = parse_line(lines("ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_head.log", 1, 1)[0], P2024)
    assert p.fmt == "json" and p.metrics["loss"] == 5.04565144 and p.metrics["grad_norm"] == 484.0
    assert p.step == 1 and p.epoch == 0.0 and p.metrics["throughput_iter_s"] == 0.118134


def test_ms_swift_console_dict_step_and_memory():
    # {'loss': 1.47077751, ..., 'global_step/max_steps': '1/94', ..., 'memory(GiB)': 4.87, ...}
    p = parse_line(lines("ms_swift_sft_metax_2026.log", 2, 2)[0], P2024)
    assert p.step == 1 and p.max_steps == 94 and p.metrics["gpu_memory_mb"] == 4.87 * 1024  # GiB -> MB
    assert p.metrics["loss"] == 1.47077751 and p.epoch == 0.01


def test_hf_dict_literal_eval():
    p = parse_line(lines("hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log", 23, 23)[0], P2024)
    assert p.metrics == {"loss": 4.7047, "grad_norm": 11.237261772155762, "learning_rate": 4.666666666666666e-05}
    assert p.epoch == 0.0
    assert parse_line("{'loss': __import__('os').system('id')}", P2024).metrics == {}  # never evaluated


def test_megatron_iteration_line():
    p = parse_line(lines("bigscience_tr11-176B_eval_hang_iteration_and_pulse.log", 1, 1)[0], P2024)
    assert p.step == 45000 and p.max_steps == 115311
    assert p.metrics["learning_rate"] == 4.298e-05 and p.metrics["loss"] > 2


def test_unknown_format_is_empty():
    p = parse_line("> compiling and loading fused kernels ...", P2024)
    assert p.ts_ms is None and p.level is None


def test_zap_console_head_epoch_float_level_logger():
    # controller-runtime's zap console encoder, as Kubeflow's training-operator logs it
    p = parse_line('1.7085078124461591e+09\tDEBUG\tevents\tCreated pod: x-master-0\t{"reason": "SuccessfulCreatePod"}',
                   P2024)
    assert p.ts_ms == 1708507812446 and p.level == "DEBUG" and p.logger == "events"
    assert p.fmt == "zap+json" and p.attributes == {"reason": "SuccessfulCreatePod"}


def test_slashed_dates_year_first_and_month_first():
    # PaddleOCR's logger, nanotron's "%m/%d/%Y %H:%M:%S", XLM's "%x %X" with the level in front
    p = parse_line("[2022/10/10 14:37:01] ppocr INFO: epoch: [1/50], global_step: 6200, lr: 0.000025", P2024)
    assert p.ts_ms == utc(2022, 10, 10, 14, 37, 1) and p.level == "INFO"
    n = parse_line("10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | lm_loss: 2.38", P2024)
    assert n.ts_ms == utc(2025, 10, 17, 16, 31, 56) and n.level == "INFO"
    x = parse_line("INFO - 10/04/19 14:41:25 - 0:11:11 -    1135 - model LR: 3.8795e-06", P2024)
    assert x.ts_ms == utc(2019, 10, 4, 14, 41, 25) and x.level == "INFO"
    # a first number above 12 can only be the day
    assert parse_line("25/12/2024 08:00:00 WARNING disk almost full", P2024).ts_ms == utc(2024, 12, 25, 8, 0, 0)


@pytest.mark.parametrize(("line", "utc"), [
    ("2024-03-05 10:00:00 PST INFO training started", "2024-03-05T18:00:00"),  # date(1) and Java's "z"
    ("2024-03-05 10:00:00 CET [INFO] hello", "2024-03-05T09:00:00"),
    ("[2024-03-05 10:00:00 +0900] INFO hi", "2024-03-05T01:00:00"),  # strftime's %z behind a blank
    ("2024-03-05 10:00:00 -07:00 WARN y", "2024-03-05T17:00:00"),
    ("2024-03-05 10:00:00 UTC INFO x", "2024-03-05T10:00:00"),
    ("2024-03-05 10:00:00 CST INFO x", "2024-03-05T10:00:00"),  # China's or the US's: not guessed
    ("2024-03-05 10:00:00 INFO -0700 y", "2024-03-05T10:00:00"),  # not behind the time
    ("Tue Mar  5 10:00:00 PST 2024 job started", "2024-03-05T18:00:00"),  # date(1)'s default output
    ("Tue Mar  5 10:00:00 CST 2024 job started", "2024-03-05T10:00:00"),
])
def test_a_zone_written_after_a_zoneless_time_is_applied(line: str, utc: str) -> None:
    want = int(datetime.fromisoformat(utc).replace(tzinfo=UTC).timestamp() * 1000)
    assert parse_line(line, 0).ts_ms == want
