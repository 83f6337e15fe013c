"""Training and telemetry printers of dev17 of the field probe (tests/fixtures/fields_probe/dev17.yaml), one test per
rule, each line as its printer writes it; and the part's own figures.
"""

from __future__ import annotations

import calendar
import json
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV17 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev17.yaml"


def lifted(line: str):
    return parse_line(line, READ)


def figure(out: dict, name: str):
    return out.get(name) if name in out and name != "metrics" else (out.get("metrics") or {}).get(name)


def test_llamafactory_s_peak_vram_record() -> None:
    # LogCallback.on_log under RECORD_VRAM: vram_reserved = round(reserved / 1024**3, 2), in GiB
    record = {"current_steps": 10, "total_steps": 100, "loss": 1.2, "lr": 4.9e-05, "epoch": 0.1, "percentage": 10.0,
              "vram_allocated": 17.5, "vram_reserved": 19.25}
    p = lifted(json.dumps(record))
    assert p.metrics.get("gpu_memory_mb") == 19.25 * 1024
    assert "gpu_utilization_pct" not in p.metrics  # its percentage is the run's progress


def test_colossal_ai_s_cuda_memory_prints() -> None:
    # coordinator.print_on_master(f"Booster init max CUDA memory: {...:.2f} MB"), f"Max CUDA memory usage: {...} MB"
    assert lifted("Booster init max CUDA memory: 1834.52 MB").metrics.get("gpu_memory_mb") == 1834.52
    assert lifted("Max CUDA memory usage: 23456.78 MB").metrics.get("gpu_memory_mb") == 23456.78
    # ... and its resident memory beside it, no GPU's
    assert "gpu_memory_mb" not in lifted("Booster init max CPU memory: 45678.91 MB").metrics


def test_colossal_ai_s_test_epoch_head() -> None:
    # legacy LogMetricByEpochHook: f"[Epoch {cur_epoch} / Test]: {msg}" and "/ Train]"
    p = lifted("[12/03/24 10:11:12] INFO     colossalai - colossalai - INFO: [Epoch 2 / Test]: Loss = 1.9876 | "
               "Accuracy = 0.5432 | Throughput = 456.7 sample_per_sec")
    assert p.metrics.get("eval_loss") == 1.9876 and "loss" not in p.metrics
    p = lifted("[12/03/24 10:11:12] INFO     colossalai - colossalai - INFO: [Epoch 2 / Train]: Loss = 1.8765 | "
               "LR = 0.0001 | Throughput = 123.45 sample_per_sec")
    assert p.metrics.get("loss") == 1.8765 and "eval_loss" not in p.metrics


def test_nvidia_smi_query_memory_without_a_utilisation_beside_it() -> None:
    # nvidia-smi --query-gpu --format=csv: "[N/A]" where the GPU cannot say (utilization.gpu under MIG), and a query
    # whose only busy share is the memory's: memory.used is still the GPU's
    out = read("0, NVIDIA A100-SXM4-40GB, [N/A], 4925 MiB, 40960 MiB",
               ["index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]"])
    assert figure(out, "gpu_memory_mb") == 4925.0 and figure(out, "gpu_utilization_pct") is None
    out = read("1, 85 %, 30123 MiB", ["index, utilization.memory [%], memory.used [MiB]"])
    assert figure(out, "gpu_memory_mb") == 30123.0 and figure(out, "gpu_utilization_pct") is None


def test_a_memory_column_without_an_smi_s_units_stays_no_gpu_s() -> None:
    # a csv of hosts (no bracketed units: no SMI query) keeps its bare memory unread
    out = read("node01, 512, 12", ["host, memory.used, cpus"])
    assert figure(out, "gpu_memory_mb") is None


def test_dev17_figures() -> None:
    s = score(load([str(PROBE_DEV17)]))
    assert s["right"] >= 59
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 26
