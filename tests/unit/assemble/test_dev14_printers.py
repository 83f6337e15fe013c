"""Structured records and GPU telemetry of the printers dev14 of the field probe holds
(tests/fixtures/fields_probe/dev14.yaml), one test per rule, each line as its printer writes it; and the part's
own figures."""

from __future__ import annotations

import calendar
import tempfile
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, parse_one, score

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV14 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev14.yaml"
# What dev14 still misses, left alone: an OTLP logRecord alone on its line (timeUnixNano, attributes as a key/value
# list), whose step and loss stay unread.

LOGBACK = ('{"@timestamp":"2024-06-01T12:00:00.000+00:00","@version":1,"message":"epoch 3 done",'
           '"logger_name":"ai.djl.training.listener.LoggingTrainingListener","thread_name":"main","level":"INFO",'
           '"level_value":20000,"epoch":3,"train_loss":0.412,"validate_loss":0.455}')


def lifted(line: str):
    return parse_line(line, READ)


def test_a_logstash_logback_record_is_the_application_s_own() -> None:
    # logstash-logback-encoder writes Logstash's "@version" in every record: its "level_value" says an encoder wrote it
    with tempfile.TemporaryDirectory() as d:
        out = parse_one(LOGBACK.replace(',"epoch":3,"train_loss":0.412,"validate_loss":0.455', ""), Path(d))
    assert out is not None and out["level"] == "INFO" and out["logger"].endswith("LoggingTrainingListener")


def test_logback_s_level_number() -> None:
    p = lifted('{"@timestamp":"2024-06-01T12:00:00.000Z","message":"slow step","level_value":30000}')
    assert p.level == "WARN" and "level_value" not in p.metrics


def test_a_record_s_own_bookkeeping_is_no_metric() -> None:
    # bunyan: pid and the format version v; Logstash's @version; loguru's record ids
    p = lifted('{"name":"trainer","hostname":"gpu-node-3","pid":5120,"level":30,"msg":"step done","step":1500,'
               '"loss":2.031,"time":"2024-06-01T12:00:00.250Z","v":0}')
    assert p.metrics == {"loss": 2.031} and p.attributes["pid"] == "5120"
    p = lifted(LOGBACK)
    assert p.metrics == {"loss": 0.412, "validate_loss": 0.455} and p.level == "INFO"
    p = lifted('{"record": {"extra": {"step": 100, "loss": 2.5}, "line": 88, "process": {"id": 4242}, '
               '"thread": {"id": 140735}, "time": {"timestamp": 1717243200.25}}}')
    assert p.metrics == {"loss": 2.5} and p.step == 100


def test_a_log15_logfmt_line() -> None:
    # log15 and Grafana start a logfmt line with "t=" and name the level "lvl"
    p = lifted('t=2024-06-01T12:00:00+0000 lvl=info msg="HTTP Server Listen" logger=http.server address=[::]:3000')
    assert p.level == "INFO" and p.fmt == "logfmt"


def test_logfmt_s_bare_numbers_are_numbers() -> None:
    # slog's TextHandler prints every figure bare: an unknown one is still a metric of the step line
    p = lifted('time=2024-06-01T12:00:00.000Z level=WARN msg="eval finished" eval_loss=1.111 eval_accuracy=0.731 '
               'step=5000')
    assert p.metrics["eval_accuracy"] == 0.731 and p.step == 5000
    # a leading zero is an identifier's text
    p = lifted('time=2024-06-01T12:00:00.000Z level=info msg=step step=5 loss=1.5 job=0042')
    assert "job" not in p.metrics and p.attributes["job"] == "0042"


def test_dev14_figures() -> None:
    s = score(load([str(PROBE_DEV14)]))
    assert s["right"] >= 138
    assert s["absent"]["violated"] == 0


def test_zerolog_s_console_head() -> None:
    # zerolog's ConsoleWriter: "15:04:05" (or time.Kitchen), a three-letter level, the caller and ">"
    assert lifted('16:21:46 ERR basic.go:113 > test ERROR with Field error="fake error" k1=123').level == "ERROR"
    assert lifted("16:21:48 INF basic.go:133 > test TimeDiff cost=2009.8041").level == "INFO"
    assert lifted("3:04PM WRN loss is nan, skipping").level == "WARN"
    # a time and a word that is no level of zerolog's
    assert lifted("16:21:48 ABC basic.go:133 > text").level is None


def test_a_two_column_nvidia_smi_query() -> None:
    # nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,nounits: the header names both units
    with tempfile.TemporaryDirectory() as d:
        out = parse_one("97, 71234", Path(d), ["utilization.gpu [%], memory.used [MiB]"])
        assert out is not None and out["metrics"] == {"gpu_utilization_pct": 97.0, "gpu_memory_mb": 71234.0}
        # two bare names are no header
        out = parse_one("97, 71234", Path(d), ["utilization, memory"])
        assert out is not None and "metrics" not in out


def test_zap_s_one_letter_keys() -> None:
    # zap's development encoder config: "T", "L", "C", "M"
    p = lifted('{"L":"WARN","T":"2024-06-01T12:00:00.000Z","C":"trainer/loop.go:150","M":"loss is nan, skipping",'
               '"step":77}')
    assert p.level == "WARN" and p.message == "loss is nan, skipping" and p.step == 77
    # a figure under "m" stays a figure
    assert lifted('{"m": 0.9, "step": 3, "loss": 1.0}').metrics["m"] == 0.9
