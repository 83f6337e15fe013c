"""Structured records of trackers and loggers of dev18 of the field probe (tests/fixtures/fields_probe/dev18.yaml), one
test per rule, each record as its printer writes it; and the part's own figures.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

PROBE_DEV18 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev18.yaml"


def figure(out: dict, name: str):
    return out.get(name) if name in out and name != "metrics" else (out.get("metrics") or {}).get(name)


def test_a_learning_rate_in_ray_tune_s_config_is_a_setting() -> None:
    # ray/tune/logger/json.py JsonLoggerCallback: result.json rows carry the trial's config, Ray Train's nested
    row = {"loss": 0.4321, "timestamp": 1717243200, "done": False, "training_iteration": 3, "trial_id": "8d5f1_00000",
           "config": {"train_loop_config": {"lr": 0.001, "batch_size": 32, "max_steps": 1000}}}
    out = read(json.dumps(row))
    assert figure(out, "loss") == 0.4321
    assert figure(out, "learning_rate") is None
    assert out.get("max_steps") is None
    out = read(json.dumps({"message": "trial config", "step": 0, "config": {"lr": 0.01, "momentum": 0.9}}))
    assert out["learning_rate"] is None
    assert out["attributes"]["config.lr"] == "0.01"


def test_mlflow_s_metric_bodies_name_their_metric() -> None:
    # mlflow/protos/service.proto: LogMetric {run_id, key, value, timestamp (ms), step}; LogBatch's list of Metric
    out = read(json.dumps({"run_id": "3f9a", "key": "eval_loss", "value": 0.8123, "timestamp": 1717243320456,
                           "step": 300}))
    assert (figure(out, "eval_loss"), figure(out, "loss"), out["step"]) == (0.8123, None, 300)
    batch = {"run_id": "3f9a", "metrics": [{"key": "loss", "value": 1.25, "timestamp": 1717243260000, "step": 200},
                                           {"key": "lr", "value": 4.5e-05, "timestamp": 1717243260000, "step": 200}],
             "params": [{"key": "max_steps", "value": "1500"}]}
    out = read(json.dumps(batch))
    assert (figure(out, "loss"), figure(out, "learning_rate"), out["step"]) == (1.25, 4.5e-05, 200)
    assert out["timestamp"] == 1717243260000
    assert out.get("max_steps") is None


def test_a_history_of_named_values_is_no_one_point() -> None:
    # GetMetricHistory: the points of one metric at several steps; none of them is the record's loss
    history = {"metrics": [{"key": "loss", "value": 1.5, "timestamp": 1717243200000, "step": 100},
                           {"key": "loss", "value": 1.25, "timestamp": 1717243260000, "step": 200}]}
    out = read(json.dumps(history))
    assert figure(out, "loss") is None
    assert out.get("step") is None


def test_an_unknown_named_value_keeps_its_name() -> None:
    event = {"task": "4f2b", "type": "training_stats_scalar", "timestamp": 1717243260000, "iter": 360,
             "metric": ":monitor:machine", "variant": "cpu_usage", "value": 12.5}
    out = read(json.dumps(event))
    assert out["attributes"]["monitor_machine_cpu_usage"] == "12.5"  # ClearML's title, then its series


def test_clearml_s_scalar_event_and_its_series() -> None:
    # clearml backend_api events MetricsScalarEvent: metric (title), variant (series), value, iter
    event = {"task": "4f2b", "type": "training_stats_scalar", "timestamp": 1717243260000, "iter": 500,
             "metric": "loss", "variant": "validation", "value": 0.5123}
    out = read(json.dumps(event))
    assert (figure(out, "eval_loss"), figure(out, "loss"), out["step"]) == (0.5123, None, 500)
    monitor = {**event, "iter": 360, "metric": ":monitor:gpu", "variant": "gpu_0_mem_used_gb", "value": 71.2}
    assert figure(read(json.dumps(monitor)), "gpu_memory_mb") == 71.2 * 1024
    monitor["variant"] = "gpu_0_mem_usage"  # the share of the memory in use, %
    out = read(json.dumps(monitor))
    assert figure(out, "gpu_memory_mb") is None
    assert figure(out, "gpu_utilization_pct") is None


def test_comet_s_metric_rest_value_as_a_string() -> None:
    # comet-java-sdk MetricRest: metricName, metricValue (a string), step, epoch, timestamp
    out = read(json.dumps({"experimentKey": "b1c2", "metricName": "train_loss", "metricValue": "0.3456",
                           "step": 120, "epoch": 2, "timestamp": 1717243200123}))
    assert (figure(out, "loss"), out["step"], out["epoch"]) == (0.3456, 120, 2.0)


def test_wandb_s_gpu_monitor_by_index() -> None:
    # wandb core's GPU monitor: gpu.{i}.gpu (utilisation %), gpu.{i}.memory (the memory's busy %),
    # gpu.{i}.memoryAllocatedBytes
    row = {"system.gpu.0.gpu": 97.53, "system.gpu.0.memory": 45.2, "system.gpu.0.memoryAllocatedBytes": 64424509440,
           "_timestamp": 1717243260.0}
    out = read(json.dumps(row))
    assert (figure(out, "gpu_utilization_pct"), figure(out, "gpu_memory_mb")) == (97.53, 61440.0)
    out = read(json.dumps({"system.gpu.0.memory": 45.2, "system.gpu.0.temp": 71.0, "_timestamp": 1717243260.0}))
    assert figure(out, "gpu_utilization_pct") is None
    assert figure(out, "gpu_memory_mb") is None


def test_w_and_b_s_own_counter_yields_to_the_trainer_s_step() -> None:
    # wandb-summary.json: "_step" counts wandb.log calls; WandbCallback logs the Trainer's "train/global_step"
    out = read(json.dumps({"_runtime": 3605.2, "_step": 1499, "_timestamp": 1717246800.5, "train/global_step": 1500,
                           "train/loss": 0.9123}))
    assert out["step"] == 1500
    assert read(json.dumps({"loss": 2.3456, "_step": 7, "_timestamp": 1700000100.5}))["step"] == 7


def test_torch_s_reserved_memory_in_bytes() -> None:
    out = read(json.dumps({"levelname": "INFO", "message": "cuda memory", "step": 1800,
                           "memory_allocated_bytes": 42949672960, "memory_reserved_bytes": 47244640256}))
    assert figure(out, "gpu_memory_mb") == 45056.0


def test_python_json_logger_s_default_format_is_the_application_s_record() -> None:
    # JsonFormatter() with logging's default "%(message)s": only message and the extra= keys
    out = read(json.dumps({"message": "train step", "step": 1800, "loss": 1.5}))
    assert (out["step"], figure(out, "loss")) == (1800, 1.5)
    # an agent's record around a line stays an envelope: its message is the line
    out = read(json.dumps({"message": "step=7 loss=2.5", "host": "gpu-node-2", "source_type": "file", "step": 3}))
    assert out["step"] == 7


def test_lightning_csv_logger_with_a_learning_rate_monitor() -> None:
    header = "epoch,lr-AdamW,step,train_loss_epoch,train_loss_step,val_loss"
    out = read("0,0.0003,49,,0.6931,", [header])
    assert (out["epoch"], out["step"], figure(out, "learning_rate"), figure(out, "loss")) == (0.0, 49, 0.0003, 0.6931)
    out = read("0,,99,0.6512,,0.5821", [header])
    assert (figure(out, "loss"), figure(out, "eval_loss")) == (0.6512, 0.5821)
    # its momentum column is no rate; a parameter group's rate is
    out = read("0,0.9,0.0003,149", ["epoch,lr-AdamW-momentum,lr-Adam/pg1,step"])
    assert figure(out, "learning_rate") == 0.0003


def test_deepspeed_csv_monitor_s_two_columns() -> None:
    # csvMonitor.write_events: header ["step", the event's last name part], rows [step, value]
    assert figure(read("3200,2.3456", ["step,train_loss"]), "loss") == 2.3456
    assert figure(read("3200,0.0001", ["step,lr"]), "learning_rate") == 0.0001
    out = read("3200,65536.0", ["step,loss_scale"])
    assert figure(out, "loss") is None
    assert figure(out, "learning_rate") is None


def test_dev18_figures() -> None:
    s = score(load([str(PROBE_DEV18)]))
    assert s["right"] >= 116
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 3
