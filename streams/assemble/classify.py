"""Error classification of a whole event: error_class, error_type, root_cause, signal.

Checks run only when a cheap keyword test says they can match: most events are INFO lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from streams.assemble.merger import split_prefix

_KEYWORDS = re.compile(
    r"rror|xception|Traceback|panic|SIG[A-Z]{3,5}|Signal|signal|NCCL|CUDA|out of memory|OutOfMemory|"
    r"ssert|SSERT|terminate called|Killed|exitcode"
)
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|cudaErrorMemoryAllocation"
                  r"|out of memory on device|ggml_cuda.*out of memory")
_CUDA_ERR = re.compile(r"CUDA error: ([^\n.;(]+)|Cuda failure \d+ '([^']+)'|cudaError\w*|CUDA error\b")
_NCCL_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout|NCCL.{0,80}timed? ?out|"
                           r"collective operation timeout")
_NCCL_ERROR = re.compile(r"NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|"
                         r"ncclInvalidUsage|ProcessGroupNCCL.*(?:exception|error)", re.I)
_NCCL_WARN = re.compile(r"\bNCCL WARN\b")
_PY_EXC = re.compile(r"^(?:[\w.]+\] ?)?\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|"
                     r"Timeout|Cancelled|Died\w*|ExceptionGroup|Error\w*))(?::|$)", re.M)
# The name starts where an identifier (or a dotted name) does not go on: unanchored, a search tried it
# again from every character of a long word or dotted run, each try scanning to the run's end (a
# 500 KB word in a Java block took minutes).
_JAVA_EXC = re.compile(r"(?<![\w$.])((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable))\b")
_GO_PANIC = re.compile(r"^(?:panic: |fatal error: |thread '.*' panicked at)", re.M)
_SIGNAL = re.compile(r"\b(SIG(?:KILL|SEGV|ABRT|TERM|BUS|ILL|FPE|INT|HUP|PIPE|QUIT|TRAP))\b|"
                     r"exitcode\s*:\s*-(\d+)|Signal (\d+)|killed by signal: ([A-Za-z ]+?)[.\n]|Signals\.(SIG\w+)")
_SIGNUM = {"9": "SIGKILL", "11": "SIGSEGV", "6": "SIGABRT", "15": "SIGTERM", "7": "SIGBUS", "4": "SIGILL",
           "8": "SIGFPE", "2": "SIGINT", "1": "SIGHUP", "13": "SIGPIPE", "3": "SIGQUIT", "5": "SIGTRAP"}
_SIGNAME = {"bus error": "SIGBUS", "segmentation fault": "SIGSEGV", "killed": "SIGKILL", "aborted": "SIGABRT"}
_ASSERT = re.compile(r"AssertionError|GGML_ASSERT|Assertion .* failed|assert(?:ion)? failed", re.I)
_CHAIN = "\nThe above exception was the direct cause", "\nDuring handling of the above exception"


@dataclass(slots=True)
class Classification:
    error_class: str | None = None
    error_type: str | None = None
    root_cause: str | None = None
    signal: str | None = None


def _py_exceptions(msg: str, kind: str | None) -> list[str]:
    """Exception lines of a traceback chain, first to last (``Type: message`` text)."""
    if kind not in ("python_traceback", "childfailed_box") and "Traceback" not in msg:
        return []
    found = []
    for line in msg.split("\n"):
        # strip process / vLLM prefixes: the exception line is the first token after them
        body = re.sub(r"^(?:\[(?:rank|default)\d+\]: ?|\(\w+ pid=\d+[^)]*\) ?|[A-Z]+ \d\d-\d\d \d\d:\d\d:\d\d "
                      r"\[?[\w.]+:\d+\]\]? ?|\d{4}-\d\d-\d\d [\d:,]+ - [A-Z]+ - \w+: )+", "", line)
        if not body or body[0] in " \t":
            continue
        m = _PY_EXC.match(body)
        if m and not body.startswith("Traceback"):
            found.append(m.group(1))
    return found


def _one_line(msg: str) -> bool:
    """One line of content: NCCL writes a WARN as "\\n<header> NCCL WARN ...", so under a per-line
    process prefix the WARN event also holds the prefix's empty line."""
    if "\n" not in msg:
        return True
    return sum(1 for line in msg.split("\n") if split_prefix(line)[1].strip()) == 1


def _may_be_error(t: str) -> bool:
    """Cheap gate before ``_KEYWORDS``: one literal of each alternative (plain ``in`` beats a regex
    alternation about twofold); ``_KEYWORDS`` still decides."""
    return ("rror" in t or "xception" in t or "Traceback" in t or "panic" in t or "SIG" in t
            or "ignal" in t or "NCCL" in t or "CUDA" in t or "out of memory" in t or "OutOfMemory" in t
            or "ssert" in t or "SSERT" in t or "terminate called" in t or "Killed" in t or "exitcode" in t)


def classify(msg: str, kind: str | None = None) -> Classification:  # noqa: PLR0911, PLR0912 - one flat dispatch: the hot path pays no call per rule
    c = Classification()
    if not _may_be_error(msg) or not _KEYWORDS.search(msg):
        return c
    sm = _SIGNAL.search(msg)
    if sm:
        name, num, num2, word, enum = sm.groups()
        c.signal = name or enum or _SIGNUM.get(num or num2 or "") or _SIGNAME.get((word or "").strip().lower())
    excs = _py_exceptions(msg, kind)
    if excs:
        c.error_type, c.root_cause = excs[-1], excs[0]
    if _OOM.search(msg):
        c.error_class = "cuda_oom"
        c.error_type = c.error_type or "CUDA out of memory"
        return c
    if _NCCL_TIMEOUT.search(msg):
        c.error_class = "nccl_timeout"
        return c
    m = _CUDA_ERR.search(msg)
    if _NCCL_WARN.search(msg) and _one_line(msg):  # one NCCL WARN line, whatever it reports
        c.error_class = "nccl_warn"
        if m:
            c.error_type = (m.group(1) or m.group(2) or "CUDA error").strip()
        return c
    if m:
        c.error_class = "cuda_error"
        c.error_type = (m.group(1) or m.group(2) or "CUDA error").strip()
        return c
    if _NCCL_ERROR.search(msg):
        c.error_class = "nccl_error"
        return c
    if _NCCL_WARN.search(msg):
        c.error_class = "nccl_warn"
        return c
    if _GO_PANIC.search(msg):
        c.error_class = "go_panic"
        return c
    if _ASSERT.search(msg):
        c.error_class = "assertion"
        return c
    if excs:
        c.error_class = "python_exception"
        return c
    if kind == "java_stack" or "\n\tat " in msg or "\n    at " in msg:
        jm = _JAVA_EXC.search(msg)
        if jm:
            c.error_class, c.error_type = "java_exception", jm.group(1)
            causes = re.findall(r"Caused by: ((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)", msg)
            c.root_cause = causes[-1] if causes else jm.group(1)
            return c
    if c.signal and c.signal != "SIGTERM":
        c.error_class = "signal"
    return c
