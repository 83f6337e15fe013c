"""Printers of dev20 of the field probe (tests/fixtures/fields_probe/dev20.yaml), one test per rule, each line as its
printer writes it; and the part's own figures.
"""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

PROBE_DEV20 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev20.yaml"
READ = calendar.timegm((2024, 6, 1, 13, 0, 0)) * 1000


def utc(*a) -> int:
    return calendar.timegm(a[:6]) * 1000 + (a[6] if len(a) > 6 else 0)


def figure(out: dict, name: str):
    return out.get(name) if name in out and name != "metrics" else (out.get("metrics") or {}).get(name)


def test_loggers_named_after_the_time_and_level() -> None:
    # Ruby's Logger::Formatter: "%s, [%s #%d] %5s -- %s: %s\n"
    p = parse_line("W, [2024-06-01T12:05:00.654321 #4242]  WARN -- trainer: loss spike detected", READ)
    assert (p.level, p.logger, p.ts_ms) == ("WARN", "trainer", utc(2024, 6, 1, 12, 5, 0, 654))
    assert parse_line("I, [2024-06-01T12:05:00.654321 #4242]  INFO -- : no progname", READ).logger is None
    # go-hclog: "[INFO] " and "[WARN] " padded to seven, then "name: "
    p = parse_line("2024-06-01T12:00:05.456+0200 [WARN]  nomad.gpu: device unhealthy: device=GPU-3f9a", READ)
    assert (p.level, p.logger, p.ts_ms) == ("WARN", "nomad.gpu", utc(2024, 6, 1, 10, 0, 5, 456))
    assert parse_line("2024-06-01T11:58:00.000Z [DEBUG] agent: plan", READ).logger == "agent"
    # ... but another layout's "[INFO] word: value" keeps its words (no hclog stamp before it)
    p = parse_line("2024-06-01 12:00:00 [INFO] loss: 0.5", READ)
    assert (p.level, p.logger) == ("INFO", None)
    # NLog's default layout, swift-log's StreamLogHandler, coloredlogs, Monolog
    p = parse_line("2024-06-01 12:02:00.5000|ERROR|Trainer.Checkpoint|Save failed", READ)
    assert (p.level, p.logger, p.ts_ms) == ("ERROR", "Trainer.Checkpoint", utc(2024, 6, 1, 12, 2, 0, 500))
    p = parse_line("2024-06-01T12:05:00+0200 error scheduler : node=gpu-7 [TrainerKit] node unreachable", READ)
    assert (p.level, p.logger, p.ts_ms) == ("ERROR", "scheduler", utc(2024, 6, 1, 10, 5, 0))
    p = parse_line("2024-06-01 12:01:00 gpu-node-1 data.loader[4242] WARNING shard 17 missing", READ)
    assert (p.level, p.logger) == ("WARN", "data.loader")
    p = parse_line("[2024-06-01T12:01:00.000000+02:00] app.WARNING: queue backlog growing", READ)
    assert (p.level, p.logger, p.ts_ms) == ("WARN", "app", utc(2024, 6, 1, 10, 1, 0))
    assert parse_line("[2024-06-01T12:03:00+00:00] app.EMERGENCY: disk gone", READ).level == "FATAL"
    # the step line after such a head is still read
    out = read("I, [2024-06-01T12:00:00.123456 #4242]  INFO -- trainer: step=100 loss=0.5234 lr=0.0003")
    assert (out["step"], figure(out, "loss")) == (100, 0.5234)


def test_hclog_json_names_its_logger_module_beside_its_level() -> None:
    out = read('{"@level":"error","@message":"failed to allocate device","@module":"nomad.client.device",'
               '"@timestamp":"2024-06-01T12:00:00.000000Z","error":"no free GPUs"}')
    assert (out["level"], out["logger"]) == ("ERROR", "nomad.client.device")
    # python-json-logger's "module" is the source file's module, not the logger
    assert read('{"levelname": "INFO", "module": "train", "message": "hello"}')["logger"] is None


def test_lerobot_s_metrics_tracker() -> None:
    # MetricsTracker.__str__: step and counts by format_big_number, "epch" the epochs, "ep" the episodes; "grdn"
    out = read("INFO 2025-03-01 14:10:00 ts/train.py:232 step:20K smpl:640K ep:1K epch:12.50 loss:0.061 grdn:3.210 "
               "lr:1.0e-04 updt_s:0.118 data_s:0.003")
    assert (out["step"], figure(out, "epoch"), figure(out, "grad_norm")) == (20000, 12.5, 3.21)
    assert (figure(out, "loss"), figure(out, "learning_rate")) == (0.061, 0.0001)
    out = read("INFO 2025-03-01 12:00:00 ts/train.py:232 step:200 smpl:6K ep:12 epch:0.04 loss:0.523 grdn:12.345")
    assert (out["step"], figure(out, "epoch")) == (200, 0.04)
    assert read("step:3M loss:0.5")["step"] == 3_000_000


def test_areal_s_commit_line_and_its_compact_time() -> None:
    # datefmt "%Y%m%d-%H:%M:%S" with the milliseconds after it; the global "Train step" is the run's step
    line = "20250601-13:20:10.456 StatsLogger INFO: Epoch 2/3 Step 7/100 Train step 107/300 done."
    p = parse_line(line, READ)
    assert (p.ts_ms, p.level, p.logger) == (utc(2025, 6, 1, 13, 20, 10, 456), "INFO", "StatsLogger")
    assert (p.step, p.max_steps, p.epoch) == (107, 300, 2)
    assert parse_line("20231023_095643|core.utils|loss 0.5", READ).ts_ms == utc(2023, 10, 23, 9, 56, 43)
    # without a run's step the epoch's step stays the step
    assert (parse_line("Epoch 2/3 Step 7/100 done.", READ).step, parse_line("Epoch 2/3 Step 7/100", READ).max_steps) \
        == (7, 100)


def test_codecarbon_and_neptune_heads() -> None:
    p = parse_line("[codecarbon WARNING @ 12:03:44] No CPU tracking mode found.", READ)
    assert (p.level, p.logger, p.ts_ms) == ("WARN", "codecarbon", utc(2024, 6, 1, 12, 3, 44))
    out = read("[codecarbon INFO @ 12:03:52] Energy consumed for all GPUs : 0.000008 kWh. Total GPU Power : 6.01 W")
    assert (out["level"], out["gpu_memory_mb"], out["gpu_utilization_pct"]) == ("INFO", None, None)
    p = parse_line("[neptune] [info   ] Neptune initialized. Open in the app: https://app.neptune.ai/t/p/e/P-20", READ)
    assert (p.level, p.logger) == ("INFO", "neptune")
    assert parse_line("[neptune] [warning] Neptune will be stopped in 30 seconds.", READ).level == "WARN"


def test_monolog_s_context_before_an_empty_extra() -> None:
    out = read('[2024-06-01T12:00:00.123456+00:00] training.INFO: epoch finished {"epoch":3,"loss":0.4321,'
               '"val_loss":0.5123} []')
    assert (figure(out, "epoch"), figure(out, "loss"), figure(out, "eval_loss")) == (3, 0.4321, 0.5123)
    assert out["timestamp"] == utc(2024, 6, 1, 12, 0, 0, 123)
    assert read("a list of losses [0.5, 0.4] []")["loss"] is None


def test_prime_rl_s_step_line_and_nanovlm_s_peak_memory() -> None:
    out = read("Step 250 | Time: 2.98s | Loss: 0.0873 | Grad. Norm: 0.1234 | LR: 3.00e-06 | Throughput: 15234 tokens/s"
               " | MFU: 41.2% | Peak Mem.: 61.3/79.1 GiB (77.5%) | Max Vio: 0.0312")
    assert (out["step"], figure(out, "loss"), figure(out, "grad_norm")) == (250, 0.0873, 0.1234)
    assert (figure(out, "learning_rate"), figure(out, "gpu_memory_mb")) == (3.0e-06, 61.3 * 1024)
    assert figure(out, "gpu_utilization_pct") is None  # the MFU is no utilisation
    out = read("Step: 40, Loss: 2.3456, Tokens/s: 11876, fw_bw: 0.412s, data: 0.013s, peak alloc: 23.45 GiB, "
               "peak reserved: 25.00 GiB")
    assert (out["step"], figure(out, "gpu_memory_mb")) == (40, 25600.0)


def test_java_util_logging_s_two_line_record() -> None:
    out = read("INFO: Epoch 3 finished, loss=0.4321", ["Jun 01, 2024 12:00:00 PM ai.example.train.Trainer runEpoch"])
    assert (out["epoch"], out["loss"], out["timestamp"]) == (3, 0.4321, utc(2024, 6, 1, 12, 0, 0))
    assert (out["level"], out["logger"]) == ("INFO", "ai.example.train.Trainer")
    out = read("SEVERE: CUDA device lost", ["Jun 01, 2024 1:05:00 PM ai.example.train.Trainer step"])
    assert (out["level"], out["timestamp"]) == ("ERROR", utc(2024, 6, 1, 13, 5, 0))
    out = read("WARNING: slow", ["Jun 01, 2024 12:30:15 AM ai.example.train.Checkpointer save"])
    assert (out["level"], out["timestamp"]) == ("WARN", utc(2024, 6, 1, 0, 30, 15))


def test_dev20_figures() -> None:
    s = score(load([str(PROBE_DEV20)]))
    assert s["right"] >= 139
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 37
