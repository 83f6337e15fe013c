"""Multiline rules as data: how a block starts, what continues it, what ends it.

Everything here is a table of precompiled regexes; ``merger.py`` only interprets it.
Patterns are matched against a line's *body*, i.e. after per-process prefixes such as
``[rank3]:``, ``[default3]:``, ``(VllmWorkerProcess pid=123)`` or vLLM's
``ERROR 09-05 17:22:27 file.py:63]`` have been stripped (they are kept in the message).

Modes (the state of an open block):

- ``plain``: a single line; continued only by explicit continuations (indented lines,
  Java ``\\tat`` / ``Caused by:`` / ``... N more``, asyncio ``handle:``).
- ``await``: a header whose message is empty (``[INFO] [fused_optimizer.py:362:_update_scale] ``,
  ``WARNING:torch.distributed.run:``, ``Process VllmWorkerProcess:``); takes the next line whatever it is.
- greedy modes (``python``, ``cpp``, ``panic``): every following line that does not look like the
  start of a new record (``RECORD_START``) continues the block — this is what keeps exception
  messages spanning several lines, hard-wrapped C++ frames and Rust panic notes together.
  After blank lines only the mode's ``AFTER_BLANK`` patterns continue (chained tracebacks).
- ``table``: a block opened by a rule line (``=====``, ``-----``, ``*****``) that ends at the next
  bare rule line of the same character (torchrun ChildFailedError box, benchmark tables).
- ``json``: a line ending with ``{`` / ``[`` until the brackets balance (DeepSpeed ``json = {``).
- ``sanitizer``: compute-sanitizer reports, every line starting with ``=========``.
"""

from __future__ import annotations

import re

# Per-process prefixes, stripped (repeatedly) to decide, kept in the message.
PREFIX_RE = re.compile(
    r"(?:"
    r"(?P<rank>\[(?:rank|default)\d+\]:) ?"
    r"|(?P<proc>\(\w+ pid=\d+(?:, ip=[\d.]+)?\)) ?"
    r"|(?P<vlvl>INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d (?P<vloc>\[?[\w.]+:\d+\]\]?) ?"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (?P<wlvl>[A-Z]+) - (?P<wname>\w+): "
    r"(?=(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)[ :])"
    r")"
)
# First characters a prefix can start with: a cheap gate before running PREFIX_RE.
PREFIX_FIRST = frozenset("[(IWEDC0123456789")

# Lines that begin a new record: they stop greedy modes.
RECORD_START_RE = re.compile(
    r"""(?x)
    \[?\d{4}-\d\d-\d\d[ T]\d
    | \d\d/\d\d/\d\d | \d{6}\ \d{6} | \d\d-\d\d\ \d\d:\d\d
    | \[?[IWEF]\d{3,4}\ \d\d:
    | (?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE|NOTICE)\b
    | \[(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\]
    | Traceback\ \( | terminate\ called
    | \[(?:rank|default)\d+\]: | \(\w+\ pid=\d+
    | [\w.-]+:\d+:\d+\ \[\d+\]\ NCCL
    | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\ [\ \d]\d\ \d
    | thread\ '.*'\ panicked | panic:\ | goroutine\ \d+\ \[ | fatal\ error:
    | [\w.-]+@[\w.-]+:\S*[$\#] | \(lldb\) | Process\ [\w-]+:\s*$ | Process\ \d+\ stopped
    | Fatal\ Python\ error | >(?:\ |$) | \{['"] | \[\d\d:\d\d
    | \[[^\]]{1,40}\]\ \d{4}-\d\d-\d\d | ts=\d{4}- | time="?\d{4}- | level=\w
    | \d{1,3}%\|                         # a tqdm bar ("  0%|", " 10%|") is indented but never a continuation
    """
)

# Start rules, tried in order on the first line of a block: (regex, mode, multiline_kind).
START_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"Traceback \(most recent call last\)"), "python", "python_traceback"),
    (re.compile(r'  File "'), "python", "python_traceback"),  # a traceback whose head was cut
    (re.compile(r"Fatal Python error: "), "python", "python_traceback"),
    (re.compile(r"terminate called after throwing"), "cpp", "cpp_frames"),
    (re.compile(r"Exception raised from "), "cpp", "cpp_frames"),
    (re.compile(r"frame #\d+: "), "cpp", "cpp_frames"),
    (re.compile(r"#\d+\s+0x[0-9a-fA-F]+ in "), "cpp", "cpp_frames"),  # gdb bt
    (re.compile(r"\[[EF]\d{3,4} \d\d:\d\d:\d\d"), "cpp", "cpp_frames"),  # c10 [E129 ...] error + hard wraps
    (re.compile(r"\*\*\* SIG[A-Z]+ received"), "cpp", "cpp_frames"),
    (re.compile(r"Process \d+ stopped"), "cpp", "lldb_stop"),
    (re.compile(r"\(lldb\) bt"), "cpp", "cpp_frames"),
    (re.compile(r"thread '.*' panicked at"), "panic", "rust_panic"),
    (re.compile(r"(?:panic: |fatal error: |goroutine \d+ \[)"), "panic", "go_panic"),
    (re.compile(r"========= "), "sanitizer", "sanitizer_report"),
    (re.compile(r"Process [\w-]+:\s*$"), "await", "python_traceback"),
)
# First characters of START_RULES patterns: lines starting otherwise skip the loop.
START_FIRST = frozenset('T FtEf#[*P(gp=')

# Rule lines that open a table: "=====", "----- title -----", "*****".
TABLE_OPEN_RE = re.compile(r"([=*-])\1{9,}")
TABLE_FIRST = frozenset("=-*")

# Header lines whose message is empty: the next line is the message.
EMPTY_HEADER_RE = re.compile(r"(?:\[[\d\- :,.]+\] \[[A-Z]+\] \[[^\]]+\]\s*$|[A-Z]+:[\w.]+:\s*$)")

# Explicit continuations of a plain line (besides indentation).
PLAIN_CONT_RE = re.compile(r"(?:\tat |Caused by: |\.\.\. \d+ (?:more|common frames omitted)|handle: <)")
PLAIN_CONT_FIRST = frozenset("\tC.h")
# A Java exception head continues a WARN/ERROR header (logger.error(msg, exc)).
JAVA_HEAD_RE = re.compile(r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b")
LEVEL_WARN_ERROR_RE = re.compile(r"\b(?:WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL)\b")
# A traceback joins the single line before it when that line announces it.
PREAMBLE_RE = re.compile(r"(?:Exception in |^Process [\w-]+:\s*$|^handle: <|task failed\s*$|exception:\s*$)")
TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\)")

CHAIN_RE = re.compile(
    r"(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)"
)
# After blank lines, greedy modes continue only on these.
AFTER_BLANK: dict[str, re.Pattern[str]] = {
    "python": re.compile(
        r"(?:During handling of the above|The above exception was the direct cause|File \S.*:\d+, in "
        r"|-+> |Stack \(most recent call first\)|Current thread 0x|Thread 0x)"
    ),
    "cpp": re.compile(r"(?:Exception raised from |frame #\d+|#\d+\s+0x|\s+frame #)"),
    "panic": re.compile(r"(?:goroutine \d+ \[|\s)"),
}
SANITIZER_CONT = "========="
