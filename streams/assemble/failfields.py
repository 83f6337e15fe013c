"""Figures of the failure messages GPU jobs print, as attributes of the event that carries them.

An out-of-memory message says how much was asked for and how much the GPU had; a collective's timeout says
which operation, which rank and how long; a driver's Xid says which error on which GPU. Each rule follows one
printer: a literal that must be in the message (the cheap test every event pays), a pattern, and what each
of its groups becomes. Memory is in MB (MiB, as ``gpu_memory_mb``: a GiB is 1024 MB), times in ms, counts and
ids as integers, names as printed. No typed field of the contract holds them: they are ``attributes``, the
first rule to name a key wins, and a key the line's own record named is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_UNIT_MB = {"bytes": 1 / 1048576, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1048576.0}
# c10's format_size: "N bytes" up to 1024, else two decimals and KiB, MiB or GiB.
_SIZE = r"\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB|TiB)"


def _mb_text(v: float) -> str:
    return repr(round(v, 3))


def _size(text: str) -> str:
    num, unit = text.split(" ")
    return _mb_text(float(num) * _UNIT_MB[unit])


def _bytes(text: str) -> str:
    return _mb_text(int(text) / 1048576)


def _int(text: str) -> str:
    return str(int(text))


def _text(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class Rule:
    literal: str  # in every message the rule reads: most events pay only this test
    pattern: re.Pattern[str]
    groups: dict[str, tuple[str, Callable[[str], str]]]  # group -> (attribute, its text from the group's)
    # attribute -> groups whose MB add up to it (a total the printer gives in parts)
    sums: dict[str, tuple[str, ...]] | None = None


RULES: tuple[Rule, ...] = (
    # PyTorch 2.1+: c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc, its OutOfMemoryError text
    # ("total capacty" in 2.1, "capacity" after; "Process <pid> has ..." per process NVML lists; ROCm builds say
    # "HIP out of memory"). What PyTorch reserved is printed in two parts: allocated, and reserved but unallocated.
    Rule("Tried to allocate", re.compile(
        rf"Tried to allocate (?P<req>{_SIZE})\.\s+GPU (?P<gpu>\d+) has a total capac(?:i|)ty of (?P<total>{_SIZE})"
        rf" of which (?P<free>{_SIZE}) is free\.(?:\s+Process \d+ has {_SIZE} memory in use\.)*"
        rf"(?:\s+Including non-PyTorch memory, this process has (?P<proc>{_SIZE}) memory in use\.)?"
        rf"(?:\s+Of the allocated memory (?P<alloc>{_SIZE}) is allocated by PyTorch, and (?P<unalloc>{_SIZE}) is"
        rf" reserved by PyTorch but unallocated\.)?"),
        {"req": ("oom_requested_mb", _size), "gpu": ("gpu_index", _int), "total": ("gpu_total_mb", _size),
         "free": ("gpu_free_mb", _size), "proc": ("process_memory_mb", _size), "alloc": ("torch_allocated_mb", _size)},
        {"torch_reserved_mb": ("alloc", "unalloc")}),
    # PyTorch 1.0-2.0: the same function's earlier text, "(GPU n; X total capacity; X already allocated; X free;
    # X reserved in total by PyTorch)" (1.0-1.4 said "X cached" for what it reserved).
    Rule("Tried to allocate", re.compile(
        rf"Tried to allocate (?P<req>{_SIZE}) \(GPU (?P<gpu>\d+); (?P<total>{_SIZE}) total capacity;"
        rf" (?P<alloc>{_SIZE}) already allocated;(?: (?P<free>{_SIZE}) free;)?"
        rf" (?P<reserved>{_SIZE}) (?:reserved in total by PyTorch|cached)"),
        {"req": ("oom_requested_mb", _size), "gpu": ("gpu_index", _int), "total": ("gpu_total_mb", _size),
         "alloc": ("torch_allocated_mb", _size), "free": ("gpu_free_mb", _size),
         "reserved": ("torch_reserved_mb", _size)}),
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp WorkNCCL::checkTimeout: logPrefix() ("[Rank n] ", "[PG <uid>
    # Rank n] ", "[PG ID <id> PG GUID <guid>(<desc>) Rank n] ": the rank in that group), then the WorkNCCL repr
    # (operator<<: SeqNum= from 1.11, NumelIn=/NumelOut= from 2.1, TensorShape=[...] in 1.10-1.11) and the time it ran.
    # The spans between are bounded: a long line full of brackets costs a short scan at each one.
    Rule("Watchdog caught collective operation timeout", re.compile(
        r"(?:\[(?:PG (?:ID )?(?P<pg>\d+)[^\]\n]{0,80}? )?Rank (?P<rank>\d+)\] )?Watchdog caught collective operation"
        r" timeout: WorkNCCL\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)"
        r"(?:, NumelIn=(?P<numel_in>\d+))?(?:, NumelOut=(?P<numel_out>\d+))?[^)\n]{0,200}?"
        r", Timeout\(ms\)=(?P<timeout>\d+)\)"
        r" ran for (?P<ran>\d+) milliseconds"),
        {"rank": ("pg_rank", _int), "pg": ("pg_id", _text), "seq": ("nccl_seq_num", _int),
         "op": ("nccl_op_type", _text), "numel_in": ("nccl_numel_in", _int), "numel_out": ("nccl_numel_out", _int),
         "timeout": ("nccl_timeout_ms", _int), "ran": ("nccl_elapsed_ms", _int)}),
    # The NVIDIA driver's error log (open-gpu-kernel-modules, nvErrorLog_va) through the kernel log: "NVRM: Xid
    # (PCI:dddd:bb:dd): <xid>, " and, from the 4xx drivers on, "pid=<pid>, name=<comm>, " ('<unknown>' outside a
    # process). The process's name is `command`, as nvidia-smi pmon's column.
    Rule("Xid (", re.compile(
        r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (?P<xid>\d+),"
        r"(?: pid=(?:(?P<pid>\d+)|'?<unknown>'?), name=(?:<unknown>|(?P<comm>[^,\s]+)),)?"),
        {"bus": ("pci_bus_id", _text), "xid": ("xid", _int), "pid": ("pid", _int), "comm": ("command", _text)}),
    # XLA (jaxlib's XlaRuntimeError "RESOURCE_EXHAUSTED: ...", the PjRt client's "Execution of replica n failed:"):
    # the allocator's ResourceExhausted("Out of memory while trying to allocate %d bytes.").
    Rule("Out of memory while trying to allocate", re.compile(
        r"Out of memory while trying to allocate (?P<req>\d+) bytes"),
        {"req": ("oom_requested_mb", _bytes)}),
    # TensorFlow's op kernels: errors::ResourceExhausted("OOM when allocating tensor with shape", shape, " and type ",
    # dtype, " on ", device, " by allocator ", name).
    Rule("OOM when allocating tensor", re.compile(
        r"OOM when allocating tensor with shape ?\[(?P<shape>[\d, ]*)\] and type (?P<dtype>\w+)"
        r"(?: on \S*?device:GPU:(?P<gpu>\d+))?"),
        {"shape": ("oom_tensor_shape", _text), "dtype": ("oom_tensor_dtype", _text), "gpu": ("gpu_index", _int)}),
    # TensorFlow's tensorflow/core/common_runtime/bfc_allocator.cc BFCAllocator::AllocateRawInternal: "Allocator
    # (GPU_n_bfc) ran out of memory trying to allocate <human> (rounded to <bytes>)requested by op <op>".
    Rule("ran out of memory trying to allocate", re.compile(
        r"Allocator \(GPU_(?P<gpu>\d+)_bfc\) ran out of memory trying to allocate \S+ \(rounded to (?P<req>\d+)\)"),
        {"gpu": ("gpu_index", _int), "req": ("oom_requested_mb", _bytes)}),
)


def failure_fields(msg: str, rules: tuple[Rule, ...] = RULES) -> dict[str, str]:
    """The attributes the failure messages in ``msg`` give (empty for most events: one ``in`` per rule)."""
    out: dict[str, str] = {}
    for rule in rules:
        if rule.literal not in msg:
            continue
        m = rule.pattern.search(msg)
        if m is None:
            continue
        for group, (name, conv) in rule.groups.items():
            text = m.group(group)
            if text is not None and name not in out:
                out[name] = conv(text)
        for name, parts in (rule.sums or {}).items():
            texts = [m.group(g) for g in parts]
            if name not in out and all(texts):
                out[name] = _mb_text(sum(float(_size(t)) for t in texts if t))
    return out
