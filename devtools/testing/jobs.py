"""Whole multi-rank jobs built from real logs: the test corpus of the job-incident tests.

A :class:`Job` is what a failed job's nodes wrote, one source per node (or per rank, for jobs that
log to one file per rank), each line with the time its agent read it, and the answer: which rank
failed first and how. :func:`arranged_jobs` builds jobs around a failure from the corpus;
:func:`real_jobs` takes real multi-rank logs as they are. :func:`raw_batches` turns a job into the
``sluice.v1.RawBatch`` records an agent would send.

What is verbatim and what is arranged:

- **Verbatim** (read from ``corpus/`` at build time, never copied here): the text of every line. The
  root failure is a corpus file as the failing rank printed it (the bigscience CUDA OOM at a barrier,
  the Megatron-DeepSpeed DataLoader bus error, a PyTorch DataLoader segfault). The collateral is what
  real ranks printed: ProcessGroupNCCL's watchdog group and ``terminate`` block from
  ``training/sglang_nccl_watchdog_timeout_hardwrapped.log`` (its hard wraps included), Megatron's
  ``c10::DistBackendError`` block from ``wild/dev/megatron_terminate_distbackenderror_reduce_scatter_watchdog.log``,
  torch elastic's teardown (``Sending process ... closing signal SIGTERM``, ``failed (exitcode: N)
  local_rank: N``, the launcher traceback and the ``ChildFailedError`` box) from
  ``training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log``.
- **Replicated and arranged**: which ranks print a block and on which node; the rank numbers inside
  the collateral (``[rank6]``, ``Rank 6]``, ``local_rank: 4``, ``rank : 4``), the pids, the box's
  exit code and its ``traceback :`` line (``Signal 9 (SIGKILL) received by PID N`` for a kill,
  torch elastic's ``To enable traceback see: ...`` for an exit code, as ``errors/__init__.py`` writes
  them); the per-rank prefix that the framework would add (torch's distributed excepthook puts
  ``[rankN]: `` before every traceback line, ``torchrun --tee`` puts ``[defaultN]:`` (the local
  rank) before every line; Megatron-DeepSpeed under ``srun -o %t`` writes one file per rank with
  none); the times: the root at ``t0``, the launcher's teardown a fraction of a second later, the
  other ranks' watchdog a whole collective timeout (the ``ran for N milliseconds`` the template
  states) after their collective began, each rank with its own jitter; the time inside a line is
  rewritten to its arranged time in the line's own format (c10's ``E207 01:29:36.730311765``,
  DeepSpeed's ``[2021-08-12 08:19:28,225]``, glog's ``E0325 20:57:27.620000``); and each node's clock
  offset, applied to every time that node writes and carried in its ``sluice.io/clock-offset-ms``
  label.

The real logs (:func:`real_jobs`) keep their lines and their own times; a line without one is read at
the time of the line before it. Their sources are one file each, as the logs were collected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from streams.rawbatch import source_key

JOB_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: the unit tests' t0
CLOCK_LABEL = "sluice.io/clock-offset-ms"
TIMEOUT_TEMPLATE = "training/sglang_nccl_watchdog_timeout_hardwrapped.log"
MEGATRON_TERMINATE = "wild/dev/megatron_terminate_distbackenderror_reduce_scatter_watchdog.log"
TEARDOWN_TEMPLATE = "training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"
OOM = "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
BUS_ERROR = "training/bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log"
SEGFAULT = "wild/dev/pytorch_dataloader_worker_segfault_chained_traceback.log"


@dataclass(frozen=True)
class Expect:
    """The known first failure: its kind (None: unknown), rank, node, or process prefix."""

    root_class: str | None
    rank: int | None = None
    node: str | None = None
    process: str | None = None
    signal: str | None = None


@dataclass
class SourceLog:
    """One file or stream of a job: where it was written and its lines with their read times."""

    host: str
    file: str
    lines: list[tuple[int, str]] = field(default_factory=list)  # (agent read time, node clock; text)
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Job:
    name: str
    task_id: str
    sources: list[SourceLog]
    expect: list[Expect]  # one per job failure, in order

    def last_error_ms(self) -> int:
        return max(ts for s in self.sources for ts, _ in s.lines)


# -- reading the corpus --------------------------------------------------------------------------------

def corpus_lines(corpus: Path, rel: str) -> list[str]:
    return (corpus / rel).read_text(encoding="utf-8", errors="replace").splitlines()


def block(lines: list[str], start: str, end: str | None = None) -> list[str]:
    """Lines from the first containing ``start`` through the first after it containing ``end`` (else
    to the end of the file)."""
    i = next(n for n, line in enumerate(lines) if start in line)
    if end is None:
        return lines[i:]
    j = next(n for n in range(i, len(lines)) if end in lines[n])
    return lines[i:j + 1]


# -- times in lines ------------------------------------------------------------------------------------

_C10 = re.compile(r"(?<=\[[IWEF])(\d{3,4}) (\d\d:\d\d:\d\d)\.(\d{6,9})")  # c10: E207 01:29:36.730311765
_GLOG = re.compile(r"^([IWEF])(\d{4}) (\d\d:\d\d:\d\d)\.(\d{6})")  # glog: E0325 20:57:27.620000
_DEEPSPEED = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")


def restamp(text: str, ts_ms: int) -> str:
    """The line with its own time (in the formats above) set to ``ts_ms``, written the same way."""
    t = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    m = _C10.search(text)
    if m:
        frac = f"{t.microsecond:06d}".ljust(len(m.group(3)), "0")
        return f"{text[:m.start()]}{t.month}{t.day:02d} {t:%H:%M:%S}.{frac}{text[m.end():]}"
    m = _GLOG.match(text)
    if m:
        return f"{m.group(1)}{t:%m%d %H:%M:%S}.{t.microsecond:06d}{text[m.end():]}"
    m = _DEEPSPEED.search(text)
    if m:
        return f"{text[:m.start()]}[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}]{text[m.end():]}"
    return text


# -- per-rank prefixes -----------------------------------------------------------------------------------

def excepthook_prefixed(lines: list[str], rank: int) -> list[str]:
    """What torch's distributed excepthook writes: ``[rankN]: `` before every line but blank ones."""
    return [f"[rank{rank}]: {line}" if line else "" for line in lines]


def tee_prefixed(lines: list[str], local_rank: int) -> list[str]:
    """What ``torchrun --tee`` writes: ``[<role><local_rank>]:`` before every line."""
    return [f"[default{local_rank}]:{line}" for line in lines]


def renumbered(lines: list[str], old: int, new: int) -> list[str]:
    """A rank's block as another rank would print it: ``[rankN]``, ``Rank N]``."""
    rx = re.compile(rf"(\[rank|Rank ){old}\]")
    return [rx.sub(rf"\g<1>{new}]", line) for line in lines]


# -- arranging a job -------------------------------------------------------------------------------------

class JobBuilder:
    """Places blocks of lines on nodes at true times; a node's clock offset shifts what it writes."""

    def __init__(self, name: str, task_id: str, nodes: int, ranks_per_node: int, t0_ms: int,
                 clock_offsets_ms: dict[int, int] | None = None, per_rank_files: bool = False) -> None:
        self.name, self.task_id, self.t0 = name, task_id, t0_ms
        self.ranks_per_node = ranks_per_node
        self.offsets = clock_offsets_ms or {}
        self.per_rank_files = per_rank_files
        self.sources: dict[str, SourceLog] = {}
        self.world = nodes * ranks_per_node
        self.nodes = nodes

    def node_of(self, rank: int) -> int:
        return rank // self.ranks_per_node

    def _source(self, node: int, rank: int | None) -> SourceLog:
        host = f"{self.name}-node-{node}"
        file = f"/logs/rank-{rank}.log" if self.per_rank_files and rank is not None else "/logs/train.log"
        src = self.sources.get(f"{host}{file}")
        if src is None:
            labels = {"task_id": self.task_id}
            if self.per_rank_files and rank is not None:
                labels["rank"] = str(rank)  # srun -o %t: the file is the rank's, the agent says so
            if node in self.offsets:
                labels[CLOCK_LABEL] = str(self.offsets[node])
            src = self.sources[f"{host}{file}"] = SourceLog(host, file, [], labels)
        return src

    def place(self, node: int, lines: list[str], at_ms: int, rank: int | None = None, gap_ms: int = 1) -> None:
        """Write ``lines`` on ``node`` from true time ``at_ms``, ``gap_ms`` apart, times in them restamped."""
        src = self._source(node, rank)
        clock = self.offsets.get(node, 0)
        for i, text in enumerate(lines):
            ts = at_ms + i * gap_ms + clock
            src.lines.append((ts, restamp(text, ts)))

    def job(self, expect: list[Expect]) -> Job:
        for src in self.sources.values():
            src.lines.sort(key=lambda tl: tl[0])  # stable: one block's lines stay in order
        return Job(self.name, self.task_id, list(self.sources.values()), expect)


def _teardown(corpus: Path, local_rank: int, rank: int, exitcode: int, pids: list[int], host: str) -> list[str]:
    """torch elastic tearing down a node after ``local_rank`` exited with ``exitcode``: SIGTERM to the
    others, the failure line, the launcher traceback and the ChildFailedError box."""
    lines = corpus_lines(corpus, TEARDOWN_TEMPLATE)
    sending = block(lines, "closing signal SIGTERM")[0]
    failed = block(lines, "failed (exitcode: ")[0]
    tail = block(lines, "Traceback (most recent call last)", "traceback : ")
    tail.append(lines[lines.index(tail[-1]) + 1])  # the box's closing rule
    pid = pids[local_rank]
    out = [re.sub(r"process \d+", f"process {p}", sending) for lr, p in enumerate(pids) if lr != local_rank]
    out.append(re.sub(r"exitcode: -?\d+\) local_rank: \d+ \(pid: \d+\)",
                      f"exitcode: {exitcode}) local_rank: {local_rank} (pid: {pid})", failed))
    signal = {-9: "SIGKILL", -6: "SIGABRT", -11: "SIGSEGV", -15: "SIGTERM"}.get(exitcode)
    why = f"Signal {-exitcode} ({signal}) received by PID {pid}" if signal else \
        "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    for line in tail:
        text = re.sub(r"(rank\s*: )\d+ \(local_rank: \d+\)", rf"\g<1>{rank} (local_rank: {local_rank})", line)
        text = re.sub(r"(exitcode\s*: )-?\d+ \(pid: \d+\)", rf"\g<1>{exitcode} (pid: {pid})", text)
        text = re.sub(r"(host\s*: )\S+", rf"\g<1>{host}", text)
        out.append(re.sub(r"(traceback : ).*", rf"\g<1>{why}", text))
    return out


def _pids(node: int, n: int) -> list[int]:
    return [208581 + 1000 * node + i for i in range(n)]


def _timeouts(b: JobBuilder, corpus: Path, ranks: list[int], began_ms: int, jitter_ms: int = 37) -> None:
    """Each of ``ranks`` blocked in a collective from about ``began_ms``: its watchdog fires the
    template's ``ran for`` later, its group and terminate block (sglang's rank 6, renumbered)."""
    group = block(corpus_lines(corpus, TIMEOUT_TEMPLATE), "[rank6]:[E")
    ran_for = int(re.search(r"ran for (\d+) milliseconds", "\n".join(group)).group(1))  # type: ignore[union-attr]
    for r in ranks:
        b.place(b.node_of(r), renumbered(group, 6, r), began_ms + ran_for + r * jitter_ms, r)


def _aborted_nodes(b: JobBuilder, corpus: Path, nodes: list[int], at_ms: int) -> None:
    """A node whose ranks all died of SIGABRT after their watchdog: torch elastic reports local rank 0."""
    for node in nodes:
        host = f"{b.name}-node-{node}"
        b.place(node, _teardown(corpus, 0, node * b.ranks_per_node, -6, _pids(node, b.ranks_per_node), host),
                at_ms + 400 + node * 11)


def oom_job(corpus: Path, t0_ms: int, rank: int = 5, skew: bool = False) -> Job:
    """2 nodes x 4 ranks; ``rank`` hits the CUDA OOM (torch's excepthook prefixes); its launcher tears its
    node down; the other node's ranks time out in their allreduce. With ``skew``, rank 2 on node 0 hits
    the same OOM 2 s later while node 0's clock runs 30 s behind (and says so): only the corrected
    times name ``rank``."""
    name = "oom-skewed" if skew else "oom"
    b = JobBuilder(name, f"{name}-job", 2, 4, t0_ms, {0: -30_000} if skew else None)
    oom = corpus_lines(corpus, OOM)
    node = b.node_of(rank)
    b.place(node, excepthook_prefixed(oom, rank), t0_ms - len(oom) + 1, rank)
    if skew:
        b.place(b.node_of(2), excepthook_prefixed(block(oom, "Traceback"), 2), t0_ms + 2000, 2)
    local = rank % b.ranks_per_node
    b.place(node, _teardown(corpus, local, rank, 1, _pids(node, 4), f"{name}-node-{node}"), t0_ms + 350)
    others = [r for r in range(b.world) if b.node_of(r) != node and not (skew and r == 2)]
    _timeouts(b, corpus, others, t0_ms - 120)
    _aborted_nodes(b, corpus, [n for n in range(b.nodes) if n != node], t0_ms + 600_100 + 8 * 37)
    return b.job([Expect("cuda_oom", rank, f"{name}-node-{node}")])


def timeouts_everywhere_job(corpus: Path, t0_ms: int) -> Job:
    """8 ranks blocked in the same allreduce, all timing out; nothing else: the root is unknown."""
    b = JobBuilder("hang", "hang-job", 2, 4, t0_ms)
    _timeouts(b, corpus, list(range(8)), t0_ms)
    _aborted_nodes(b, corpus, [0, 1], t0_ms + 600_100 + 8 * 37)
    return b.job([Expect(None)])


def killed_job(corpus: Path, t0_ms: int, rank: int = 3) -> Job:
    """``rank`` is killed by SIGKILL (the kernel's OOM killer: the rank prints nothing); torch elastic on
    its node reports it and tears the node down; the other node's ranks time out."""
    b = JobBuilder("sigkill", "sigkill-job", 2, 4, t0_ms)
    node = b.node_of(rank)
    b.place(node, _teardown(corpus, rank % 4, rank, -9, _pids(node, 4), f"sigkill-node-{node}"), t0_ms + 90)
    _timeouts(b, corpus, [r for r in range(8) if b.node_of(r) != node], t0_ms - 500)
    _aborted_nodes(b, corpus, [1 - node], t0_ms + 600_100 + 8 * 37)
    return b.job([Expect("killed", rank, f"sigkill-node-{node}", signal="SIGKILL")])


def bus_error_job(corpus: Path, t0_ms: int, rank: int = 2) -> Job:
    """Megatron-DeepSpeed writing one file per rank (``srun -o %t``): ``rank``'s DataLoader worker dies of
    a bus error (the bigscience traceback, no prefix); the other ranks' watchdog aborts the process
    (Megatron's terminate block, renumbered) a collective timeout later."""
    b = JobBuilder("bus", "bus-job", 2, 2, t0_ms, per_rank_files=True)
    bus = corpus_lines(corpus, BUS_ERROR)
    b.place(b.node_of(rank), bus, t0_ms, rank)
    terminate = corpus_lines(corpus, MEGATRON_TERMINATE)
    ran_for = int(re.search(r"ran for (\d+) milliseconds", "\n".join(terminate)).group(1))  # type: ignore[union-attr]
    for r in range(4):
        if r != rank:
            b.place(b.node_of(r), renumbered(terminate, 6, r), t0_ms - 2000 + ran_for + 13 * r, r)
    return b.job([Expect("dataloader_worker", rank, f"bus-node-{b.node_of(rank)}")])


def segfault_job(corpus: Path, t0_ms: int, rank: int = 6) -> Job:
    """torchrun --tee on 2 nodes x 4: ``rank``'s DataLoader worker segfaults (the PyTorch traceback with
    ``[defaultN]:``, the local rank, on every line); its node is torn down, the other node times out.
    The incident names the node and the local rank, which is what the prefix says."""
    b = JobBuilder("segv", "segv-job", 2, 4, t0_ms)
    node, local = b.node_of(rank), rank % 4
    b.place(node, tee_prefixed(corpus_lines(corpus, SEGFAULT), local), t0_ms, rank)
    b.place(node, _teardown(corpus, local, rank, 1, _pids(node, 4), f"segv-node-{node}"), t0_ms + 700)
    _timeouts(b, corpus, [r for r in range(8) if b.node_of(r) != node], t0_ms - 50)
    return b.job([Expect("dataloader_worker", local, f"segv-node-{node}")])


def arranged_jobs(corpus: Path, t0_ms: int = JOB_EPOCH_MS) -> list[Job]:
    """The corpus's OOM, NCCL-timeout, dataloader and SIGKILL cases as whole jobs."""
    return [oom_job(corpus, t0_ms), oom_job(corpus, t0_ms, skew=True), timeouts_everywhere_job(corpus, t0_ms),
            killed_job(corpus, t0_ms), bus_error_job(corpus, t0_ms), segfault_job(corpus, t0_ms)]


# -- real multi-rank logs as they are --------------------------------------------------------------------

REAL_LOGS: dict[str, tuple[str, list[Expect]]] = {
    # Two `accelerate launch` runs on 6 GPUs, each killed: torch elastic names local rank 4, then 3.
    "accelerate-x2": (TEARDOWN_TEMPLATE, [Expect("killed", 4, signal="SIGKILL"),
                                          Expect("killed", 3, signal="SIGKILL")]),
    # vLLM's forked workers cannot initialise CUDA (the first at 22:24:11); ranks 0 and 1 fail a second later.
    "llamafactory-fork": ("training/llamafactory_vllm_rank0_prefixed_traceback_fork_error.log",
                          [Expect("exception", process="VllmWorkerProcess pid=3624105")]),
    # An illegal memory access seen by two vLLM workers and rank 3's NCCL watchdog in the same second.
    "vllm-illegal-memory": ("training/vllm_worker_nccl_illegal_memory_watchdog_chained.log",
                            [Expect("cuda_error", process="VllmWorkerProcess pid=351")]),
    # torchrun (glog head) reports local rank 5 killed by SIGKILL (its box, cut short, names no rank).
    "torchrun-sigkill": ("wild/dev/torchrun_glog_e_line_then_py312_caret_traceback_childfailederror_box.log",
                         [Expect("killed", process="local_rank 5", signal="SIGKILL")]),
    # torch elastic (legacy logging) reports local rank 1 dead of SIGSEGV.
    "elastic-segv": ("wild/dev/torch_elastic_legacy_logging_hardwrapped_info_then_torchrun_traceback.log",
                     [Expect("killed", process="local_rank 1", signal="SIGSEGV")]),
    # Two ranks' DataLoader bus errors interleaved on one stdout without prefixes: no rank is printed.
    "bus-interleaved": (BUS_ERROR, [Expect("dataloader_worker")]),
    # Rank 6's watchdog timeouts and nothing else.
    "sglang-timeout": (TIMEOUT_TEMPLATE, [Expect(None)]),
}


def real_job(corpus: Path, name: str) -> Job:
    """A real log as one source, each line read at the time the assemble core gives its event (its own
    time, else the time before it), as an agent tailing the file live would have read it."""
    from streams.assemble.pipeline import parse_files

    rel, expect = REAL_LOGS[name]
    path = corpus / rel
    sentinel = JOB_EPOCH_MS + 1
    at_line: dict[int, int] = {}
    for event in parse_files([path], default_ts_ms=sentinel):
        for n in range(event["raw"]["first_offset"], event["raw"]["last_offset"] + 1):
            at_line[n] = event["timestamp"]
    last = min((ts for ts in at_line.values() if ts != sentinel), default=JOB_EPOCH_MS)
    lines: list[tuple[int, str]] = []
    for n, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        ts = at_line.get(n, sentinel)
        last = last if ts == sentinel else ts
        lines.append((last, text))
    return Job(name, f"{name}-job", [SourceLog(f"{name}-host", f"/logs/{Path(rel).name}", lines,
                                               {"task_id": f"{name}-job"})], expect)


def real_jobs(corpus: Path) -> list[Job]:
    return [real_job(corpus, name) for name in REAL_LOGS]


# -- what an agent sends ---------------------------------------------------------------------------------

def raw_batches(job: Job, project: str, batch_lines: int = 50) -> list[tuple[bytes, dict[str, Any], int]]:
    """(key, RawBatch dict, record timestamp) for every batch of every source, in each source's order.
    The record's timestamp is its first line's read time (the node's clock)."""
    out = []
    for src in job.sources:
        source = {"host": src.host, "namespace": None, "pod": None, "container": None, "file": src.file,
                  "stream": "stdout", "node_role": "trainer", "rank": None}
        labels = {**src.labels, "project": project}
        offset = 0
        for i in range(0, len(src.lines), batch_lines):
            chunk = src.lines[i:i + batch_lines]
            lines = []
            for ts, text in chunk:
                lines.append({"line": text, "file_offset": offset, "ts": ts})
                offset += len(text.encode()) + 1
            out.append((source_key(source), {"source": source, "labels": labels, "lines": lines,
                                              "sent_ts": chunk[-1][0]}, chunk[0][0]))
    return out


def job_events(jobs: list[Job], project: str = "default") -> list[dict[str, Any]]:
    """The LogEvents the assemble core makes of the jobs' batches, sources interleaved by read time as
    one raw partition would mix them (offline: the Avro wire format with a local schema lookup)."""
    import io
    import struct

    import fastavro

    from streams.assemble.pipeline import Assembler, RawRecord
    from streams.contracts import parsed_schema

    schema = parsed_schema("raw_batch")
    records = sorted(((ts, key, batch) for job in jobs for key, batch, ts in raw_batches(job, project)),
                     key=lambda r: r[0])
    asm = Assembler(schema_lookup=lambda _id: schema)
    outputs = []
    for offset, (ts, key, batch) in enumerate(records):
        buf = io.BytesIO()
        buf.write(struct.pack(">bI", 0, 1))
        fastavro.schemaless_writer(buf, schema, batch)
        outputs += asm.feed(RawRecord("raw", 0, offset, buf.getvalue(), key, ts))
        outputs += asm.flush_idle(ts)
    outputs += asm.flush_all()
    return [o.value for o in outputs if o.kind == "event"]
