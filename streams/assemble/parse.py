"""Parse the head line of an event: timestamp (UTC epoch ms), level, logger, typed fields.

Formats recognised (first match wins, cheapest checks first):
JSON lines (ms-swift ``logging.jsonl``), HF Trainer dicts (``{'loss': 1.2, ...}``, read with
``ast.literal_eval``), DeepSpeed ``[ts] [LEVEL] [file:line:func]``, HF ``[INFO|trainer.py:123] ts``,
Python ``LEVEL:name:msg`` and ``ts - name - LEVEL - msg``, vLLM ``LEVEL MM-DD hh:mm:ss file.py:NN]``,
glog/klog ``I0905 17:22:27.123456 1234 file.cc:12]`` and torch's ``[I905 ...]``, NCCL
``host:pid:tid [dev] NCCL INFO``, Megatron/DeepSpeed ``iteration N/ M | ... lm loss: ...``,
HDFS ``yyMMdd HHmmss``, Android logcat, Apache ``[Sun Dec 04 04:47:44 2005] [error]``, syslog
``Jun 14 15:16:01`` and any line carrying an ISO ``yyyy-MM-dd HH:mm:ss`` near its start.

Times without a zone are taken as UTC; formats without a year take the producer's year.
"""

from __future__ import annotations

import ast
import calendar
import json
import re
import time
from dataclasses import dataclass, field

from streams.assemble import jsonlimits

LEVELS = {
    "TRACE": "TRACE", "V": "TRACE", "VERBOSE": "TRACE", "DEBUG": "DEBUG", "D": "DEBUG",
    "INFO": "INFO", "I": "INFO", "NOTICE": "INFO", "INFORMATION": "INFO",
    "WARN": "WARN", "WARNING": "WARN", "W": "WARN",
    "ERROR": "ERROR", "E": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR", "EXCEPTION": "ERROR",
    "CRITICAL": "FATAL", "CRIT": "FATAL", "FATAL": "FATAL", "F": "FATAL", "A": "FATAL", "EMERG": "FATAL",
    "ALERT": "FATAL", "PANIC": "FATAL",
}
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                        "Nov", "Dec"), 1)}
_LVL = r"TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL|SEVERE"

_PROC_PREFIX = re.compile(r"(?:\[(?:rank|default)\d+\]: ?|\(\w+ pid=\d+(?:, ip=[\d.]+)?\) ?)+")
_DS = re.compile(rf"\[(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.](\d+))?\] \[({_LVL})\] \[([^\]]+)\]")
_HF = re.compile(rf"\[({_LVL})\|([\w.]+:\d+)\] (\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.](\d+))?")
_PYBASIC = re.compile(rf"({_LVL}):([\w.]*):")
_VLLM = re.compile(rf"({_LVL}) (\d\d)-(\d\d) (\d\d:\d\d:\d\d) \[?([\w.]+:\d+)\]")
_GLOG = re.compile(r"\[?([IWEF])(\d\d?)(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?\s+(\d+)?\s*([\w.-]+:\d+)\]")
_NCCL = re.compile(r"([\w.-]+):(\d+):(\d+) \[(\d+)\] (?:[\w.]+:\d+ )?NCCL (INFO|WARN|ERROR|TRACE)")
_HDFS = re.compile(r"(\d\d)(\d\d)(\d\d) (\d\d)(\d\d)(\d\d) \d+ ([A-Z]+) ")
_ANDROID = re.compile(r"(\d\d)-(\d\d) (\d\d:\d\d:\d\d)\.(\d+)\s+\d+\s+\d+ ([VDIWEFA]) ")
_APACHE = re.compile(r"\[\w{3} (\w{3}) +(\d+) (\d\d:\d\d:\d\d) (\d{4})\] \[(\w+)\]")
_SYSLOG = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d+) (\d\d:\d\d:\d\d) ")
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[,.](\d+))?(Z|[+-]\d\d:?\d\d)?")
_LEVEL_WORD = re.compile(rf"\b({_LVL}|Info|Warning|Error|Debug|Critical)\b")
_ITER = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_ITER_FIELDS = {
    "lm loss": "loss", "learning rate": "learning_rate", "grad norm": "grad_norm", "loss scale": "loss_scale",
    "elapsed time per iteration (ms)": "iteration_time_ms", "elapsed time per iteration (s)": "iteration_time_s",
    "TFLOPs": "tflops", "samples per second": "samples_per_second",
}
_ITER_FIELD = re.compile(r"\|\s*([A-Za-z][A-Za-z ()/-]*?):\s*([-+\d.Ee]+)")

# ms-swift / HF Trainer keys -> metric names used in logs.metrics
METRIC_KEYS = {
    "loss": "loss", "train_loss": "loss", "eval_loss": "eval_loss", "grad_norm": "grad_norm",
    "learning_rate": "learning_rate", "lr": "learning_rate", "memory(GiB)": "gpu_memory_gib",
    "train_speed(iter/s)": "throughput_iter_s", "train_samples_per_second": "throughput_samples_s",
    "train_steps_per_second": "throughput_steps_s", "eval_samples_per_second": "eval_samples_s",
    "token_acc": "token_acc", "acc": "acc", "eval_acc": "eval_acc", "eval_token_acc": "eval_token_acc",
    "train_runtime": "train_runtime_s", "eval_runtime": "eval_runtime_s",
}


@dataclass(slots=True)
class Parsed:
    ts_ms: int | None = None
    level: str | None = None
    logger: str | None = None
    step: int | None = None
    max_steps: int | None = None
    epoch: float | None = None
    metrics: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    fmt: str | None = None


def norm_level(word: str | None) -> str | None:
    return LEVELS.get(word.upper()) if word else None


_DAY_CACHE: dict[tuple[int, int, int], int] = {}


def _ms(y: int, mo: int, d: int, hms: str, frac: str | None) -> int | None:
    day = _DAY_CACHE.get((y, mo, d))
    try:
        if day is None:
            day = calendar.timegm((y, mo, d, 0, 0, 0, 0, 0, 0))
            if not (1 <= mo <= 12 and 1 <= d <= 31):
                return None
            if len(_DAY_CACHE) < 4096:  # log days are few; the cache stays tiny
                _DAY_CACHE[(y, mo, d)] = day
        h, mi, s = int(hms[0:2]), int(hms[3:5]), int(hms[6:8])
    except (ValueError, OverflowError):
        return None
    return (day + h * 3600 + mi * 60 + s) * 1000 + (int((frac + "00")[:3]) if frac else 0)


def _iso(m: re.Match) -> int | None:
    y, mo, d, h, mi, s, frac, tz = m.groups()
    ms = _ms(int(y), int(mo), int(d), f"{h}:{mi}:{s}", frac)
    if ms is not None and tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        tz = tz[1:].replace(":", "")
        ms -= sign * (int(tz[:2]) * 60 + int(tz[2:])) * 60000
    return ms


def _num(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _from_dict(d: dict, p: Parsed) -> None:
    for k, v in d.items():
        name = METRIC_KEYS.get(k)
        if name is not None:
            f = _num(v)
            if f is not None:
                p.metrics[name] = f
                continue
        if k == "epoch":
            p.epoch = _num(v)
        elif k in ("global_step/max_steps", "global_step"):
            s = str(v)
            if "/" in s:
                a, _, b = s.partition("/")
                if a.strip().isdigit() and b.strip().isdigit():
                    p.step, p.max_steps = int(a), int(b)
            elif s.isdigit():
                p.step = int(s)
        elif k == "step" and isinstance(v, int):
            p.step = v
        elif k in ("level", "levelname", "severity"):
            p.level = norm_level(str(v))
        elif isinstance(v, (str, int, float, bool)):
            p.attributes[str(k)] = str(v)


def parse_line(text: str, producer_ts_ms: int) -> Parsed:  # noqa: PLR0911, PLR0912, PLR0915 - first-char dispatch
    """Parse one head line; unknown formats give an empty ``Parsed`` (timestamp left to the caller)."""
    p = Parsed()
    body = text
    c = body[:1]
    if c in {"[", "("}:
        m = _PROC_PREFIX.match(body)
        if m:
            body = body[m.end():]
            c = body[:1]
    if c == "{":
        s = body.rstrip()
        if s.endswith("}"):
            obj = None
            if body.startswith('{"'):
                try:  # past the depth or size limits, the parser would recurse to death: then it is text
                    obj = json.loads(s) if jsonlimits.violation(s) is None else None
                except ValueError:
                    obj = None
                p.fmt = "json"
            elif body.startswith("{'") and len(s) < 20000:
                try:
                    obj = ast.literal_eval(s)  # HF Trainer prints a Python dict; literal_eval runs no code
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    obj = None
                p.fmt = "hf_dict"
            if isinstance(obj, dict):
                _from_dict(obj, p)
                return p
    elif body.endswith("}") and "{'" in body:
        # HF Trainer prints its dict right after a tqdm bar with no newline in between
        i = body.find("{'")
        try:
            obj = ast.literal_eval(body[i:]) if len(body) - i < 20000 else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            p.fmt = "hf_dict"
            _from_dict(obj, p)
            return p
    year = _year(producer_ts_ms)
    m = None
    if c == "[":
        m = _DS.match(body)
        if m:
            p.ts_ms = _ms(*_ymd(m.group(1)), m.group(1)[11:], m.group(2))
            p.level, p.logger, p.fmt = norm_level(m.group(3)), m.group(4), "deepspeed"
            return _iteration(body, p)
        m = _HF.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(2), "hf"
            p.ts_ms = _ms(*_ymd(m.group(3)), m.group(3)[11:], m.group(4))
            return p
        m = _APACHE.match(body)
        if m:
            mo = _MONTHS.get(m.group(1))
            p.ts_ms = _ms(int(m.group(4)), mo, int(m.group(2)), m.group(3), None) if mo else None
            p.level, p.fmt = norm_level(m.group(5)), "apache"
            return p
        m = _GLOG.match(body)
        if m:
            return _glog(m, p, year)
    elif c in "IWEF":
        m = _GLOG.match(body)
        if m:
            return _glog(m, p, year)
    if c.isupper():
        m = _VLLM.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(5), "vllm"
            p.ts_ms = _ms(year, int(m.group(2)), int(m.group(3)), m.group(4), None)
            return p
        m = _PYBASIC.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(2) or None, "python_basic"
            return p
        m = _SYSLOG.match(body)
        if m:
            p.ts_ms = _ms(year, _MONTHS[m.group(1)], int(m.group(2)), m.group(3), None)
            p.fmt = "syslog"
            return p
    elif c.isdigit():
        m = _HDFS.match(body)
        if m:
            yy, mon, d, h, mi, s, lvl = m.groups()
            p.ts_ms = _ms(2000 + int(yy), int(mon), int(d), f"{h}:{mi}:{s}", None)
            p.level, p.fmt = norm_level(lvl), "hdfs"
            return p
        m = _ANDROID.match(body)
        if m:
            p.ts_ms = _ms(year, int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
            p.level, p.fmt = norm_level(m.group(5)), "android"
            return p
    m = _NCCL.search(body, 0, 160) if "NCCL" in body else None
    if m:
        p.level, p.logger, p.fmt = norm_level(m.group(5)), "nccl", "nccl"
        p.attributes.update(nccl_host=m.group(1), pid=m.group(2), tid=m.group(3), device=m.group(4))
        if m.start():  # Ray / verl put "[yyyy-mm-dd hh:mm:ss] " in front
            tm = _ISO.search(body, 0, m.start())
            p.ts_ms = _iso(tm) if tm else None
        return p
    m = _ISO.search(body, 0, 80)
    if m:
        p.ts_ms = _iso(m)
        lm = _LEVEL_WORD.search(body, m.end(), m.end() + 60)
        if lm:
            p.level = norm_level(lm.group(1))
        p.fmt = "iso"
    return _iteration(body, p)


_YEAR_OF_DAY: dict[int, int] = {}


def _year(ts_ms: int) -> int:
    """The UTC year of the producer's time (formats without a year take it), cached per day."""
    day = ts_ms // 86_400_000
    year = _YEAR_OF_DAY.get(day)
    if year is None:
        year = time.gmtime(ts_ms / 1000).tm_year
        if len(_YEAR_OF_DAY) < 4096:
            _YEAR_OF_DAY[day] = year
    return year


def _ymd(s: str) -> tuple[int, int, int]:
    return int(s[:4]), int(s[5:7]), int(s[8:10])


def _glog(m: re.Match, p: Parsed, year: int) -> Parsed:
    lvl, mo, d, hms, frac, pid, loc = m.groups()
    p.ts_ms = _ms(year, int(mo), int(d), hms, frac)
    p.level, p.logger, p.fmt = norm_level(lvl), loc, "glog"
    if pid:
        p.attributes["pid"] = pid
    return p


def _iteration(body: str, p: Parsed) -> Parsed:
    """Megatron / Megatron-DeepSpeed ``iteration N/ M | lm loss: ... |`` lines carry step metrics."""
    if "iteration" not in body:
        return p
    m = _ITER.search(body)
    if not m:
        return p
    p.step, p.max_steps = int(m.group(1)), int(m.group(2))
    for fm in _ITER_FIELD.finditer(body, m.end() - 1):
        name = _ITER_FIELDS.get(fm.group(1).strip())
        if name:
            f = _num(fm.group(2))
            if f is not None:
                p.metrics[name] = f
    p.fmt = p.fmt or "megatron"
    return p
