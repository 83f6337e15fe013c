"""The figures of GPU failure messages (streams/assemble/failfields.py): one test per rule, each message as its
printer writes it; each rule is needed for its message; the event carries them as attributes; and the figures of
the probe part that holds them (tests/fixtures/fields_probe/dev10.yaml)."""

from __future__ import annotations

import calendar
import io
from pathlib import Path

import fastavro
import pytest

from streams.assemble.failfields import RULES, failure_fields
from streams.assemble.pipeline import parse_files
from streams.contracts import parsed_schema
from tests.fields_probe import load, score

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV10 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev10.yaml"

OOM_2X = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of "
          "14.57 GiB of which 1.58 GiB is free. Process 2493055 has 12.02 GiB memory in use. Including non-PyTorch "
          "memory, this process has 966.00 MiB memory in use. Of the allocated memory 734.07 MiB is allocated by "
          "PyTorch, and 33.93 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
          "try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
OOM_1X = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 2; 15.78 GiB total capacity; 14.21 GiB "
          "already allocated; 3.19 MiB free; 14.71 GiB reserved in total by PyTorch) If reserved memory is >> "
          "allocated memory try setting max_split_size_mb to avoid fragmentation.")
WATCHDOG = ("[rank3]:[E1202 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [PG ID 2 PG GUID 5(tp) Rank 3] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1048576, "
            "NumelOut=1048576, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.")
XID = "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
XLA = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
       "17179869184 bytes.")
TF = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
      "shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc")
BFC = ("2025-12-02 10:00:00.123456: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_1_bfc) ran "
       "out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul")

# Each message with what its rule lifts, in the order of RULES.
CASES = [
    (OOM_2X, {"oom_requested_mb": "1996.8", "gpu_index": "0", "gpu_total_mb": "14919.68", "gpu_free_mb": "1617.92",
              "process_memory_mb": "966.0", "torch_allocated_mb": "734.07", "torch_reserved_mb": "768.0"}),
    (OOM_1X, {"oom_requested_mb": "20.0", "gpu_index": "2", "gpu_total_mb": "16158.72",
              "torch_allocated_mb": "14551.04", "gpu_free_mb": "3.19", "torch_reserved_mb": "15063.04"}),
    (WATCHDOG, {"pg_rank": "3", "pg_id": "2", "nccl_seq_num": "1234", "nccl_op_type": "ALLREDUCE",
                "nccl_numel_in": "1048576", "nccl_numel_out": "1048576", "nccl_timeout_ms": "600000",
                "nccl_elapsed_ms": "600021"}),
    (XID, {"pci_bus_id": "0000:3b:00", "xid": "79", "pid": "1234", "command": "python"}),
    (XLA, {"oom_requested_mb": "16384.0"}),
    (TF, {"oom_tensor_shape": "64,256,56,56", "oom_tensor_dtype": "float", "gpu_index": "1"}),
    (BFC, {"gpu_index": "1", "oom_requested_mb": "2048.0"}),
]


@pytest.mark.parametrize(("msg", "want"), CASES)
def test_each_printer_gives_its_figures(msg: str, want: dict[str, str]) -> None:
    assert failure_fields(msg) == want


@pytest.mark.parametrize("i", range(len(RULES)))
def test_each_rule_is_needed_for_its_message(i: int) -> None:
    msg, want = CASES[i]
    assert failure_fields(msg, RULES[:i] + RULES[i + 1:]) != want


def test_oom_sizes_in_every_unit_format_size_writes() -> None:
    # c10's format_size: "N bytes" up to 1024, then KiB; 2.1 spelt "capacty"; ROCm builds say HIP
    got = failure_fields("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 512.00 KiB. GPU 3 has a total "
                         "capacty of 23.68 GiB of which 0 bytes is free.")
    assert got == {"oom_requested_mb": "0.5", "gpu_index": "3", "gpu_total_mb": "24248.32", "gpu_free_mb": "0.0"}
    # 1.0-1.4 called what it reserved "cached"
    got = failure_fields("RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 1; 10.92 GiB total "
                         "capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)")
    assert got["torch_reserved_mb"] == "4.68" and got["gpu_index"] == "1"


def test_watchdog_reprs_of_older_releases() -> None:
    # 1.8-1.9: no SeqNum; 1.10-1.11: a TensorShape; "[Rank n]" alone as the prefix
    got = failure_fields("[E ProcessGroupNCCL.cpp:587] [Rank 0] Watchdog caught collective operation timeout: "
                         "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1803474 milliseconds before "
                         "timing out.")
    assert got == {"pg_rank": "0", "nccl_op_type": "ALLREDUCE", "nccl_timeout_ms": "1800000",
                   "nccl_elapsed_ms": "1803474"}
    got = failure_fields("[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
                         "TensorShape=[25557032], Timeout(ms)=1800000) ran for 1806941 milliseconds before timing out.")
    assert got["nccl_seq_num"] == "5" and got["nccl_elapsed_ms"] == "1806941"


def test_a_rank_prefix_without_a_timeout_names_no_rank() -> None:
    assert failure_fields("[rank7]:[E ProcessGroupNCCL.cpp:577] [Rank 7] Some NCCL operations have failed or timed "
                          "out. Due to the asynchronous nature of CUDA kernels, ...") == {}


def test_xid_outside_a_process_names_none() -> None:
    got = failure_fields("[Tue Dec  2 10:00:00 2025] NVRM: Xid (PCI:0000:b1:00): 79, pid='<unknown>', name=<unknown>, "
                         "GPU has fallen off the bus.")
    assert got == {"pci_bus_id": "0000:b1:00", "xid": "79"}
    # drivers before the 4xx series wrote no process
    assert failure_fields("NVRM: Xid (PCI:0000:02:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): "
                          "Misaligned Address") == {"pci_bus_id": "0000:02:00", "xid": "13"}


def test_an_oom_without_figures_gives_none() -> None:
    assert failure_fields("RuntimeError: CUDA error: out of memory") == {}


def test_the_event_carries_them_and_the_lines_own_keys_win(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("Traceback (most recent call last):\n"
                    '  File "/workspace/train.py", line 212, in <module>\n'
                    "    loss.backward()\n"
                    f"{OOM_2X}\n"
                    '{"level": "error", "message": "' + XID + '", "pid": 99}\n', encoding="utf-8")
    tb, rec = [o for o in parse_files([path], default_ts_ms=READ) if "error_class" in o]
    assert tb["error_class"] == "cuda_oom" and tb["line_count"] == 4
    assert tb["attributes"]["oom_requested_mb"] == "1996.8" and tb["attributes"]["torch_reserved_mb"] == "768.0"
    assert rec["attributes"]["xid"] == "79" and rec["attributes"]["pid"] == "99"
    for event in (tb, rec):  # the contract's attributes are text: the figures go through as they are
        fastavro.schemaless_writer(io.BytesIO(), parsed_schema("log_event"), event)


def test_probe_dev10_figures() -> None:
    s = score(load([str(PROBE_DEV10)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] == 133
