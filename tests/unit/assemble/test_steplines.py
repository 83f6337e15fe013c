"""Step lines that are not records, each as its printer writes it (see streams/assemble/steplines.py)."""

from __future__ import annotations

import calendar
import math

import pytest

from streams.assemble.parse import parse_line

READ = calendar.timegm((2023, 4, 18, 12, 0, 0)) * 1000


def lifted(line: str):
    return parse_line(line, READ)


def test_megatron_iteration_line() -> None:
    # Megatron-LM training_log: " iteration {:8d}/{:8d} |" then " key: value |" pairs, losses as {:.6E}
    p = lifted(" iteration       10/     100 | consumed samples:          640 | elapsed time per iteration (ms): "
               "1234.5 | learning rate: 1.000000E-04 | global batch size:    64 | lm loss: 1.234560E+00 | "
               "loss scale: 1.0 | grad norm: 0.512 | number of skipped iterations:   0 | "
               "number of nan iterations:   0 |")
    assert (p.step, p.max_steps, p.fmt) == (10, 100, "megatron")
    assert p.metrics["loss"] == 1.23456 and p.metrics["learning_rate"] == 1e-4 and p.metrics["grad_norm"] == 0.512
    assert p.metrics["iteration_time_ms"] == 1234.5 and p.metrics["consumed_samples"] == 640.0
    assert p.metrics["nan_iterations"] == 0.0


def test_megatron_deepspeed_lm_dash_loss() -> None:
    p = lifted(" iteration        1/    1000 | lm-loss: 1.244238E+01 | loss scale: -1.0 |")
    assert p.metrics["loss"] == 12.44238


def test_megatron_validation_line_is_eval() -> None:
    p = lifted(" validation loss at iteration 100 | lm loss value: 2.345E+00 | lm loss PPL: 1.043E+01 | ")
    assert p.step == 100 and p.metrics == {"eval_loss": 2.345, "eval_lm_loss_ppl": 10.43}


def test_megatron_memory_report_gives_gpu_memory() -> None:
    p = lifted("[Rank 0] (after 10 iterations) memory (MB) | allocated: 1234.5 | max allocated: 2345.6 | "
               "reserved: 3000.0 | max reserved: 4000.0")
    assert p.metrics["gpu_memory_mb"] == 4000.0 and p.metrics["memory_allocated_mb"] == 1234.5


def test_deepspeed_see_memory_usage_max_ca() -> None:
    p = lifted("[2023-04-18 03:36:00,502] [INFO] [utils.py:785:see_memory_usage] MA 0.07 GB         "
               "Max_MA 0.07 GB         CA 0.07 GB         Max_CA 12 GB ")
    assert p.metrics["gpu_memory_mb"] == 12 * 1024.0 and p.metrics["memory_allocated_gb"] == 0.07


def test_vllm_stats_line() -> None:
    p = lifted("INFO 07-19 16:09:21 metrics.py:295] Avg prompt throughput: 84.8 tokens/s, Avg generation "
               "throughput: 0.1 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: "
               "0.3%, CPU KV cache usage: 0.0%.")
    assert p.metrics["prompt_throughput_tokens_s"] == 84.8 and p.metrics["generation_throughput_tokens_s"] == 0.1
    assert p.metrics["gpu_kv_cache_usage_pct"] == 0.3 and p.metrics["running_reqs"] == 1.0


def test_deepspeed_log_dist_step_and_lr() -> None:
    p = lifted("[2023-04-18 01:51:12,730] [INFO] [logging.py:96:log_dist] [Rank 0] step=350, skipped=6, "
               "lr=[9.598078422461542e-06, 9.598078422461542e-06], mom=[(0.9, 0.95), (0.9, 0.95)]")
    assert p.step == 350 and p.metrics == {"learning_rate": 9.598078422461542e-06}


def test_deepspeed_throughput_timer() -> None:
    p = lifted("[2023-04-18 03:36:00,502] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10, "
               "RunningAvgSamplesPerSec=12.5, CurrSamplesPerSec=13.0, MemAllocated=1.2GB, MaxMemAllocated=3.4GB")
    assert p.step == 10 and p.epoch == 0.0
    # max_memory_allocated() in GiB: the only GPU memory figure the timer prints
    assert p.metrics["throughput_samples_s"] == 12.5 and p.metrics["gpu_memory_mb"] == 3.4 * 1024
    assert "timer_py" not in p.metrics, "the head's logger is not a pair"


def test_deepspeed_chat_ppo_line() -> None:
    p = lifted("epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.1|cri_loss: nan|unsuper_loss: 0.0")
    assert p.step == 12 and p.epoch == 0.0 and p.metrics["act_loss"] == 0.1 and math.isnan(p.metrics["cri_loss"])


def test_torchtune_step_line() -> None:
    p = lifted("Step 12 | loss:1.2345 lr:2e-05 tokens_per_second_per_gpu:1234.5 peak_memory_reserved:20.5 ")
    assert p.step == 12 and p.metrics["loss"] == 1.2345 and p.metrics["learning_rate"] == 2e-05
    assert p.metrics["gpu_memory_mb"] == 20.5 * 1024


def test_lightning_progress_bar_postfix() -> None:
    p = lifted("Epoch 3: 100%|██████████| 10/10 [00:01<00:00,  8.00it/s, v_num=0, train_loss=0.523]")
    assert p.epoch == 3.0 and p.metrics == {"loss": 0.523}


def test_gpu_figures_a_job_prints() -> None:
    p = lifted("2024-05-01 10:00:00 INFO monitor: gpu_util=3% gpu_mem=1024MiB step=40")
    assert p.metrics["gpu_utilization_pct"] == 3.0 and p.metrics["gpu_memory_mb"] == 1024.0 and p.step == 40


@pytest.mark.parametrize("line", [
    "  Gradient Accumulation steps = 8",  # HF's banner: configuration, not a step
    "  Total optimization steps = 1,000",
    "Total steps: 1,000 (estimated)",  # a thousands separator: not step 1
    "20171223-22:15:29:606|Step_LSC|30002312|onExtend:1514038530000 14 0 4",  # clocks and ids, not pairs
    "connecting to master localhost:29500 for step sync",
])
def test_what_is_not_a_step_line(line: str) -> None:
    p = lifted(line)
    assert p.step is None and p.metrics == {}


def test_huge_megatron_iteration_is_kept_as_text() -> None:
    p = lifted(" iteration 99999999999999999999999/ 5 | lm loss: 1.0 |")
    assert p.step is None and p.max_steps == 5
    assert p.attributes["step"] == "99999999999999999999999" and p.flags == ["step_out_of_range"]


def test_a_slurm_step_id_is_not_a_step() -> None:
    assert lifted("slurmstepd: error: *** STEP 6053.0 ON node-7 CANCELLED ***").step is None


@pytest.mark.parametrize(("line", "lr"), [
    # XLM Trainer.print_stats: "%7i - " iterations, "{:7.2f} sent/s - {:8.2f} words/s - ", the losses joined by
    # " || ", then " - " and " - %s LR: " with "{:.4e}" of each param group joined by " / "; behind XLM's
    # LogFormatter ("%s - %s - %s" of levelname, time.strftime("%x %X") and the time elapsed)
    ("INFO - 10/04/19 14:41:25 - 0:11:11 -    1135 -   56.12 sent/s -  2143.80 words/s - MLM-en:  7.7416 -  - "
     "model LR: 3.8795e-06", 3.8795e-06),
    ("INFO - 03/05/19 10:00:00 - 0:01:00 -      50 -  120.00 sent/s -  4000.00 words/s - CLM-en:  5.2001 || "
     "MLM-fr:  6.1002 -  - model LR: 1.0000e-04 / 1.0000e-04", 1.0e-04),
    # its forks: SymbolicMathematics ("equations/s", upper-case stat names), UnsupervisedMT ("images/s")
    ("INFO - 06/21/20 09:12:44 - 1:02:03 -    2000 -  412.50 equations/s - 10342.21 words/s - XE-PRIM-FWD:  "
     "0.4321 - model LR: 2.5000e-04", 2.5e-04),
    ("INFO - 02/01/18 08:00:00 - 0:00:30 -     100 -   12.50 images/s - ae: 0.5000 - enc LR: 2.0000e-04",
     2.0e-04),
])
def test_xlm_print_stats_learning_rate_beside_its_speeds(line: str, lr: float) -> None:
    assert lifted(line).metrics["learning_rate"] == lr


@pytest.mark.parametrize("line", [
    "  lr: 0.001",  # a config dump's learning rate alone: configuration
    "optimizer: adam, lr: 3e-4",
    "Throughput 120.00 samples/s, learning rate schedule: cosine",  # a speed, but no learning rate value
])
def test_a_learning_rate_without_a_measured_speed_is_configuration(line: str) -> None:
    assert "learning_rate" not in lifted(line).metrics
