"""Which error of a failed job is its cause, and which are consequences: the kinds table.

Every error event of a task gets one *kind* from :data:`KINDS` (the first rule that matches), and
each kind has a role:

- ``root``: the rank failed by itself (an allocator failure, a CUDA fault, its own exception, a
  signal that killed it). The earliest root-role error of a job is its first failure.
- ``collateral``: what the other ranks print once a peer is gone: PyTorch's NCCL watchdog timing
  out on a collective the dead rank never joined, the process group aborting, the store or the
  NCCL transport losing its peer, SIGABRT from ``std::terminate`` after the watchdog throws,
  SIGTERM from the launcher tearing the job down.
- ``report``: a launcher's account of a child that died (torchrun's ``failed (exitcode: -9)`` line
  and ``ChildFailedError`` box, DeepSpeed's ``exits with return code``, ``mp.spawn``'s
  ``ProcessExitedException``, a ``CalledProcessError`` from a wrapper). A report is counted with the
  collateral; it names the failed rank only when no rank's own error is in the logs (a process
  killed by SIGKILL cannot print anything: the launcher is its only witness).

The rules follow what the printers print: torch's ``ProcessGroupNCCL`` (``[PG ... Rank N]`` log
prefix, ``Watchdog caught collective operation timeout: WorkNCCL(...) ran for N milliseconds``,
``Some NCCL operations have failed or timed out``, ``Heartbeat monitor timed out``), torch elastic
(``torch/distributed/elastic/multiprocessing/api.py`` and ``errors/__init__.py``: the box's
``Root Cause (first observed failure)`` section with ``rank : N (local_rank: M)``), DeepSpeed's
launcher (``{cmd} exits with return code = {code}``, ``--local_rank=N`` in ``cmd``), NCCL's result
strings (``ncclRemoteError``: a remote process exited or the network failed).

Pure: :func:`failure_sign` reads one LogEvent dict (its ``error_class``, ``error_type``, ``signal``,
``level`` and message) and returns the kind with what the message says about the rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROOT, COLLATERAL, REPORT = "root", "collateral", "report"
HEADLINE_CHARS = 200

# Signals that end a process without its own say: the kernel's OOM killer or an operator (SIGKILL),
# a crash in native code (SIGSEGV, SIGBUS: also a full /dev/shm under a DataLoader, SIGILL, SIGFPE).
ROOT_SIGNALS = frozenset(("SIGKILL", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"))
# SIGABRT is how a rank dies after std::terminate (the NCCL watchdog rethrowing a timeout, a C++
# exception escaping): the error printed before it is the cause. SIGTERM/SIGINT/SIGHUP are sent to
# a job being torn down (the launcher after a child failed, the scheduler after a pod failed).
COLLATERAL_SIGNALS = frozenset(("SIGABRT", "SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE"))
_SIGNUM = {"9": "SIGKILL", "11": "SIGSEGV", "7": "SIGBUS", "4": "SIGILL", "8": "SIGFPE", "6": "SIGABRT",
           "15": "SIGTERM", "2": "SIGINT", "1": "SIGHUP", "13": "SIGPIPE"}


@dataclass(frozen=True)
class Kind:
    """One row of the table: a kind matches when every condition it sets holds."""

    name: str
    role: str
    why: str
    classes: frozenset[str] = frozenset()  # error_class is one of these (empty: any, even none)
    text: re.Pattern[str] | None = None  # searched in the message
    types: re.Pattern[str] | None = None  # searched in error_type
    signals: frozenset[str] = frozenset()  # the event's signal is one of these
    unless: re.Pattern[str] | None = None  # not when the message says this
    # Also an ERROR line with no error class: only texts that torch or a launcher print, never a
    # generic phrase ("Connection refused" from a metrics client is no job failure).
    unclassified: bool = False

    def matches(self, error_class: str | None, error_type: str | None, signal: str | None, message: str) -> bool:
        if error_class is None and signal is None and not self.unclassified:
            return False
        if self.classes and error_class not in self.classes:
            return False
        if self.signals and signal not in self.signals:
            return False
        if self.types is not None and not (error_type and self.types.search(error_type)):
            return False
        if self.text is not None and self.text.search(message) is None:
            return False
        return self.unless is None or self.unless.search(message) is None


_ERRORS = frozenset(("python_exception", "java_exception", "go_panic", "assertion", "signal"))

# First match wins: reports before everything (a box quotes its child's error), hardware and memory
# faults before the collateral texts that can quote them, the generic exception last.
KINDS: tuple[Kind, ...] = (
    Kind("childfailed_box", REPORT,
         "torchrun's summary of the children that failed on one node; it names the first failure *it* saw "
         "(its own node's), which on a multi-node job is often a victim, not the culprit",
         text=re.compile(r"Root Cause \(first observed failure\)|ChildFailedError"), unclassified=True),
    Kind("launcher_exit", REPORT,
         "a launcher saw a child exit non-zero (torch elastic, DeepSpeed, mp.spawn, mpirun, a subprocess "
         "wrapper): the child's own log says why, unless a signal killed it silently",
         text=re.compile(r"failed \(exitcode: -?\d+\) local_rank: \d+|exits with return code = -?\d+|"
                         r"ProcessExitedException|ProcessRaisedException|-- Process \d+ terminated with|"
                         r"process rank \d+ with PID \d+ on node \S+ exited on signal|"
                         r"CalledProcessError: Command .{0,2000}?(?:returned non-zero exit status|died with <Signals)",
                         re.S), unclassified=True),
    Kind("cuda_oom", ROOT,
         "the CUDA allocator failed on this rank; no other rank's failure makes a rank run out of memory",
         classes=frozenset(("cuda_oom",))),
    Kind("dataloader_worker", ROOT,
         "a DataLoader worker process of this rank died (Bus error: /dev/shm too small; Killed: host memory); "
         "the rank's own input pipeline, not a peer",
         text=re.compile(r"DataLoader worker \(pid(?:\(s\))? [\d, ]+\) (?:is killed by signal|exited unexpectedly)")),
    Kind("cuda_error", ROOT,
         "a kernel or CUDA call failed on this rank (illegal memory access, device-side assert, ECC, a lost "
         "device); the error is sticky on the context, even when the NCCL watchdog is the one to notice it",
         classes=frozenset(("cuda_error",))),
    Kind("nccl_timeout", COLLATERAL,
         "ProcessGroupNCCL's watchdog gave up on a collective after its timeout: this rank waited for a peer "
         "that never joined; the late or dead peer is elsewhere",
         text=re.compile(r"Watchdog caught collective operation timeout|collective operation timeout|"
                         r"detected by watchdog at work|NCCL.{0,80}timed? ?out|Timeout\(ms\)=\d+", re.S),
         unclassified=True),
    Kind("nccl_timeout", COLLATERAL, "a timeout class the texts above missed is still a timeout",
         classes=frozenset(("nccl_timeout",))),
    Kind("watchdog_hang", COLLATERAL,
         "ProcessGroupNCCL's heartbeat monitor found the watchdog itself stuck (a hang, usually after a peer "
         "stopped); it then dumps debug info and terminates the process",
         text=re.compile(r"Heartbeat monitor timed out|watchdog got stuck|preparing to dump debug info"),
         unclassified=True),
    Kind("peer_lost", COLLATERAL,
         "NCCL or the rendezvous store lost the other end of a connection: ncclRemoteError, a peer that "
         "closed or reset its socket; the process that went away is the one that failed",
         text=re.compile(r"remote process exit|ncclRemoteError|Connection (?:reset|closed) by (?:remote )?peer|"
                         r"Broken pipe|(?:recvBytes|recvValue|sendBytes) failed|Got completion from peer|"
                         r"Connection refused")),
    Kind("pg_aborted", COLLATERAL,
         "the process group or its NCCL communicator was aborted, the teardown that follows another failure",
         text=re.compile(r"communicator (?:was )?aborted|Some NCCL operations have failed or timed out|"
                         r"process group (?:has been |was )?aborted|ProcessGroupNCCL is aborted|"
                         r"watchdog thread terminated with exception|taking the entire process down", re.I),
         unless=re.compile(r"unhandled cuda error|ncclUnhandledCudaError|ncclInternalError|ncclInvalid\w+|"
                           r"ncclSystemError|CUDA error", re.I),
         unclassified=True),
    Kind("rendezvous", COLLATERAL,
         "the ranks could not meet at the store or rendezvous: a peer missing from a barrier, the store's "
         "host gone, the agent closing the rendezvous after a failure",
         text=re.compile(r"DistStoreError|Rendezvous\w*Error|store based barrier|Timed out initializing process "
                         r"group|Socket Timeout|DistNetworkError")),
    Kind("aborted", COLLATERAL,
         "SIGABRT follows std::terminate (the watchdog rethrowing, a C++ exception escaping): the error "
         "printed before it is the cause",
         signals=frozenset(("SIGABRT",))),
    Kind("terminated", COLLATERAL,
         "SIGTERM, SIGINT or SIGHUP: the launcher or the scheduler stopping a process because of something "
         "else (a failed peer, a preemption, a user)",
         signals=frozenset(("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE"))),
    Kind("terminated", COLLATERAL,
         "torch elastic's agent or a worker received a stop signal (SignalException, KeyboardInterrupt)",
         types=re.compile(r"SignalException$|KeyboardInterrupt$")),
    Kind("nccl_error", ROOT,
         "NCCL failed on this rank itself (unhandled CUDA error, system or internal error, invalid usage); a "
         "peer's death shows as peer_lost instead",
         classes=frozenset(("nccl_error",))),
    Kind("killed", ROOT,
         "the process was killed or crashed in native code: SIGKILL (kernel OOM killer, an operator), SIGSEGV, "
         "SIGBUS, SIGILL, SIGFPE",
         signals=ROOT_SIGNALS),
    Kind("assertion", ROOT, "an assertion failed in this rank's code or a library it called",
         classes=frozenset(("assertion",))),
    Kind("exception", ROOT, "an exception this rank raised itself (Python, Java, a Go or Rust panic)",
         classes=_ERRORS),
)

# Root-role evidence that is not an error event: findings of the metric and GPU rules, kept for a
# while before a job's first error and weighed with it (``streams.watch.firstfail``).
PRECURSOR_KINDS = {
    "gpu_xid": "the GPU driver reported an XID error on this GPU (a fault, a fallen-off bus, an ECC event)",
    "gpu_ecc": "uncorrectable ECC errors appeared on this GPU",
    "loss_nan": "the loss of this rank became NaN or infinite",
}

# Among root-role errors close in time (log times are often whole seconds), the one earlier here is
# named: the hardware fault over the CUDA error it causes, the OOM over the exception that carries it,
# a rank's own exception over the NCCL error its peers then hit (invalid usage, a failed call).
PRECEDENCE = ("gpu_xid", "gpu_ecc", "cuda_oom", "cuda_error", "dataloader_worker", "killed", "loss_nan",
              "assertion", "exception", "nccl_error")

ROLES: dict[str, str] = {**{k.name: k.role for k in KINDS}, **dict.fromkeys(PRECURSOR_KINDS, ROOT)}

# Events that are not failures even when classified: NCCL WARN lines (retries, transport chatter)
# and warnings that a traceback-shaped message carries.
_NOT_FAILURES = frozenset(("nccl_warn",))
_WARNING_TYPE = re.compile(r"Warning$")
_FAILURE_LEVELS = frozenset(("ERROR", "FATAL", "CRITICAL"))

# What a message says about where it came from.
_PG_RANK = re.compile(r"\[(?:PG [^\]\n]{0,80}?)?Rank (\d+)\]")
_PROC = re.compile(r"^\((\w+) pid=(\d+)")
_BOX_ROOT = re.compile(r"Root Cause \(first observed failure\):\s*\n(?:.*\n){0,2}?[^\n]*?\bhost\s*:\s*(\S+)\s*\n"
                       r"[^\n]*?\brank\s*:\s*(\d+)")  # rank : 5 (local_rank: 1): the first, the job's
_REPORTED_RANK = re.compile(r"failed \(exitcode: -?\d+\) local_rank: (\d+)|--local_rank=(\d+)|"
                            r"process (\d+) terminated with|-- Process (\d+) terminated with|"
                            r"process rank (\d+) with PID")
_REPORTED_SIGNAL = re.compile(r"exitcode\s*:\s*-(\d+)|exits with return code = -(\d+)|exited on signal (\d+)|"
                              r"terminated with signal (SIG[A-Z]+)|died with <Signals\.(SIG[A-Z]+)|Signal (\d+) \(")
_WAITED = re.compile(r"ran for (\d+) milliseconds")
_BOX_TITLE = "Root Cause (first observed failure)"  # a box without a level or class is still a box
_GATE = re.compile(r"rror|xception|ailed|imeout|imed out|bort|Signal|signal|exit|Killed|Rank \d|Heartbeat")


@dataclass(frozen=True, slots=True)
class FailureSign:
    """What one error event says about a job's failure."""

    kind: str
    role: str
    rank: int | None = None  # the rank the message names (a report's failed child, NCCL's [Rank N])
    host: str | None = None  # the host a report names (torchrun's box)
    proc: str | None = None  # a process when there is no rank: "VllmWorkerProcess pid=350", "local_rank 3"
    signal: str | None = None  # for a report: the signal that ended the child
    waited_ms: int | None = None  # for a timeout: how long the collective had waited
    line: str | None = None  # the line that matched a text rule: the best headline


def _line_at(message: str, at: int) -> str:
    start = message.rfind("\n", 0, at) + 1
    end = message.find("\n", at)
    return message[start:end if end >= 0 else len(message)].strip()[:HEADLINE_CHARS]


def _kind(error_class: str | None, error_type: str | None, signal: str | None, message: str) -> Kind | None:
    for kind in KINDS:
        if kind.matches(error_class, error_type, signal, message):
            return kind
    return None


def _int(*groups: str | None) -> int | None:
    found = next((g for g in groups if g), None)
    return int(found) if found is not None else None


def _reported_signal(message: str, signal: str | None) -> str | None:
    m = _REPORTED_SIGNAL.search(message)
    if m is None:
        return signal
    num = next(g for g in m.groups() if g)
    return num if num.startswith("SIG") else _SIGNUM.get(num, f"signal {num}")


def reported_kind(signal: str | None, error_class: str | None) -> str | None:
    """The root-role kind a report stands for, when it names one: a killing signal, else the error
    class of the child's traceback that the report quotes (torchrun's box with an error file)."""
    if signal in ROOT_SIGNALS:
        return "killed"
    if signal in COLLATERAL_SIGNALS:
        return None
    return {"cuda_oom": "cuda_oom", "cuda_error": "cuda_error"}.get(error_class or "")


def failure_sign(event: dict[str, object]) -> FailureSign | None:
    """The kind of a LogEvent dict, or None when it is no failure (INFO lines, warnings, NCCL WARN)."""
    error_class = event.get("error_class")
    level = event.get("level")
    signal = event.get("signal")
    message = str(event.get("message") or "")
    if error_class in _NOT_FAILURES:
        return None
    if not error_class and not (signal and signal in ROOT_SIGNALS | COLLATERAL_SIGNALS) \
            and not (level in _FAILURE_LEVELS and _GATE.search(message)) and _BOX_TITLE not in message:
        return None
    error_type = event.get("error_type")
    if isinstance(error_type, str) and _WARNING_TYPE.search(error_type) and error_class == "python_exception":
        return None
    kind = _kind(error_class if isinstance(error_class, str) else None, error_type if isinstance(error_type, str)
                 else None, signal if isinstance(signal, str) else None, message)
    if kind is None:
        return None
    rank = host = local = None
    reported = None
    if kind.role == REPORT:
        box = _BOX_ROOT.search(message)
        if box:
            host, rank = box.group(1), int(box.group(2))
        else:
            m = _REPORTED_RANK.search(message)
            if m and m.group(5):
                rank = int(m.group(5))  # mpirun's rank is the job's
            elif m:
                local = _int(*m.groups()[:4])  # torch elastic, DeepSpeed, mp.spawn: the node's own numbering
        reported = _reported_signal(message, signal if isinstance(signal, str) else None)
    else:
        m = _PG_RANK.search(message[:4000])
        rank = int(m.group(1)) if m else None
    proc = _PROC.match(message)
    waited = _WAITED.search(message) if kind.name == "nccl_timeout" else None
    hit = kind.text.search(message) if kind.text is not None and kind.role != REPORT else None
    where = f"{proc.group(1)} pid={proc.group(2)}" if proc else (f"local_rank {local}" if local is not None else None)
    return FailureSign(kind.name, kind.role, rank, host, where,
                       reported if kind.role == REPORT else (signal if isinstance(signal, str) else None),
                       int(waited.group(1)) if waited else None, _line_at(message, hit.start()) if hit else None)


def rules_table() -> list[tuple[str, str, str]]:
    """(kind, role, why) for every kind, in the order they are tried: the documentation's table."""
    seen: dict[str, tuple[str, str, str]] = {}
    for kind in KINDS:
        seen.setdefault(kind.name, (kind.name, kind.role, kind.why))
    rows = list(seen.values())
    rows += [(name, ROOT, why) for name, why in PRECURSOR_KINDS.items()]
    return rows
