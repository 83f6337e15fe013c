"""Corpus-wide checks against the counts stated in corpus/README.md and training/SOURCES.md."""

from __future__ import annotations

import calendar
import csv
import json
from pathlib import Path

import fastavro
import pytest
from corpus_helpers import LOGHUB, TRAINING, events, only_events, only_metrics
from fastavro.validation import validate

from streams.assemble.decode import final_redraw
from streams.assemble.parse import norm_level
from streams.assemble.pipeline import parse_files

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
LOG_EVENT = fastavro.parse_schema(json.loads((SCHEMAS / "log_event.avsc").read_text()))
METRIC = fastavro.parse_schema(json.loads((SCHEMAS / "metric_point.avsc").read_text()))
SYSTEMS = ["Android", "Apache", "BGL", "HDFS", "Hadoop", "HealthApp", "Linux", "Mac", "OpenSSH", "OpenStack",
           "Proxifier", "Windows"]
PRODUCER_2016 = calendar.timegm((2016, 6, 1, 0, 0, 0)) * 1000  # year for formats that lack one


@pytest.mark.parametrize("path", sorted(TRAINING.glob("*.log")), ids=lambda p: p.name)
def test_every_output_is_schema_valid(path):
    for out in parse_files([path], default_ts_ms=1_700_000_000_000):
        validate(out, LOG_EVENT if "message" in out else METRIC, raise_errors=True)


def test_exact_counts_from_source_notes():
    # "~10 single-line init messages + 1 traceback": the file has 22 lines, the traceback 12, so exactly 11
    assert len(events("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log")) == 11
    # "43 log4j events (lines starting with a yyyy-MM-dd timestamp)"
    assert len(events("java_apex_hadoop_log4j_stacktraces_wrong_fs.log")) == 43
    assert len(events("fixture_fluentbit_multiline_regex001_java.log")) == 3
    assert len(events("fixture_fluentbit_tail_multiline_json_wrapped_java.log")) == 1
    assert len(events("fixture_loki_drain_journald_mixed_formats.log")) == 200
    assert len(events("fixture_loki_drain_kafka.log")) == 120
    assert len(events("fixture_loki_drain_kubernetes_klog.log")) == 150
    assert len(events("bigscience_tr11-176B_defaultN_prefixed_c10_CUDAError_frames.log")) == 1
    # 31 records: 16 DEBUG records + 7 panics made of 15 records
    assert len(events("sglang_router_docker_json_file_rust_panics.log")) == 23
    # "1 exception chain (2 tracebacks joined by 'During handling...') + 1 metrics line"
    assert len(events("vllm_async_timeout_chained_then_metrics_line.log")) == 2
    # "1 iteration line, 1 validation block (3 lines), 6 PULSE lines"; the iteration line is a step metric
    evs = events("bigscience_tr11-176B_eval_hang_iteration_and_pulse.log")
    assert len(only_metrics(evs)) == 1 and [e["line_count"] for e in only_events(evs)] == [3, 1, 1, 1, 1, 1, 1]
    # "1 truncated traceback, then 4 prefixed lines (2 empty-prefix lines + 2 NCCL WARN)": NCCL writes
    # each WARN as "\n<header> NCCL WARN ...", so under Ray's per-line prefix each pair is one write
    evs = events("verl_fsdp_ray_nccl_warn_cuda_failure_700.log")
    assert [e["line_count"] for e in evs] == [43, 2, 2]
    assert [e["error_class"] for e in evs[1:]] == ["nccl_warn", "nccl_warn"]


def test_step_metric_counts():
    # "200 JSON records = 100 logical steps x 2 writers": every record is a step-metric line
    assert len(only_metrics(events("ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_head.log"))) == 200
    # "100 JSON records (pairs of duplicates + 1 final summary line)"
    tail = events("ms_swift_logging_jsonl_internvl2_duplicated_by_2_ranks_tail.log")
    assert len(tail) == 100 and len(only_metrics(tail)) == 99
    # "19 step dicts + 1 train_runtime dict" (the latter carries train_loss)
    assert len(only_metrics(events("ms_swift_sft_metax_2026.log"))) == 20
    # "19 train-step dicts, 2 eval dicts, 1 train_runtime dict"
    m = only_metrics(events("ms_swift_sft_qwen2_7b_self_cognition_2024.log"))
    assert len(m) == 22 and sum(1 for x in m if x["phase"] == "eval") == 2
    # "20 loss dicts" (one printed right after a tqdm bar with no newline)
    assert len(only_metrics(events("hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log"))) == 20


def test_approximate_counts_in_tight_ranges():
    # "~300 events; spliced lines present": spliced lines are followed by an empty line (no event), and
    # lines 1-10 are one Megatron stage print ("stage=15 layers=8" + indented layer lines), so 300 - 3 - 9
    n = len(events("bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log"))
    blank = sum(1 for ln in (TRAINING / "bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log").read_text()
                .split("\n")[:300] if not ln.strip())
    assert blank == 3 and n == 300 - blank - 9
    # "~40 logical events; 2-line warnings; 20 loss dicts". Counted from the file: 60 lines, minus the
    # 20 lines holding a loss dict (metric points), minus 1 warning continuation ("  warnings.warn(",
    # line 16), minus the second line of wandb's update notice (one termlog call, its lines prefixed
    # "wandb: ", line 3), minus lines whose final \r state is empty; every tqdm line is its own event.
    f = "hf_trainer_gemma2_lora_head_wandb_tqdm_cr.log"
    raw = (TRAINING / f).read_bytes().decode().split("\n")[:60]
    assert raw[15].strip() == "warnings.warn("
    empty = sum(1 for ln in raw if not final_redraw(ln).strip())
    assert raw[2].startswith("wandb:  $ pip install")
    assert len(only_events(events(f))) == 60 - 20 - 1 - 1 - empty
    # "~25 single-line/2-line records, 1 launcher traceback + box" per run, 2 runs
    evs = events("accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log")
    assert 2 * 20 <= len(evs) <= 2 * 33
    assert sum(1 for e in evs if e["multiline_kind"] == "childfailed_box") == 2


@pytest.mark.parametrize("system", SYSTEMS)
def test_loghub_2000_events_each(system):
    path = LOGHUB / system / f"{system}_2k.log"
    if system != "Proxifier":  # Proxifier's upstream file has LF endings; the others keep CRLF
        assert b"\r\n" in path.read_bytes()
    evs = list(parse_files([path], default_ts_ms=PRODUCER_2016))
    assert len(evs) == 2000
    assert not any("\r" in e["message"] for e in evs)


def _csv(system):
    with (LOGHUB / system / f"{system}_2k.log_structured.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _utc(y, mo, d, hms, frac="0"):
    h, mi, s = (int(x) for x in hms.split(":"))
    return calendar.timegm((y, mo, d, h, mi, s)) * 1000 + int((frac + "00")[:3])


_MON = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}


def _expected(system, row):  # noqa: PLR0911 - one branch per loghub system
    """(timestamp ms, level) the structured CSV implies; None where the CSV has no such column."""
    if system == "Android":
        mo, d = row["Date"].split("-")
        hms, frac = row["Time"].split(".")
        return _utc(2016, int(mo), int(d), hms, frac), norm_level(row["Level"])
    if system == "Apache":
        _, mon, d, hms, y = row["Time"].split()
        return _utc(int(y), _MON[mon], int(d), hms), norm_level(row["Level"])
    if system == "HDFS":
        dt, t = row["Date"].zfill(6), row["Time"].zfill(6)
        return _utc(2000 + int(dt[:2]), int(dt[2:4]), int(dt[4:]), f"{t[:2]}:{t[2:4]}:{t[4:]}"), row["Level"]
    if system == "Hadoop":
        y, mo, d = (int(x) for x in row["Date"].split("-"))
        hms, frac = row["Time"].split(",")
        return _utc(y, mo, d, hms, frac), norm_level(row["Level"])
    if system == "OpenStack":
        y, mo, d = (int(x) for x in row["Date"].split("-"))
        hms, frac = row["Time"].split(".")
        return _utc(y, mo, d, hms, frac), norm_level(row["Level"])
    if system == "Windows":
        y, mo, d = (int(x) for x in row["Date"].split("-"))
        return _utc(y, mo, d, row["Time"]), norm_level(row["Level"])
    if system in ("Linux", "Mac"):
        return _utc(2016, _MON[row["Month"]], int(row["Date"]), row["Time"]), None
    if system == "OpenSSH":
        return _utc(2016, _MON[row["Date"]], int(row["Day"]), row["Time"]), None
    raise AssertionError(system)


# Mapped formats: timestamps for all nine, levels where the CSV has a real level column
# (Linux's "Level" column holds the host name). BGL, HealthApp and Proxifier are counted only.
@pytest.mark.parametrize("system", ["Android", "Apache", "HDFS", "Hadoop", "OpenStack", "Windows", "Linux", "Mac",
                                    "OpenSSH"])
def test_loghub_timestamp_and_level_match_structured_csv(system):
    evs = list(parse_files([LOGHUB / system / f"{system}_2k.log"], default_ts_ms=PRODUCER_2016))
    rows = _csv(system)
    assert len(rows) == len(evs) == 2000
    bad = []
    for row, ev in zip(rows, evs, strict=True):
        ts, level = _expected(system, row)
        if ev["timestamp"] != ts or (level is not None and ev["level"] != level):
            bad.append((row["LineId"], ts, level, ev["timestamp"], ev["level"]))
    assert bad == []
