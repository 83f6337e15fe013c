"""Parse the head line of an event: timestamp (UTC epoch ms), level, logger, typed fields.

A line is read in two parts: its head (the time, level and logger a logging library wrote in front)
and its body. Heads recognised (first match wins, cheapest checks first): DeepSpeed
``[ts] [LEVEL] [file:line:func]``, HF ``[INFO|trainer.py:123] ts``, Python ``LEVEL:name:msg`` and
``ts - name - LEVEL - msg``, vLLM ``LEVEL MM-DD hh:mm:ss file.py:NN]``, glog/klog
``I0905 17:22:27.123456 1234 file.cc:12]`` and torch's ``[I905 ...]``, zap's console encoder
``1.7085078124461591e+09<TAB>DEBUG<TAB>logger<TAB>``, NCCL ``host:pid:tid [dev] NCCL INFO``, HDFS
``yyMMdd HHmmss``, Android logcat, Apache ``[Sun Dec 04 04:47:44 2005] [error]``, syslog
``Jun 14 15:16:01`` and any line carrying an ISO ``yyyy-MM-dd HH:mm:ss`` near its start (its level a word
after it, or a glog-style letter just before it: NeMo's ``[NeMo I 2024-06-01 12:00:00 module:line]``).

The body: a structured record the line ends with (:mod:`streams.assemble.records`: JSON however
spaced, Python dict reprs, logfmt), whose keys are lifted by family (:mod:`streams.assemble.lift`) and
win over the head (but a dict after a settings listing's dotted leader, DeepSpeed's ``  optimizer_params
............. {'lr': ...}``, is a setting, kept as text); else a framework's step line
(:mod:`streams.assemble.steplines`).

Times without a zone are taken as UTC; formats without a year take the producer's year.
"""

from __future__ import annotations

import re
import time

from streams.assemble.keys import norm, number, settle_loss, settle_memory, settle_norm
from streams.assemble.lift import LEVELS, Parsed, lift_record, lift_value, settle_settings
from streams.assemble.merger import split_prefix
from streams.assemble.phrases import evaluation_losses
from streams.assemble.records import find_record, logfmt
from streams.assemble.rounds import lift_round
from streams.assemble.steplines import lift_counters, lift_step_line
from streams.assemble.times import ISO as _ISO
from streams.assemble.times import SLASHED as _SLASHED
from streams.assemble.times import epoch_ms, zone_after_ms
from streams.assemble.times import iso_ms as _iso
from streams.assemble.times import ms_of as _ms
from streams.assemble.times import slashed_ms as _slashed

__all__ = ["LEVELS", "Parsed", "norm_level", "parse_line"]

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                        "Nov", "Dec"), 1)}
_LVL = r"TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL|SEVERE"
_DAY_MS = 86_400_000
_CLOCK_SKEW_MS = 300_000  # how far ahead of its reader a writer's clock may be

# A date and time written without separators at the line's start, as a logging datefmt of "%Y%m%d_%H%M%S" (or with
# "-"/"T" between them) prints it: GDR-Net's and other detectron2-based projects' loggers, "20231023_095643|core...";
# the time may keep its colons, and its milliseconds after it: ReaL-HF's and AReaL's logging ("%(asctime)s.%(msecs)03d
# %(name)s %(levelname)s: %(message)s" with datefmt "%Y%m%d-%H:%M:%S", "20250601-12:00:00.123 StatsLogger INFO: ...").
_NAME_LEVEL = re.compile(rf" ([\w.-]+) ({_LVL}): ")  # ... and AReaL's logger's name and level after it
_COMPACT = re.compile(r"(\d{4})(\d\d)(\d\d)[_T-](\d\d)(:?)(\d\d)\5(\d\d)(?:[.,](\d{1,6}))?(?=[|\s\]:]| - )")
# C's ctime/asctime layout ("%a %b %d %H:%M:%S %Y", the day padded with a blank), zone-less: nvidia-smi's table
# and its -q report ("Timestamp : Sun Apr 14 18:55:20 2019"), Python's time.ctime(); date(1)'s default output has its
# zone's abbreviation before the year ("Tue Mar  5 10:00:00 PST 2024"), read as after an ISO time.
_CTIME = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                    r" ?(\d{1,2}) (\d\d:\d\d:\d\d)( [A-Z]{2,5})? (\d{4})\b")
_PROC_PREFIX = re.compile(r"(?:\[(?:rank|default)\d+\]: ?|\(\w+ pid=\d+(?:, ip=[\d.]+)?\) ?)+")
_DS = re.compile(rf"\[(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.](\d+))?\] \[({_LVL})\] \[([^\]]+)\]")
_HF = re.compile(rf"\[({_LVL})\|([\w.]+:\d+)\] (\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.](\d+))?")
_PYBASIC = re.compile(rf"({_LVL}):([\w.]*):")
_VLLM = re.compile(rf"({_LVL}) (\d\d)-(\d\d) (\d\d:\d\d:\d\d) \[?([\w.]+:\d+)\]")
# (glog 0.6 and later write the year too by default, FLAGS_log_year_in_prefix: "I20240501 10:00:00.123456 ...";
# absl's log before its time zone is loaded writes Unix seconds in the seconds' field: "E0000 00:00:1718032093.437234";
# torch._logging writes the file's path, "W0110 10:00:00.123000 140245 torch/distributed/run.py:779]")
_GLOG = re.compile(r"\[?([IWEF])(?:(\d{4})?(\d\d?)(\d\d) (\d\d:\d\d:\d\d)|0000 00:00:(\d{9,11}))(?:\.(\d+))?"
                   r"\s+(\d+)?\s*([\w./-]+:\d+)\]")
# NCCL's ncclDebugLog (src/debug.cc): "%s:%d:%d [%d] " (host, pid, tid, device), for a WARN "%s:%d " (__FILE__, as the
# build names it: "enqueue.cc", "misc/nvmlwrap.cc", "transport/net_ib.cc"), then "NCCL INFO " / "NCCL WARN ".
_NCCL = re.compile(r"([\w.-]+):(\d+):(\d+) \[(\d+)\] (?:[\w./-]+:\d+ )?NCCL (INFO|WARN|ERROR|TRACE)")
# LightGBM's C++ Log (include/LightGBM/utils/log.h): "[LightGBM] [Info] ", "[Warning]", "[Fatal]", "[Debug]".
_LIGHTGBM = re.compile(r"\[LightGBM\] \[(Info|Warning|Fatal|Debug)\] ")
# tensorpack's logger (utils/logger.py _MyFormatter): "[%(asctime)s @%(filename)s:%(lineno)d]" with datefmt "%m%d
# %H:%M:%S", then "WRN", "ERR" or "DBG" before the message (none for INFO)
_TENSORPACK = re.compile(r"\[(\d\d)(\d\d) (\d\d:\d\d:\d\d) @[\w.-]+:\d+\](?: (WRN|ERR|DBG)(?= ))? ")
# zerolog's ConsoleWriter: a time with no date (its TimeFormat, "15:04:05" or the default time.Kitchen "3:04PM"),
# a three-letter level, then the caller and ">" when it is shown: "16:21:46 ERR basic.go:113 > test ERROR".
# Its date is not written, so the line keeps the time it was read at.
_ZEROLOG_CONSOLE = re.compile(r"(?:\d\d:\d\d:\d\d|\d{1,2}:\d\d[AP]M) (TRC|DBG|INF|WRN|ERR|FTL|PNC) "
                              r"(?:[\w./-]+:\d+ > )?")
_ZEROLOG_LEVELS = {"TRC": "TRACE", "DBG": "DEBUG", "INF": "INFO", "WRN": "WARN", "ERR": "ERROR", "FTL": "FATAL",
                   "PNC": "FATAL"}
_HDFS = re.compile(r"(\d\d)(\d\d)(\d\d) (\d\d)(\d\d)(\d\d) \d+ ([A-Z]+) ")
_ANDROID = re.compile(r"(\d\d)-(\d\d) (\d\d:\d\d:\d\d)\.(\d+)\s+\d+\s+\d+ ([VDIWEFA]) ")
_APACHE = re.compile(r"\[\w{3} (\w{3}) +(\d+) (\d\d:\d\d:\d\d) (\d{4})\] \[(\w+)\]")
_SYSLOG = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d+) (\d\d:\d\d:\d\d)(?:\.(\d+))? +")
# zap's console encoder (controller-runtime, Kubeflow's training-operator): epoch seconds as a float
# ("1.7085078124461591e+09" or "1708507812.446"), tab, level, tab, an optional logger name, tab.
_ZAP = re.compile(r"(\d\.\d+e\+09|\d{10}\.\d+)\t([A-Za-z]+)\t(?:([\w.-]+)\t)?")
# radeontop's dump (dump.c dumpdata): fprintf(f, "%llu.%llu: ", tv_sec, tv_usec) before "bus %02x, gpu %.2f%%, ...":
# the microseconds are an integer printed unpadded ("1578054183.5012" is 5012 us past the second).
_RADEONTOP_TIME = re.compile(r"(\d{10})\.(\d{1,6}): (?=bus [0-9a-f]{2}, |gpu \d)")
# A sample in the Prometheus text exposition format, as dcgm-exporter's /metrics prints it (and a scrape
# dumped into a log): name{label="value",...} value [timestamp ms]. The name goes through the key families;
# the labels stay attributes (DCGM's modelName is the GPU's product, not a model).
# The labels are written as first label, then (blanks, a comma, blanks, label)*, then blanks and a comma:
# each run of blanks has one place to go. Written as (blanks, label, blanks, comma)*, the blanks between two
# labels could end one or start the next, and a line of 20 labels with two blanks between them and no
# closing brace tried every split (2**20 tries: a 140-character line stalled its partition).
_PROM_LABELS = r'(?:\s*[A-Za-z_]\w*\s*=\s*"(?:[^"\\]|\\.)*"(?:\s*(?:,\s*)?[A-Za-z_]\w*\s*=\s*"(?:[^"\\]|\\.)*")*\s*,?)?'
_PROM = re.compile(r"([A-Za-z_:][\w:]*)\{(" + _PROM_LABELS + r")\}\s+(\S+)(?:\s+(-?\d+))?\s*")
_PROM_LABEL = re.compile(r'([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"')
# InfluxDB's line protocol, as Telegraf's influx serializer writes its inputs (plugins/inputs/nvidia_smi: "nvidia_smi,
# index=0,name=NVIDIA\ H100,uuid=GPU-... memory_used=549i,utilization_gpu=100i,... 1523991122000000000"): the
# measurement and its tags (commas, blanks and "=" escaped with "\"), a blank, the fields (an integer with an "i" or
# "u", a string quoted, t/f a boolean), a blank, the time in ns. Each part's pieces exclude the separators around them:
# one way to split a line, tried once.
_INFLUX_PIECE = r'(?:[^\s,=\\]|\\.)+'
_INFLUX_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[^\s,"=\\]+)'
_INFLUX = re.compile(rf"[A-Za-z_][\w.-]*((?:,{_INFLUX_PIECE}={_INFLUX_PIECE})*) "
                     rf"({_INFLUX_PIECE}={_INFLUX_VALUE}(?:,{_INFLUX_PIECE}={_INFLUX_VALUE})*) (\d{{10,19}})")
_INFLUX_PAIR = re.compile(rf"({_INFLUX_PIECE})=({_INFLUX_VALUE})")
_INFLUX_INT = re.compile(r"-?\d+[iu]")
_INFLUX_ESCAPE = re.compile(r"\\(.)")
# ECMA-48 SGR sequences (colours): "\x1b[31m", "\x1b[1;32m", "\x1b[0m".
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LEVEL_WORD = re.compile(rf"\b({_LVL}|Info|Warning|Error|Debug|Critical)\b")
# The level first, bare or in brackets: XLM's LogFormatter "INFO - 10/04/19 14:41:25 - ...", and the
# "[%(levelname)s] %(asctime)s %(module)s: %(message)s" format torch's elastic agent logs its launch with.
_LEVEL_FIRST = re.compile(rf"\[?({_LVL}|Info|Warning|Error|Debug|Critical)\b")
# A level in capitals and brackets alone at the head of a line with no time: scripts' own loggers and prints,
# "[WARNING] OBSERVATION TOO LONG, ..." (Search-R1's rollout, behind Ray's "(main_task pid=N) "), "[INFO] ...".
# log4j's "[%-5level] - %msg%n" (DJL's examples' log4j2.xml) pads the level inside its brackets: "[INFO ] - Train: ...".
_LEVEL_ALONE = re.compile(rf"\[({_LVL}) ?\](?: - | ?)")
# Other heads that give a level and no time, from the formatters that print them: uvicorn's "%(levelprefix)s
# %(message)s" (the level and its colon padded to nine, "INFO:     Started server process", the API servers of vLLM,
# SGLang, FastChat) and a program's own "ERROR: ..." print; ms-swift's "[%(levelname)s:%(name)s] %(message)s"
# (swift/utils/logger.py, "[INFO:swift] ...") and the "[%(name)s:%(levelname)s]" order; wandb's termwarn and
# termerror ("wandb: WARNING ...", "wandb: ERROR ...": its plain termlog lines carry no level word).
# Also Dask's and other "%(name)s - %(levelname)s - %(message)s" formats ("distributed.nanny - WARNING - ...");
# TensorRT-LLM's logger, "[TensorRT-LLM][WARNING] "; log4j 1.x's LogLog, "log4j:WARN "; the sanitizers' Report
# (compiler-rt sanitizer_common), "==623==ERROR: AddressSanitizer: ..."; logback's StatusPrinter, "ERROR in <origin> -";
# Rust's tracing-subscriber, "{level:>5} {target}: " after a time a relay took or the format left out (Vector,
# text-embeddings-inference, candle: " INFO vector::topology: ..."); rich's records with their time column blank;
# neptune-client's logger, "[neptune] [info   ] " (the level in lower case, padded to seven in its brackets).
_TIMELESS_HEAD = re.compile(rf"[ \t]*(?P<a>{_LVL}):[ \t]+(?=\S)"
                            rf"|\[(?:(?P<b>{_LVL})[:|](?P<bn>[\w.-]+)|(?P<cn>[\w.-]+)[:|](?P<c>{_LVL}))\][ \t]"
                            rf"|(?P<dn>[a-z][\w.-]{{0,30}}): (?P<d>WARNING|ERROR|CRITICAL)[ :]"
                            rf"|(?P<en>[A-Za-z_][\w.]{{0,60}}) - (?P<e>{_LVL}) - "
                            rf"|\[(?P<fn>[\w.-]{{1,40}})\]\[(?P<f>{_LVL})\] ?"
                            r"|(?P<gn>log4j):(?P<g>WARN|ERROR|INFO|DEBUG) "
                            r"|==\d+==(?P<h>ERROR|WARNING): "
                            r"|(?P<i>INFO|WARN|ERROR) in \S"
                            r"|[ \t]*(?P<k>TRACE|DEBUG|INFO|WARN|ERROR) (?P<kn>[a-z_]\w*(?:::\w+)+): "
                            r"|[ \t]*(?P<j>DEBUG|INFO|WARNING|ERROR|CRITICAL) +(?=\S)"
                            r"|\[(?P<ln>[\w.-]{1,40})\] \[(?P<l>debug|info|warning|error|critical) *\] ")
_TIMELESS_GROUPS = (("a", None), ("b", "bn"), ("c", "cn"), ("d", "dn"), ("e", "en"), ("f", "fn"), ("g", "gn"),
                    ("h", None), ("i", None), ("j", None), ("k", "kn"), ("l", "ln"))
# rich's RichHandler pads the level to eight and a column's blank (LogRender: level_width=8), and leaves the time
# column blank when a record has the time of the one before: "                    INFO     enable LoRA ...".
_RICH_LEVEL_COLUMN = 9
# A month and day with no year before a level word: loguru formats such as nonebot's
# "{time:MM-DD HH:mm:ss} [{level}] {name} | {message}".
_MONTH_DAY = re.compile(rf"(\d\d)-(\d\d) (\d\d:\d\d:\d\d)(?:[,.](\d{{1,9}}))? +(?=\[?(?:{_LVL})\b)")
# A time of day with no date before a level word: log4j's "%d{HH:mm:ss,SSS} %-5p %c - %m%n" (Flink's, Spark's and
# Hadoop's consoles). Without the level word a time of day may be an elapsed time, and is not read.
_CLOCK = re.compile(rf"(\d\d:\d\d:\d\d)(?:[,.](\d{{1,9}}))? +(?=(?:{_LVL})\b)")
# log4j's console pattern in Spark's and Hadoop's templates (conf/log4j2.properties.template, log4j.properties):
# "%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n", a two-digit year first ("24/06/01 12:00:00 INFO SparkContext: ..."), which
# a slashed date's month-first reading would take for the 24th of June 2001.
_LOG4J_YY = re.compile(rf"(\d\d)/(\d\d)/(\d\d) (\d\d:\d\d:\d\d)(?:[,.](\d{{1,9}}))? ({_LVL}) ([\w$.-]+): ")
# Heads with a time of day and a level that _CLOCK's "time, then the level word" does not cover: logback's default
# pattern (BasicConfigurator, "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n": DL4J's and other JVM
# trainers' consoles) with its thread in brackets between them; Elixir's Logger console ("\n$time $metadata[$level]
# $message\n": metadata as key=value pairs, the level in lower case in brackets); PhysicsNeMo's PythonLogger
# ("[%(asctime)s - %(name)s - %(levelname)s] %(message)s" with datefmt "%H:%M:%S").
_CLOCK_HEADS = re.compile(rf"(?P<t>\d\d:\d\d:\d\d)(?:[,.](?P<f>\d{{1,9}}))? "
                          rf"(?:\[[^\]\s]{{1,60}}\] +(?P<a>{_LVL}) +(?P<an>[\w$.-]+) - "
                          r"|(?:[a-z_]\w*=\S+ )*"
                          r"\[(?P<b>debug|info|notice|warning|warn|error|critical|alert|emergency)\] )")
# env_logger's default format (src/fmt/mod.rs DefaultFormat): "[" RFC 3339 time, the level padded to five, the
# module path "] " (Rust trainers: burn, candle's examples): "[2024-06-01T12:00:00Z INFO  burn_train::learner] ...".
_BRACKETED_TARGET = re.compile(r" +([A-Za-z_]\w*(?:::\w+)*)\] ")
# Layouts that write the level and the logger's name right after a date and time (the time read by _ISO), each from its
# printer: Ruby's Logger::Formatter ("%s, [%s #%d] %5s -- %s: %s\n": the pid, the level right-aligned in five, the
# progname, which may be empty); HashiCorp's go-hclog (intlogger.go logPlain: the time as
# "2006-01-02T15:04:05.000Z0700", the level in brackets padded to seven, "[INFO] " and "[WARN] ", then a blank and
# "name: "); NLog's default layout
# ("${longdate}|${level:uppercase=true}|${logger}|${message}"); swift-log's StreamLogHandler ("\(timestamp) \(level)
# \(label) :\(metadata) [\(source)] \(message)", the level in lower case); coloredlogs' DEFAULT_LOG_FORMAT
# ("%(asctime)s %(hostname)s %(name)s[%(process)d] %(levelname)s %(message)s"); Monolog's LineFormatter
# ("[%datetime%] %channel%.%level_name%: %message% %context% %extra%").
_AFTER_TIME_HEADS = (
    re.compile(r" #\d+\] +(?P<level>[A-Z]+) -- (?P<logger>[^\s:]*): "),
    re.compile(r"(?:(?<=\.\d\d\dZ)|(?<=\.\d\d\d[+-]\d\d\d\d)) "
               r"\[(?:(?P<level>INFO|WARN)\]  |(?P<level5>TRACE|DEBUG|ERROR)\] )(?P<logger>[A-Za-z][\w./-]*): "),
    re.compile(r"\|(?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\|(?P<logger>[\w.`<>+-]+)\|"),
    re.compile(r" (?P<level>trace|debug|info|notice|warning|error|critical) (?P<logger>\S+) :(?= )"),
    re.compile(rf" [\w.-]+ (?P<logger>[\w.-]+)\[\d+\] (?P<level>{_LVL}) "),
    re.compile(r"\] (?P<logger>[\w.-]+)\.(?P<level>DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY): "),
)
# CodeCarbon's logger (codecarbon/external/logger.py): "[%(name)s %(levelname)s @ %(asctime)s] %(message)s" with
# datefmt "%H:%M:%S", "[codecarbon INFO @ 06:14:27] Energy consumed for RAM : ...".
_NAME_LEVEL_AT_CLOCK = re.compile(rf"\[([\w.-]+) ({_LVL}) @ (\d\d:\d\d:\d\d)\] ?")
_NEMO_CLOCK = re.compile(rf"\[(\d\d:\d\d:\d\d) - ([\w.-]+) - ({_LVL})\] ")
# A settings listing's leader: DeepSpeedConfig.print writes "  {} {} {}".format(arg, "." * (29 - len(arg)), value)
# and Megatron's _print_args '.' * (48 - len(arg)); a dict after it is that setting's value
# ("optimizer_params ............. {'lr': 1e-06, ...}"), not a record of training state.
# Monolog's LineFormatter ends a line with "%context% %extra%", an empty extra written as "[]": the record a line
# ends with is the context before it ("... epoch finished {"epoch":3,"loss":0.4321} []").
_EMPTY_EXTRA = " []"
_LEADER = re.compile(r"([A-Za-z_]\w*) \.{2,} ?\Z")


def norm_level(word: str | None) -> str | None:
    return LEVELS.get(word.upper()) if word else None


def parse_line(text: str, producer_ts_ms: int) -> Parsed:
    """Parse one head line; unknown formats give an empty ``Parsed`` (timestamp left to the caller).

    A line behind a stream prefix the merger knows (docker compose's ``web-1  | ``, vLLM's ``(VllmWorker rank=1
    pid=N) ``, pm2's, kubectl's, horovodrun's; :func:`streams.assemble.merger.split_prefix`) whose head gave no level
    is read again without it: the program's own head is behind it."""
    p = _parse_line(text, producer_ts_ms)
    if p.level is None and text:
        _key, body, _rank, _relay = split_prefix(text)
        if 0 < len(body) < len(text):
            q = _parse_line(body, producer_ts_ms)
            if p.ts_ms is None and p.fmt is None and (q.level is not None or q.ts_ms is not None):
                return q  # nothing read through the prefix: the body is the line
            if q.level is not None:
                p.level, p.logger = q.level, p.logger or q.logger
    return p


def _parse_line(text: str, producer_ts_ms: int) -> Parsed:
    p = Parsed()
    body = text
    c = body[:1]
    if c in {"[", "("}:
        m = _PROC_PREFIX.match(body)
        if m:
            body = body[m.end():]
            c = body[:1]
    elif c in {" ", "\t"}:
        c = body.lstrip(" \t")[:1]
    if "\x1b" in body:  # torchtitan, rich and colorlog colour their fields: the codes are no part of a value
        body = _ANSI.sub("", body)
        c = body[:1]
    record = _ending_record(body)
    if record is not None:
        obj, at, fmt = record
        head = body[:at]
        if head[-2:] in (". ", "..") and (lm := _LEADER.search(head, max(0, len(head) - 160))) is not None:
            _head(head, c, p, producer_ts_ms)
            p.attributes[lm.group(1)] = body[at:].strip()  # a setting, kept as text (the builder bounds it)
            p.fmt, p.wide = "settings", True
            return p
        if head.strip():
            end = _head(head, c, p, producer_ts_ms)
            p.fmt = f"{p.fmt}+{fmt}" if p.fmt else fmt
        else:
            p.fmt = fmt
        lift_record(obj, p)
        if head.strip():
            _record_head(head[end:], body[end:], p)
        settle_settings(p)
        return _settled(p)
    if c.isalpha() and _whole_line_record(body, c, p):
        return _settled(p)
    at = _head(body, c, p, producer_ts_ms)
    if p.fmt != "nccl":  # NCCL's own debug lines print no step fields
        _step_fields(body[at:] if at else body, p)
    return _settled(p)


def _ending_record(body: str) -> tuple[dict, int, str] | None:
    """The structured record the line ends with (:func:`streams.assemble.records.find_record`), Monolog's empty
    extra after it aside."""
    last = body[-1:]
    if last == "}" or (last in (" ", "\t", "\r") and body.rstrip()[-1:] == "}"):
        return find_record(body)
    if last == "]" and body.endswith(_EMPTY_EXTRA) and body[:-len(_EMPTY_EXTRA)].rstrip()[-1:] == "}":
        return find_record(body[:-len(_EMPTY_EXTRA)])
    return None


# java.util.logging's SimpleFormatter (its default format "%1$tb %1$td, %1$tY %1$tl:%1$tM:%1$tS %1$Tp %2$s%n%4$s:
# %5$s%6$s%n"): a header line with the time (a 12-hour clock, its hour unpadded) and the source's class and method,
# then the level and the message on a line of their own ("INFO: Epoch 3 finished, loss=0.4321", "SEVERE: ...").
_JUL_HEADER = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d\d), (\d{4}) (\d{1,2}):(\d\d):(\d\d) "
                         r"([AP]M) ([\w$.]+)(?: [\w$<>]+)?\s*")


def head_over_lines(texts: list[str], producer_ts_ms: int) -> Parsed | None:
    """A block whose head is spread over its first two lines (java.util.logging's :data:`_JUL_HEADER`): the second
    line read as the head, with the first line's time and class; None for any other block."""
    m = _JUL_HEADER.fullmatch(texts[0]) if texts[0][:1].isupper() and len(texts) > 1 else None
    if m is None:
        return None
    p = parse_line(texts[1], producer_ts_ms)
    if p.level is None:
        return None
    hour = int(m.group(4)) % 12 + (12 if m.group(7) == "PM" else 0)
    p.ts_ms = _ms(int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)), f"{hour:02d}:{m.group(5)}:{m.group(6)}", None)
    p.logger = p.logger or m.group(8)
    p.fmt = "java_util_logging"
    return p


def record_over_lines(texts: list[str], producer_ts_ms: int, p: Parsed) -> None:
    """A dict repr printed over a block's lines into ``p`` (its figures; what the first line's head said stays): the
    TensorFlow Object Detection API's model_lib_v2 logs tf.logging.info(pprint.pformat(logged_dict_np, width=40)),
    one "'Loss/total_loss': 0.57955," a line behind absl's head."""
    if "{" not in texts[0] or texts[-1].rstrip()[-1:] != "}":
        return
    q = parse_line(" ".join([texts[0].rstrip(), *(t.strip() for t in texts[1:])]), producer_ts_ms)
    for name, value in q.metrics.items():
        p.metrics.setdefault(name, value)
    if p.step is None:
        p.step, p.max_steps = q.step, p.max_steps if p.max_steps is not None else q.max_steps
    if p.epoch is None:
        p.epoch = q.epoch


def _record_head(head: str, rest: str, p: Parsed) -> None:
    """What the text before a record says of it (``rest``: from there to the line's end): accelerate's "epoch 0:
    {'accuracy': ...}" its epoch (the record's own wins); ParlAI's "valid:{'exs': 1000, ..., 'loss': 28.08}" its
    split."""
    if "poch" in head or "tep" in head or "ter" in head:
        lift_counters(head, p)
    if "loss" in p.metrics:
        evaluation_losses(rest, p)


def _step_fields(body: str, p: Parsed) -> None:
    # a boosting round's report (streams.assemble.rounds) may name no training word: it goes first
    if not (("\t" in body or "Iteration:" in body) and lift_round(body, p)):
        lift_step_line(body, p)


def _whole_line_record(body: str, c: str, p: Parsed) -> bool:
    """A line that is one record from end to end: a Prometheus sample, or logfmt."""
    if "{" in body and body[-1:].isalnum():
        m = _PROM.fullmatch(body)
        if m is not None and _prometheus(m, p):
            return True
    if "=" in body and body[-1:].isdigit() and (m := _INFLUX.fullmatch(body)) is not None:
        _influx(m, p)
        return True
    if c.islower() and "=" in body[:12]:
        fields = logfmt(body)
        if fields is not None:
            p.fmt = "logfmt"
            lift_record(fields, p)
            settle_settings(p)
            return True
    return False


def _influx(m: re.Match, p: Parsed) -> None:
    """A line of InfluxDB's line protocol into ``p``: its fields as a record's keys, its tags into attributes."""
    tags, fields, ts = m.groups()
    record: dict = {}
    for k, v in _INFLUX_PAIR.findall(fields):
        if v[:1] == '"':
            record[_INFLUX_ESCAPE.sub(r"\1", k)] = _INFLUX_ESCAPE.sub(r"\1", v[1:-1])
        elif v not in ("t", "T", "true", "True", "TRUE", "f", "F", "false", "False", "FALSE"):
            record[_INFLUX_ESCAPE.sub(r"\1", k)] = v[:-1] if _INFLUX_INT.fullmatch(v) else v
    p.fmt = "influx"
    lift_record(record, p)
    for k, v in _INFLUX_PAIR.findall(tags):
        p.attributes.setdefault(_INFLUX_ESCAPE.sub(r"\1", k), _INFLUX_ESCAPE.sub(r"\1", v))
    p.ts_ms = epoch_ms(int(ts))
    settle_settings(p)


def _prometheus(m: re.Match, p: Parsed) -> bool:
    """A Prometheus sample into ``p``: False when its value is no number (then it is ordinary text)."""
    name, labels, value, ts = m.groups()
    if number(value)[0] is None:
        return False
    p.fmt, p.wide = "prometheus", True
    lift_value(p, name, norm(name), value)
    for k, v in _PROM_LABEL.findall(labels):
        p.attributes.setdefault(k, v)
    if ts is not None:
        p.ts_ms = epoch_ms(int(ts))
    return True


def _settled(p: Parsed) -> Parsed:
    if "running_loss" in p.metrics:
        settle_loss(p.metrics)
    if "bare_norm" in p.metrics:
        settle_norm(p.metrics, p.step is not None or p.epoch is not None)
    if "memory_mb" in p.metrics:
        settle_memory(p.metrics, p.step is not None or p.epoch is not None)
    return p


def _head(body: str, c: str, p: Parsed, producer_ts_ms: int) -> int:  # noqa: PLR0911, PLR0912, PLR0915 - first-char dispatch
    """Time, level and logger of the line's head, into ``p``; returns where the head ends (0: no head)."""
    m = None
    if c == "[":
        m = _DS.match(body)
        if m:
            p.ts_ms = _ms(*_ymd(m.group(1)), m.group(1)[11:], m.group(2))
            p.level, p.logger, p.fmt = norm_level(m.group(3)), m.group(4), "deepspeed"
            return m.end()
        m = _HF.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(2), "hf"
            p.ts_ms = _ms(*_ymd(m.group(3)), m.group(3)[11:], m.group(4))
            return m.end()
        m = _APACHE.match(body)
        if m:
            mo = _MONTHS.get(m.group(1))
            p.ts_ms = _ms(int(m.group(4)), mo, int(m.group(2)), m.group(3), None) if mo else None
            p.level, p.fmt = norm_level(m.group(5)), "apache"
            return m.end()
        m = _GLOG.match(body)
        if m:
            _glog(m, p, producer_ts_ms)
            return m.end()
        m = _LIGHTGBM.match(body) if body.startswith("[LightGBM]") else None
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), "LightGBM", "lightgbm"
            return m.end()
        m = _NAME_LEVEL_AT_CLOCK.match(body) if " @ " in body[:60] else None
        if m:
            p.ts_ms, p.fmt = _clock(producer_ts_ms, m.group(3), None), "clock"
            p.level, p.logger = norm_level(m.group(2)), m.group(1)
            return m.end()
        m = _NEMO_CLOCK.match(body) if body[3:4] == ":" else None
        if m:
            p.ts_ms, p.fmt = _clock(producer_ts_ms, m.group(1), None), "clock"
            p.level, p.logger = norm_level(m.group(3)), m.group(2)
            return m.end()
        m = _TENSORPACK.match(body) if body[1:5].isdigit() else None
        if m:
            p.ts_ms = _yearless(producer_ts_ms, int(m.group(1)), int(m.group(2)), m.group(3), None)
            p.level, p.fmt = _ZEROLOG_LEVELS[m.group(4)] if m.group(4) else "INFO", "tensorpack"
            return m.end()
    elif c in "IWEF" and c:
        m = _GLOG.match(body)
        if m:
            _glog(m, p, producer_ts_ms)
            return m.end()
    if c.isupper():
        m = _VLLM.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(5), "vllm"
            p.ts_ms = _yearless(producer_ts_ms, int(m.group(2)), int(m.group(3)), m.group(4), None)
            return m.end()
        m = _PYBASIC.match(body)
        if m:
            p.level, p.logger, p.fmt = norm_level(m.group(1)), m.group(2) or None, "python_basic"
            return m.end()
        m = _SYSLOG.match(body)
        if m:
            p.ts_ms = _yearless(producer_ts_ms, _MONTHS[m.group(1)], int(m.group(2)), m.group(3), m.group(4))
            p.fmt = "syslog"
            lm = _LEVEL_WORD.match(body, m.end())  # a program's own head in that layout (Rust tracing's " INFO")
            if lm:
                p.level = norm_level(lm.group(1))
                return lm.end()
            return m.end()
    elif c.isdigit():
        m = _ZAP.match(body)
        if m and norm_level(m.group(2)):
            p.ts_ms = int(float(m.group(1)) * 1000)
            p.level, p.logger, p.fmt = norm_level(m.group(2)), m.group(3), "zap"
            return m.end()
        m = _RADEONTOP_TIME.match(body)
        if m:
            p.ts_ms, p.fmt = int(m.group(1)) * 1000 + int(m.group(2)) // 1000, "radeontop"
            return m.end()
        m = _ZEROLOG_CONSOLE.match(body)
        if m:
            p.level, p.fmt = _ZEROLOG_LEVELS[m.group(1)], "zerolog_console"
            return m.end()
        m = _HDFS.match(body)
        if m:
            yy, mon, d, h, mi, s, lvl = m.groups()
            p.ts_ms = _ms(2000 + int(yy), int(mon), int(d), f"{h}:{mi}:{s}", None)
            p.level, p.fmt = norm_level(lvl), "hdfs"
            return m.end()
        m = _ANDROID.match(body)
        if m:
            p.ts_ms = _yearless(producer_ts_ms, int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
            p.level, p.fmt = norm_level(m.group(5)), "android"
            return m.end()
        m = _LOG4J_YY.match(body) if body[2:3] == "/" else None
        if m:
            p.ts_ms = _ms(2000 + int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5))
            p.level, p.logger, p.fmt = norm_level(m.group(6)), m.group(7), "log4j"
            return m.end()
        m = _COMPACT.match(body)
        if m:
            g = m.groups()
            p.ts_ms, p.fmt = _ms(int(g[0]), int(g[1]), int(g[2]), f"{g[3]}:{g[5]}:{g[6]}", g[7]), "compact"
            lm = _NAME_LEVEL.match(body, m.end())
            if lm is not None:
                p.level, p.logger = norm_level(lm.group(2)), lm.group(1)
                return lm.end()
            return m.end()
        m = _MONTH_DAY.match(body) if body[2:3] == "-" else None
        if m:
            p.ts_ms = _yearless(producer_ts_ms, int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
            p.fmt = "month_day"
            lm = _LEVEL_FIRST.match(body, m.end())
            p.level = norm_level(lm.group(1)) if lm else None
            return lm.end() if lm else m.end()
        m = _CLOCK.match(body) if body[2:3] == ":" else None
        if m:
            p.ts_ms, p.fmt = _clock(producer_ts_ms, m.group(1), m.group(2)), "clock"
            lm = _LEVEL_WORD.match(body, m.end())
            p.level = norm_level(lm.group(1)) if lm else None
            return lm.end() if lm else m.end()
        m = _CLOCK_HEADS.match(body) if body[2:3] == ":" else None
        if m:
            p.ts_ms, p.fmt = _clock(producer_ts_ms, m.group("t"), m.group("f")), "clock"
            p.level, p.logger = norm_level(m.group("a") or m.group("b")), m.group("an")
            return m.end()
    m = _NCCL.search(body, 0, 160) if "NCCL" in body else None
    if m:
        p.level, p.logger, p.fmt = norm_level(m.group(5)), "nccl", "nccl"
        p.attributes.update(nccl_host=m.group(1), pid=m.group(2), tid=m.group(3), device=m.group(4))
        if m.start():  # Ray / verl put "[yyyy-mm-dd hh:mm:ss] " in front
            tm = _ISO.search(body, 0, m.start())
            p.ts_ms = _iso(tm) if tm else None
        return m.end()
    m = _ISO.search(body, 0, 80)
    if m:
        p.ts_ms, p.fmt = _iso(m), "iso"
        if p.ts_ms is not None and m.group(8) is None and body.startswith(" ", m.end()):
            p.ts_ms -= zone_after_ms(body, m.end())
    elif "/" in body[:40]:  # a slashed date heads its line (behind a level word at most)
        m = _SLASHED.search(body, 0, 40)
        if m:
            p.ts_ms, p.fmt = _slashed(m), "slashed"
    if m is None and ":" in body[:80]:
        m = _CTIME.search(body, 0, 80)
        if m:
            p.ts_ms = _ms(int(m.group(5)), _MONTHS[m.group(1)], int(m.group(2)), m.group(3), None)
            if p.ts_ms is not None and m.group(4):
                p.ts_ms -= zone_after_ms(m.group(4), 0)
            p.fmt = "ctime"
    if m:
        at = m.start()
        for head in _AFTER_TIME_HEADS:
            hm = head.match(body, m.end())
            if hm is not None:
                p.level = norm_level(hm.group("level") or hm.groupdict().get("level5"))
                p.logger = hm.group("logger") or None
                return hm.end()
        if 2 <= at <= 40 and body[at - 1] == " " and body[at - 2] in "DIWEF" and not body[at - 3:at - 2].isalnum():
            p.level = norm_level(body[at - 2])  # NeMo: "[NeMo I 2024-06-01 12:00:00 exp_manager:396]"
            return m.end()
        lm = _LEVEL_WORD.search(body, m.end(), m.end() + 60)
        if lm:
            p.level = norm_level(lm.group(1))
            if at == 1 and c == "[" and (tm := _BRACKETED_TARGET.match(body, lm.end())) is not None:
                p.logger = tm.group(1)
                return tm.end()
            return lm.end()
        lm = _LEVEL_FIRST.match(body) or _LEVEL_WORD.search(body, 0, m.start())  # (Paddle's "LAUNCH INFO <time>")
        if lm:
            p.level = norm_level(lm.group(1))
        if body.startswith(": ", m.end()):  # nnU-Net's print_to_log_file writes "%s:" % datetime.now() before its text
            return m.end() + 1
        return m.end()
    if c == "[" and (lm := _LEVEL_ALONE.match(body)) is not None:
        p.level, p.fmt = norm_level(lm.group(1)), "level"
        return lm.end()
    if (c in "[=" or c.isalpha()) and (lm := _TIMELESS_HEAD.match(body)) is not None:
        level, name = next((g, n) for g, n in _TIMELESS_GROUPS if lm.group(g))
        if level == "j" and lm.end() - lm.start("j") != _RICH_LEVEL_COLUMN:
            return 0
        p.level, p.logger, p.fmt = norm_level(lm.group(level)), lm.group(name) if name else None, "level"
        return lm.end()
    return 0


_YEAR_OF_DAY: dict[int, int] = {}


def _year(ts_ms: int) -> int:
    """The UTC year of the producer's time (formats without a year take it), cached per day."""
    day = ts_ms // _DAY_MS
    year = _YEAR_OF_DAY.get(day)
    if year is None:
        year = time.gmtime(ts_ms / 1000).tm_year
        if len(_YEAR_OF_DAY) < 4096:
            _YEAR_OF_DAY[day] = year
    return year


def _yearless(producer_ts_ms: int, mo: int, d: int, hms: str, frac: str | None) -> int | None:
    """A time printed without its year takes the producer's year. (A December line read in January
    lands a year ahead: the time window flags it and the event keeps its source's last good time.)"""
    return _ms(_year(producer_ts_ms), mo, d, hms, frac)


def _clock(producer_ts_ms: int, hms: str, frac: str | None) -> int | None:
    """A time of day with no date: the latest such time not after the producer's time (a few minutes of clock skew
    allowed), so a line written just before midnight and read after it keeps its day."""
    day = producer_ts_ms - producer_ts_ms % _DAY_MS
    ts = _ms(1970, 1, 1, hms, frac)
    if ts is None:
        return None
    ts += day
    return ts - _DAY_MS if ts > producer_ts_ms + _CLOCK_SKEW_MS else ts


def _ymd(s: str) -> tuple[int, int, int]:
    return int(s[:4]), int(s[5:7]), int(s[8:10])


def _glog(m: re.Match, p: Parsed, producer_ts_ms: int) -> None:
    lvl, year, mo, d, hms, epoch, frac, pid, loc = m.groups()
    if epoch:
        p.ts_ms = int(epoch) * 1000 + int((frac or "0")[:3].ljust(3, "0"))
    else:
        p.ts_ms = (_ms(int(year), int(mo), int(d), hms, frac) if year
                   else _yearless(producer_ts_ms, int(mo), int(d), hms, frac))
    p.level, p.logger, p.fmt = norm_level(lvl), loc, "glog"
    if pid:
        p.attributes["pid"] = pid
