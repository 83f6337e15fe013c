"""Printers of dev19 of the field probe (tests/fixtures/fields_probe/dev19.yaml), one test per rule, each line as its
printer writes it; and the part's own figures.
"""

from __future__ import annotations

import calendar
import json
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

PROBE_DEV19 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev19.yaml"
READ = calendar.timegm((2024, 6, 1, 13, 0, 0)) * 1000


def utc(*a) -> int:
    return calendar.timegm(a[:6]) * 1000 + (a[6] if len(a) > 6 else 0)


def figure(out: dict, name: str):
    return out.get(name) if name in out and name != "metrics" else (out.get("metrics") or {}).get(name)


def test_spark_s_log4j_date_puts_its_two_digit_year_first() -> None:
    # conf/log4j2.properties.template: "%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n"
    p = parse_line("24/06/13 12:03:10 WARN TaskSetManager: Lost task 3.0 in stage 2.0 (TID 11)", READ)
    assert (p.ts_ms, p.level, p.logger) == (utc(2024, 6, 13, 12, 3, 10), "WARN", "TaskSetManager")
    p = parse_line("24/06/01 12:00:00 INFO SparkContext: Running Spark version 3.5.1", READ)
    assert p.ts_ms == utc(2024, 6, 1, 12, 0, 0)
    # XLM's "%x" date behind its level stays month first
    assert parse_line("INFO - 10/04/19 14:41:25 - 0:00:12 - ============ Initialized", READ).ts_ms == utc(
        2019, 10, 4, 14, 41, 25)


def test_heads_with_a_time_of_day_and_a_level_apart() -> None:
    # logback's default pattern "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n"
    p = parse_line("12:00:06.789 [main] INFO  o.d.o.listeners.PerformanceListener - ETL: 0 ms; iteration 120;", READ)
    assert (p.level, p.logger) == ("INFO", "o.d.o.listeners.PerformanceListener")
    assert p.ts_ms == utc(2024, 6, 1, 12, 0, 6, 789)
    # Elixir's Logger console: "$time $metadata[$level] $message"
    assert parse_line("12:00:01.456 [error] GenServer Trainer.Worker terminating", READ).level == "ERROR"
    assert parse_line("12:00:02.789 request_id=F8xN2a0bQ1 [warning] Checkpoint upload slow", READ).level == "WARN"
    # PhysicsNeMo's PythonLogger: "[%(asctime)s - %(name)s - %(levelname)s] %(message)s", datefmt "%H:%M:%S"
    p = parse_line("[12:00:00 - main - INFO] Epoch Execution Time:  1.234e+01s, Time/Iter:  1.234e+02ms", READ)
    assert (p.level, p.logger, p.ts_ms) == ("INFO", "main", utc(2024, 6, 1, 12, 0, 0))
    assert parse_line("12:00:00.123 [main] done", READ).level is None  # no level word: no head
    # log4j's "[%-5level] - %msg%n" (DJL's examples) pads the level inside its brackets
    assert parse_line("[INFO ] - Training on: 4 GPUs.", READ).level == "INFO"


def test_env_logger_s_module_path_is_the_logger() -> None:
    p = parse_line("[2024-06-01T12:00:00Z INFO  burn_train::learner::epoch] Executing training step for epoch 1", READ)
    assert (p.level, p.logger, p.ts_ms) == ("INFO", "burn_train::learner::epoch", utc(2024, 6, 1, 12, 0, 0))
    assert parse_line("[2024-06-01T12:00:05Z WARN  my_trainer] Checkpoint exists", READ).logger == "my_trainer"


def test_sentences_of_gluonts_horovod_and_dl4j() -> None:
    out = read("INFO:gluonts.mx.trainer._base:Epoch[0] Learning rate is 0.001")
    assert (figure(out, "learning_rate"), out["epoch"]) == (0.001, 0.0)
    out = read("INFO:gluonts.mx.trainer._base:Epoch[0] Evaluation metric 'epoch_loss'=5.432100")
    assert figure(out, "loss") == 5.4321
    out = read("INFO:gluonts.mx.trainer._base:Epoch[3] Evaluation metric 'validation_epoch_loss'=5.612300")
    assert (figure(out, "eval_loss"), figure(out, "loss")) == (5.6123, None)
    bar = "100%|##########| 50/50 [00:03<00:00, 14.29it/s, epoch=1/5, avg_epoch_loss=5.43]"
    assert figure(read(bar), "loss") == 5.43
    out = read("Epoch 5: finished gradual learning rate warmup to 0.0125.")
    assert (figure(out, "learning_rate"), figure(out, "epoch")) == (0.0125, 5.0)
    out = read("12:00:00.123 [main] INFO  o.d.o.listeners.ScoreIterationListener - Score at iteration 100 is 0.4123")
    assert (figure(out, "loss"), out["step"]) == (0.4123, 100)
    out = read("12:00:06.789 [main] INFO  o.d.o.listeners.PerformanceListener - ETL: 0 ms; iteration 120; iteration "
               "time: 52 ms; samples/sec: 1230.769; batches/sec: 19.231; score: 0.3876;")
    assert (figure(out, "loss"), out["step"]) == (0.3876, 120)


def test_candle_s_training_loop_puts_its_epoch_first() -> None:
    # println!("{epoch:4} train loss {:8.5} test acc: {:5.2}%", ...)
    out = read("  10 train loss  0.05123 test acc: 98.02%")
    assert (figure(out, "loss"), figure(out, "epoch")) == (0.05123, 10.0)
    assert figure(read("  10 samples loaded, train loss unknown"), "epoch") is None


def test_djl_s_evaluator_names_and_its_validate_head() -> None:
    assert figure(read("[INFO ] - Train: Accuracy: 0.93, SoftmaxCrossEntropyLoss: 0.24"), "loss") == 0.24
    out = read("[INFO ] - Validate: Accuracy: 0.96, SoftmaxCrossEntropyLoss: 0.13")
    assert (figure(out, "eval_loss"), figure(out, "loss")) == (0.13, None)


def test_lingua_s_grad_is_the_gradients_norm_on_its_step_line() -> None:
    out = read("step: 1000  acc: 0  loss:  2.8765  grad: 3.45e-01  flops: 1.23e+15  wps: 4.56e+04  iter:  0.4512  "
               "data: 0.0012  lr: 3.00e-04  mem: 78%  pow: 612.345 W")
    assert (figure(out, "grad_norm"), figure(out, "learning_rate"), figure(out, "gpu_memory_mb")) == (0.345, 3e-4, None)
    assert figure(read("grad: 0.5"), "grad_norm") is None  # no step: whose it is is not known


def test_nvidia_gpu_exporter_s_ratios_and_bytes() -> None:
    uuid = '{uuid="df6e7a7c-7314-46f8-abc4-b88b36dcf3aa"}'
    assert abs(figure(read(f"nvidia_smi_utilization_gpu_ratio{uuid} 0.98"), "gpu_utilization_pct") - 98.0) < 1e-9
    assert figure(read(f"nvidia_smi_memory_used_bytes{uuid} 7.06740224e+08"), "gpu_memory_mb") == 674.0
    out = read(f"nvidia_smi_utilization_memory_ratio{uuid} 0.45")
    assert (figure(out, "gpu_utilization_pct"), figure(out, "gpu_memory_mb")) == (None, None)
    assert figure(read(f"nvidia_smi_memory_total_bytes{uuid} 8.589934592e+09"), "gpu_memory_mb") is None


def test_rocm_smi_s_csv_names_its_device_column() -> None:
    # rocm_smi.py --csv: "device," then the shown fields with their units in parentheses, a row per card
    assert figure(read("card0,98", ["device,GPU use (%)"]), "gpu_utilization_pct") == 98.0
    out = read("card0,98,75", ["device,GPU use (%),GPU Memory Allocated (VRAM%)"])
    assert (figure(out, "gpu_utilization_pct"), figure(out, "gpu_memory_mb")) == (98.0, None)
    out = read("card1,68702699520,51539607552", ["device,VRAM Total Memory (B),VRAM Total Used Memory (B)"])
    assert figure(out, "gpu_memory_mb") == 49152.0
    # a csv header of words needs its device column or two units: prose with a comma is none
    assert figure(read("card0,98", ["Hello,GPU use (%)"]), "gpu_utilization_pct") is None


def test_dvclive_s_tab_separated_metric_files() -> None:
    # dvclive/plots/metric.py: csv.DictWriter(delimiter="\t"), "timestamp" (epoch ms), "step", the metric's name
    out = read("1717243200123\t100\t0.4321", ["timestamp\tstep\tloss"])
    assert (figure(out, "loss"), out["step"], out["timestamp"]) == (0.4321, 100, utc(2024, 6, 1, 12, 0, 0, 123))


def test_telegraf_s_line_protocol() -> None:
    # plugins/inputs/nvidia_smi as the influx serializer writes it: memory in MiB, utilisation in %, the time in ns
    line = (r"nvidia_smi,compute_mode=Default,host=gpu-node-1,index=0,name=NVIDIA\ H100\ 80GB\ HBM3,pstate=P0 "
            "fan_speed=0i,memory_free=12345i,memory_total=81559i,memory_used=69214i,temperature_gpu=61i,"
            "utilization_gpu=97i,utilization_memory=43i 1717243200000000000")
    out = read(line)
    assert (figure(out, "gpu_utilization_pct"), figure(out, "gpu_memory_mb")) == (97.0, 69214.0)
    assert out["timestamp"] == utc(2024, 6, 1, 12, 0, 0)
    out = read('trainer,host=gpu-node-1 step=100i,loss=0.4321,phase="warm up" 1717243200123000000')
    assert (out["step"], figure(out, "loss"), out["timestamp"]) == (100, 0.4321, utc(2024, 6, 1, 12, 0, 0, 123))
    assert figure(read("Saved step=100 loss=0.5 to disk 1717243200"), "loss") == 0.5  # prose stays prose


def test_an_envelope_s_level_for_a_line_that_names_none() -> None:
    # journalctl -o json: PRIORITY, the syslog severity as text; the kernel logs NVRM's Xid lines at 4 (warning)
    out = read('{"__REALTIME_TIMESTAMP":"1717243260000000","PRIORITY":"4","SYSLOG_IDENTIFIER":"kernel",'
               '"_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."}')
    assert (out["level"], out["timestamp"]) == ("WARN", utc(2024, 6, 1, 12, 1, 0))
    # the line's own level wins over its envelope's
    out = read('{"__REALTIME_TIMESTAMP":"1717243260000000","PRIORITY":"6","SYSLOG_IDENTIFIER":"python3",'
               '"MESSAGE":"2024-06-01 12:01:00,000 - trainer - ERROR - Rank 3 failed"}')
    assert out["level"] == "ERROR"
    # GELF's level, a syslog severity, but for Docker's gelf driver, which derives it from the stream (stderr: 3)
    out = read('{"version":"1.1","host":"gpu-node-1","short_message":"Checkpoint saved","timestamp":1717243200.5,'
               '"level":4}')
    assert out["level"] == "WARN"
    out = read('{"version":"1.1","host":"h","short_message":"100%|####| 10/10","timestamp":1717243200.5,"level":3,'
               '"_container_id":"3f2a9c1b7e4d"}')
    assert out["level"] is None


def test_gelf_s_additional_fields_beside_the_line() -> None:
    # Fluent Bit's gelf output writes a parsed record's keys as "_"-prefixed additional fields
    out = read('{"version":"1.1","host":"gpu-node-1","short_message":"train step","timestamp":1717243200.123,"level":6,'
               '"_step":100,"_loss":0.4321,"_lr":0.0003}')
    assert (out["step"], figure(out, "loss"), figure(out, "learning_rate")) == (100, 0.4321, 0.0003)
    # the line's own figures win; Docker's container fields are none
    inner = json.dumps({"step": 200, "loss": 0.3})
    out = read(json.dumps({"version": "1.1", "host": "h", "short_message": inner, "timestamp": 1717243210.0,
                           "level": 6, "_loss": 9.9, "_container_id": "3f2a", "_created": "2024-06-01T11:00:00.0Z"}))
    assert (out["step"], figure(out, "loss")) == (200, 0.3)


def test_dotnet_loggers_name_their_logger() -> None:
    # Microsoft.Extensions.Logging's JsonConsoleFormatter "Category"; Serilog's "SourceContext"
    out = read('{"EventId":7,"LogLevel":"Warning","Category":"Trainer.Checkpointing","Message":"Checkpoint upload took '
               '95 s","State":{"Message":"Checkpoint upload took 95 s","Seconds":95}}')
    assert (out["level"], out["logger"]) == ("WARN", "Trainer.Checkpointing")
    assert read('{"level": "info", "message": "sample", "category": "cat", "count": 3}')["logger"] is None
    out = read('{"@t":"2024-06-01T12:00:06.5000000Z","@mt":"Unhandled exception","@l":"Error",'
               '"SourceContext":"Trainer.Loop"}')
    assert (out["level"], out["logger"], out["timestamp"]) == ("ERROR", "Trainer.Loop", utc(2024, 6, 1, 12, 0, 6, 500))


def test_dev19_figures() -> None:
    s = score(load([str(PROBE_DEV19)]))
    assert s["right"] >= 144
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 17
