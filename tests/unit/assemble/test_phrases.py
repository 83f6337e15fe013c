"""Field rules for shapes of the probe's third part: sentences and evaluation heads
(streams/assemble/phrases.py), key spellings (OLMo, SGLang, DCGM short names), times written as parts,
nested task labels, MSVC's NaN, comma-only csv and dcgmi dmon tables, a level letter before the time,
and error lines that stay events. Each line is written as its printer's format string writes it."""

from __future__ import annotations

import calendar
import math
from pathlib import Path

from streams.assemble.keys import canonical, family, norm, number
from streams.assemble.parse import parse_line
from streams.assemble.pipeline import parse_files

READ = calendar.timegm((2023, 4, 18, 12, 0, 0)) * 1000
T_2024_06_01_NOON_123 = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000 + 123


def lifted(line: str):
    return parse_line(line, READ)


def outputs(tmp_path: Path, *lines: str) -> list[dict]:
    path = tmp_path / "t.log"
    path.write_text("".join(f"{ln}\n" for ln in lines), encoding="utf-8")
    return list(parse_files([path], default_ts_ms=READ))


def test_learning_rate_scheduler_sentences() -> None:
    # Keras ReduceLROnPlateau f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}."
    p = lifted("Epoch 5: ReduceLROnPlateau reducing learning rate to 0.00010000000474974513.")
    assert p.epoch == 5.0 and math.isclose(p.metrics["learning_rate"], 1e-4, rel_tol=1e-6)
    # torch LRScheduler verbose "Adjusting learning rate of group {} to {:.4e}."
    assert lifted("Adjusting learning rate of group 0 to 1.0000e-03.").metrics["learning_rate"] == 1e-3


def test_keras_model_checkpoint_gives_the_new_value_of_its_monitor() -> None:
    p = lifted("Epoch 3: val_loss improved from 0.14000 to 0.12345, saving model to model.keras")
    assert p.epoch == 3.0 and p.metrics == {"eval_loss": 0.12345}


def test_a_step_count_after_after() -> None:
    # sentence-transformers' evaluators: "... in epoch {epoch} after {steps} steps:"
    p = lifted("2021-05-01 10:00:00 - EmbeddingSimilarityEvaluator: Evaluating the model on sts-dev dataset in "
               "epoch 0 after 1000 steps:")
    assert (p.epoch, p.step) == (0.0, 1000)
    assert lifted("Trainer will evaluate after 500 steps").step is None  # a setting


def test_evaluation_heads_make_the_loss_the_evaluations() -> None:
    assert lifted("Test set: Average loss: 0.0553, Accuracy: 9826/10000 (98%)").metrics == {"eval_loss": 0.0553}
    p = lifted("INFO:tensorflow:Saving dict for global step 1000: accuracy = 0.9137, global_step = 1000, "
               "loss = 0.2873")
    assert p.step == 1000 and p.metrics["eval_loss"] == 0.2873 and "loss" not in p.metrics
    # a training line is not one
    assert lifted("Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.283154").metrics == {"loss": 2.283154}


def test_a_line_logged_as_an_error_stays_an_event_with_its_loss(tmp_path: Path) -> None:
    # TensorFlow's NanTensorHook: the sentence gives the loss; the error level keeps it an event
    (out,) = outputs(tmp_path, "ERROR:tensorflow:Model diverged with loss = NaN.")
    assert "metrics" not in out and out["level"] == "ERROR" and math.isnan(out["loss"])


def test_msvc_nan_spellings() -> None:
    assert all(math.isnan(number(t)[0]) for t in ("nan(ind)", "-nan(ind)", "nan(snan)", "-1.#IND", "1.#QNAN"))
    assert number("1.#INF")[0] == math.inf and number("-1.#INF")[0] == -math.inf
    p = lifted("I0512 10:05:00.000001  1234 solver.cpp:218] Iteration 300 (2.5 iter/s, 40s/100 iters), "
               "loss = -nan(ind)")
    assert p.step == 300 and math.isnan(p.metrics["loss"])


def test_key_spellings_of_olmo_and_sglang() -> None:
    # OLMo's console logger: "    {name}={format_float(value)}", thousands separators above 1000
    assert lifted("    train/CrossEntropyLoss=12.18").metrics == {"loss": 12.18}
    assert lifted("    optim/total_grad_norm=231.7").metrics == {"grad_norm": 231.7}
    assert lifted("    optim/learning_rate_group0=0.0003").metrics == {"learning_rate": 0.0003}
    assert lifted("    System/Peak GPU Memory (MB)=46,911").metrics == {"gpu_memory_mb": 46911.0}
    # a banner's " = " with blanks in its key is still no row, nor a setting's tight "=" without a path
    assert lifted("  Num Epochs = 3").epoch is None
    assert lifted("  Max GPU memory (MB)=16,384").metrics == {}
    # SGLang's scheduler: a key with its unit in brackets, "gen throughput (token/s): 186.64"
    p = lifted("[2025-02-27 04:46:39 TP0] Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
               "gen throughput (token/s): 186.64, #queue-req: 0")
    assert p.metrics["generation_throughput_tokens_s"] == 186.64


def test_gpu_memory_spellings_take_their_unit_from_the_key() -> None:
    for key, scale in (("peak_gpu_memory", 1.0), ("max_gpu_mem_allocated_gb", 1024.0),
                       ("gpu_memory_reserved_mib", 1.0), ("Peak GPU Memory (GiB)", 1024.0)):
        assert family(canonical(norm(key))) == ("gpu_memory_mb", scale), key
    assert family(canonical(norm("gpu_memory_clock"))) is None


def test_dcgmi_short_field_names() -> None:
    assert family(norm("GPUTL")) == ("gpu_utilization_pct", 1.0)
    assert family(norm("FBUSD")) == ("gpu_memory_mb", 1.0)


def test_times_written_as_seconds_and_nanoseconds() -> None:
    # Cloud Logging's Timestamp, log4j2's Instant, log4j2's older timeMillis
    gcp = lifted('{"severity":"ERROR","message":"x","timestamp":{"seconds":1717243200,"nanos":123000000}}')
    assert gcp.ts_ms == T_2024_06_01_NOON_123 and gcp.level == "ERROR"
    log4j = lifted('{"instant":{"epochSecond":1717243200,"nanoOfSecond":123456789},"level":"INFO","message":"x"}')
    assert log4j.ts_ms == T_2024_06_01_NOON_123
    assert lifted('{"timeMillis":1717243200123,"level":"INFO","message":"x"}').ts_ms == T_2024_06_01_NOON_123


def test_a_task_key_nested_under_labels() -> None:
    p = lifted('{"severity":"ERROR","message":"x","logging.googleapis.com/labels":{"task_id":"train-llama-42"}}')
    assert p.task == {"task_id": "train-llama-42"}


def test_comma_only_csv_tables(tmp_path: Path) -> None:
    # Lightning's CSVLogger metrics.csv: csv.DictWriter, no blank after the comma, empty cells
    out = outputs(tmp_path, "epoch,step,train_loss,val_loss", "0,49,0.5234,", "0,99,,0.4821")
    assert "metrics" not in out[0]
    assert (out[1]["epoch"], out[1]["step"], out[1]["metrics"]["loss"]) == (0.0, 49, 0.5234)
    assert (out[2]["step"], out[2]["metrics"]["eval_loss"]) == (99, 0.4821)
    # a comma-separated line with blanks in it is prose, not a header
    assert "metrics" not in outputs(tmp_path, "epoch,step,loss and more", "0,49,0.5")[1]


def test_a_level_letter_before_the_time() -> None:
    # NeMo's formatter: "[NeMo %(levelname)1.1s %(asctime)s %(module)s:%(lineno)d] %(message)s"
    p = lifted("[NeMo W 2024-06-01 12:00:01 nemo_logging:349] UserWarning: This DataLoader will create 8 workers")
    assert p.level == "WARN" and p.ts_ms == calendar.timegm((2024, 6, 1, 12, 0, 1)) * 1000
    # a word before the time is not a level letter
    assert lifted("RUN 2024-06-01 12:00:01 done").level is None


def test_dcgmi_dmon_rows_under_their_commented_header(tmp_path: Path) -> None:
    out = outputs(tmp_path, "#Entity   GPUTL  FBUSD", "ID", "GPU 0     87     18432", "GPU 1     45     9000")
    assert all("metrics" not in o for o in out[:2])
    assert out[2]["metrics"]["gpu_utilization_pct"] == 87.0 and out[2]["metrics"]["gpu_memory_mb"] == 18432.0
    assert out[3]["metrics"]["gpu_utilization_pct"] == 45.0
    # a row that names no DCGM entity is not one
    assert "metrics" not in outputs(tmp_path, "#Entity   GPUTL  FBUSD", "ID", "foo 0     87     18432")[2]
