"""Step lines of printers the seventh probe round brought in, each line built with its printer's format (open_clip's
logger, mistral-finetune's train_log_msg, SpeechBrain's FileTrainLogger, MXNet's Speedometer, keras-rl's
TrainEpisodeLogger, gpustat's console view, end2end-asr-pytorch's validation line). The field probe's dev7 part
covers the same on pasted lines."""

from __future__ import annotations

import calendar
import logging
import math
import time
from datetime import datetime

import pytest

from streams.assemble.parse import parse_line

READ = calendar.timegm((2023, 4, 18, 12, 0, 0)) * 1000
WHEN = calendar.timegm((2024, 2, 5, 8, 12, 31))


def lifted(line: str):
    return parse_line(line, READ)


def logged(fmt: str, datefmt: str | None, message: str, level: int = logging.INFO) -> str:
    """``message`` as a logging.Formatter with ``fmt`` / ``datefmt`` writes it at :data:`WHEN` (UTC)."""
    formatter = logging.Formatter(fmt, datefmt)
    formatter.converter = time.gmtime
    record = logging.LogRecord("train", level, __file__, 1, message, None, None)
    record.created, record.msecs = WHEN, 0.0
    return formatter.format(record)


def test_open_clip_time_has_a_comma_between_date_and_time() -> None:
    # open_clip src/training/logger.py: "%(asctime)s | %(levelname)s | %(message)s", datefmt "%Y-%m-%d,%H:%M:%S"
    message = (f"Train Epoch: 3 [{4096000:>8}/10000000 (41%)] Data (t): 0.412 Batch (t): 1.204, {3401.99:#g}/s, "
               f"{425.249:#g}/s/gpu LR: {5e-05:5f} Logit Scale: 14.286 Contrastive_loss: {8.2134:#.5g} (8.2847) "
               f"Loss: {8.2134:#.5g} (8.2847)")
    line = logged("%(asctime)s | %(levelname)s | %(message)s", "%Y-%m-%d,%H:%M:%S", message)
    assert line.startswith("2024-02-05,08:12:31 | INFO | ")
    p = lifted(line)
    assert p.ts_ms == WHEN * 1000 and p.level == "INFO"
    assert p.epoch == 3.0 and p.metrics["loss"] == 8.2134 and p.metrics["learning_rate"] == 5e-05
    assert p.step is None  # the bracket counts samples


def test_open_clip_params_lines_stay_settings() -> None:
    # open_clip main.py: logging.info("Params:") then logging.info(f"  {name}: {val}") per argument
    for name, val, field in (("epochs", 5, "epoch"), ("lr", 1e-06, "learning_rate")):
        p = lifted(logged("%(asctime)s | %(levelname)s | %(message)s", "%Y-%m-%d,%H:%M:%S", f"  {name}: {val}"))
        assert p.epoch is None and field not in p.metrics


def mistral_train_log_msg(metrics: dict) -> str:
    # mistral-finetune finetune/monitoring/metrics_logger.py train_log_msg
    parts = []
    for key, fmt, new_name in [("step", "06", None), ("percent_done", "03.1f", "done (%)"), ("loss", ".3f", None),
                               ("lr", ".1e", None), ("peak_allocated_mem", ".1f", "peak_alloc_mem (GB)"),
                               ("allocated_mem", ".1f", "alloc_mem (GB)"), ("wps", ".1f", "words_per_second"),
                               ("avg_wps", ".1f", "avg_words_per_second"), ("eta", "%Y-%m-%d %H:%M:%S", "ETA")]:
        parts.append(f"{new_name or key}: {metrics[key]:>{fmt}}")
    return " - ".join(parts)


def test_mistral_finetune_peak_allocated_memory_is_the_gpus() -> None:
    message = mistral_train_log_msg({"step": 10, "percent_done": 1.0, "loss": 1.234, "lr": 6e-05,
                                     "peak_allocated_mem": 23.4, "allocated_mem": 15.6, "wps": 1234.5,
                                     "avg_wps": 1200.0, "eta": datetime(2024, 2, 5, 12, 40)})
    # finetune/monitoring/utils.py set_logger: "%(asctime)s - %(delta)s - %(name)s - %(levelname)s - %(message)s"
    line = logged("%(asctime)s - 0:05:12 - %(name)s - %(levelname)s - %(message)s", "%Y-%m-%d %H:%M:%S (UTC)",
                  message)
    p = lifted(line)
    assert p.step == 10 and p.metrics["loss"] == 1.234 and p.metrics["learning_rate"] == 6e-05
    assert p.metrics["gpu_memory_mb"] == pytest.approx(23.4 * 1024)
    assert p.metrics["alloc_mem_gb"] == 15.6  # the memory allocated now is not the peak
    assert p.ts_ms == WHEN * 1000  # the ETA at the end is not the line's time


def speechbrain_stats(stats: dict, dataset: str | None = None) -> str:
    # speechbrain/utils/train_logger.py FileTrainLogger._item_to_string / _stats_to_string
    items = []
    for key, value in stats.items():
        text = value
        if isinstance(value, float) and 1.0 < value < 100.0:
            text = f"{value:.2f}"
        elif isinstance(value, float):
            text = f"{value:.2e}"
        items.append(f"{dataset} {key}: {text}" if dataset else f"{key}: {text}")
    return ", ".join(items)


def speechbrain_log_stats(meta: dict, train: dict, valid: dict | None = None, test: dict | None = None) -> str:
    line = speechbrain_stats(meta)
    for dataset, stats in (("train", train), ("valid", valid), ("test", test)):
        if stats is not None:
            line += " - " + speechbrain_stats(stats, dataset)
    return line


def test_speechbrain_split_before_the_key_names_the_loss() -> None:
    line = speechbrain_log_stats({"epoch": 3, "lr": 1.08e-04, "steps": 5391, "optimizer": "Adam"},
                                 {"loss": 166.0}, {"loss": 66.64, "ACC": 0.699})
    assert line == ("epoch: 3, lr: 1.08e-04, steps: 5391, optimizer: Adam - train loss: 1.66e+02 - "
                    "valid loss: 66.64, valid ACC: 6.99e-01")
    p = lifted(line)
    assert (p.epoch, p.step) == (3.0, 5391)
    assert p.metrics["loss"] == 166.0 and p.metrics["eval_loss"] == 66.64


def test_speechbrain_test_stats_are_the_evaluations() -> None:
    p = lifted("speechbrain.utils.train_logger - " + speechbrain_log_stats(
        {"Epoch loaded": 30}, None, None, {"loss": 0.25, "WER": 3.21}))
    assert p.metrics["eval_loss"] == 0.25 and "loss" not in p.metrics


def test_mxnet_speedometer_hyphenated_metric_is_the_loss() -> None:
    # mxnet/callback.py Speedometer: "Epoch[%d] Batch [%d]\tSpeed: %.2f samples/sec\t%s" with "%s=%f" per metric
    name_value = [("accuracy", 0.3125), ("cross-entropy", 2.351562)]
    msg = f"Epoch[{0:d}] Batch [{100:d}]\tSpeed: {1205.67:.2f} samples/sec\t" + "\t".join(
        f"{name}={value:f}" for name, value in name_value)
    p = lifted("INFO:root:" + msg)
    assert p.epoch == 0.0 and p.metrics["loss"] == pytest.approx(2.351562)
    # module/base_module.py fit: "Epoch[%d] Train-%s=%f" after the epoch
    fit_format = "Epoch[%d] Train-%s=%f"
    p = lifted("INFO:root:" + fit_format % (1, "cross-entropy", 2.125))
    assert p.epoch == 1.0 and p.metrics["loss"] == 2.125


@pytest.mark.parametrize("line", [
    "optimizer-inner-step: 46.00 | optimizer-copy-to-main-grad: 0.01",  # Megatron's timers
    "Loading /ckpt/epoch=2-step=1000.ckpt",  # a run's file name
])
def test_other_hyphenated_keys_stay_unread(line: str) -> None:
    p = lifted(line)
    assert p.step is None and "loss" not in p.metrics


def keras_rl_episode(step: int, nb_steps: int, episode: int, episode_steps: int, metrics: str) -> str:
    # rl/callbacks.py TrainEpisodeLogger.on_episode_end
    nb_step_digits = str(math.ceil(math.log10(nb_steps)) + 1)
    template = ("{step: " + nb_step_digits + "d}/{nb_steps}: episode: {episode}, duration: {duration:.3f}s, "
                "episode steps: {episode_steps}, steps per second: {sps:.0f}, episode reward: {episode_reward:.3f}, "
                "mean reward: {reward_mean:.3f} [{reward_min:.3f}, {reward_max:.3f}], {metrics}")
    return template.format(step=step, nb_steps=nb_steps, episode=episode, duration=0.073,
                           episode_steps=episode_steps, sps=178, episode_reward=13.0, reward_mean=1.0,
                           reward_min=1.0, reward_max=1.0, metrics=metrics)


def test_keras_rl_run_step_heads_the_episode_line() -> None:
    line = keras_rl_episode(39160, 50000, 569, 13, "loss: 78.813515, mean_absolute_error: 25.318531")
    assert line.startswith(" 39160/50000: episode: 569, ")
    p = lifted(line)
    assert (p.step, p.max_steps) == (39160, 50000)  # not the episode's 13 steps
    assert p.metrics["loss"] == 78.813515


def gpustat_row(index: int, name: str, temp: str, util: str, used: int, total: int, procs: str) -> str:
    # gpustat/core.py GPUStat.print_to (colours off)
    return (f"[{index}] {name} |{temp:>3}°C, {util:>3} % | {used:>5} / {total:>5} MB | {procs}")


@pytest.mark.parametrize(("row", "mem", "util"), [
    (gpustat_row(1, "NVIDIA A100-SXM4-80GB", "45", "100", 30123, 81920, "alice(30110M)"), 30123.0, 100.0),
    (gpustat_row(0, "Tesla V100-SXM2-32GB", "38", "0", 3, 32510, ""), 3.0, 0.0),
    (gpustat_row(2, "NVIDIA H100 80GB HBM3", "51", "??", 1024, 81559, "bob(1010M)"), 1024.0, None),
    ("[0] GeForce GTX Titan X | 77'C,  96 % | 11848 / 12287 MB | python/52046(11821M)", 11848.0, 96.0),  # older
])
def test_gpustat_row_gives_memory_and_utilisation(row: str, mem: float, util: float | None) -> None:
    p = lifted(row)
    assert p.metrics["gpu_memory_mb"] == mem
    assert p.metrics.get("gpu_utilization_pct") == util
    assert p.task is None or "model_name" not in p.task  # the GPU's name is the device


def test_end2end_asr_validation_set_line_is_an_evaluation() -> None:
    # end2end-asr-pytorch's trainer: "VALID SET {} LOSS:{:.4f} CER:{:.2f}%" under "%(asctime)s - %(message)s"
    valid, train = "VALID SET {} LOSS:{:.4f} CER:{:.2f}%", "(Epoch {}) TRAIN LOSS:{:.4f} CER:{:.2f}% LR:{:.7f}"
    line = logged("%(asctime)s - %(message)s", None, valid.format(0, 0.178, 5.78))
    p = lifted(line)
    assert p.metrics["eval_loss"] == 0.178 and "loss" not in p.metrics
    p = lifted(logged("%(asctime)s - %(message)s", None,
                      train.format(20, 0.1903, 6.53, 1.67e-05)))
    assert p.epoch == 20.0 and p.metrics["loss"] == 0.1903 and "eval_loss" not in p.metrics
