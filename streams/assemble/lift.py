"""Lifting a record's keys into typed fields: a dict (JSON, Python repr, logfmt) or one ``key: value``
pair of a step line -> :class:`Parsed`.

What a key becomes is decided by its family (:mod:`streams.assemble.keys`); every key no family claims
stays, as text, in ``attributes`` (nested keys joined with dots), and every number also becomes a metric
(a step line's metric point keeps them all). Values are checked against the contract where they are
read: a step that does not fit an Avro ``long`` or an epoch too large for a double is kept as text in
``attributes`` and flagged, never handed to the encoder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from streams.assemble.keys import (
    CANONICAL_METRICS,
    CONFIG_KEYS,
    EPOCH_KEYS,
    EXCEPTION_KEYS,
    LEVEL_KEYS,
    LOGGER_KEYS,
    MAX_STEP_KEYS,
    MESSAGE_KEYS,
    NAMED_VALUE_KEYS,
    NAMED_VALUE_QUALIFIERS,
    PAIRED_LOGGER_KEYS,
    RECORD_META_KEYS,
    STEP_KEYS,
    TASK_KEYS,
    TIME_KEYS,
    TIME_PARTS,
    TRACKER_COUNTERS,
    as_float,
    canonical,
    family,
    is_gpu_product,
    level_of,
    memory_scale,
    norm,
    number,
)
from streams.assemble.times import record_time

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
EPOCH_FAMILY = ("epoch", 1.0)
# A bare decimal number as logfmt printers write one (slog's TextHandler, logrus, go-kit: ``eval_accuracy=0.731``);
# a leading zero (``0042``) is an identifier's text, not a figure.
_LOGFMT_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
MAX_METRICS = 64  # per line: a record with thousands of numbers is not a step line
MAX_DEPTH = 6  # nested dicts deeper than this are kept as JSON text
MAX_TASK_CHARS = 256
MAX_KEPT_CHARS = 256  # a number or a time kept as text: longer is not a number anyone wrote
_ONE_LETTER_MEMORY = frozenset("kmgt")  # detectron2's "1962M", ultralytics' "6.73G"
# The same letters after a count that is not a memory's: picotron's to_readable_format ("Tokens/s: 524.29K",
# "Global batch size: 1.05M") writes thousands and millions.
_SI_COUNT = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_MEMORY_METRICS = frozenset(("gpu_memory_mb", "memory_mb"))

LEVELS = {
    "TRACE": "TRACE", "V": "TRACE", "VERBOSE": "TRACE", "DEBUG": "DEBUG", "D": "DEBUG",
    "INFO": "INFO", "I": "INFO", "NOTICE": "INFO", "INFORMATION": "INFO",
    "WARN": "WARN", "WARNING": "WARN", "W": "WARN",
    "ERROR": "ERROR", "E": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR", "EXCEPTION": "ERROR",
    "CRITICAL": "FATAL", "CRIT": "FATAL", "FATAL": "FATAL", "F": "FATAL", "A": "FATAL", "EMERG": "FATAL",
    "ALERT": "FATAL", "PANIC": "FATAL", "EMERGENCY": "FATAL",
}


@dataclass(slots=True)
class Parsed:
    """What the head line of an event says about it. ``None`` / empty: the line does not say."""

    ts_ms: int | None = None
    level: str | None = None
    logger: str | None = None
    step: int | None = None
    max_steps: int | None = None
    epoch: float | None = None
    metrics: dict = field(default_factory=dict)  # name -> float: every number of a step line
    attributes: dict = field(default_factory=dict)  # key -> text: every key not lifted
    fmt: str | None = None
    task: dict | None = None  # task_id, task_type, model_name, phase, as the record names them
    message: str | None = None  # a record's own message (and exception text)
    time_text: str | None = None  # a record's time as written: kept when the time is out of bounds
    flags: list | None = None  # why values were kept as text: "step_out_of_range", ...
    wide: bool = False  # attributes came from a record or a step line: the builder bounds them
    report: bool = False  # a printer's report of one step (a boosting round): a step line whatever it measures


    def keep_as_text(self, flag: str, key: str, text: str) -> None:
        """A value that does not fit its field: its text stays in ``attributes`` (cut at MAX_KEPT_CHARS),
        with a flag."""
        self.attributes[key] = text[:MAX_KEPT_CHARS]
        if self.flags is None:
            self.flags = []
        if flag not in self.flags:
            self.flags.append(flag)


def text_of(value: Any) -> str:  # noqa: PLR0911 - one return per kind of value
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        except (ValueError, RecursionError):
            return "[unprintable]"
    return str(value)


# A counter printed with C's "%g" past its precision: OpenAI baselines' logger and its copies (Spinning Up,
# improved-diffusion, guided-diffusion) write every value "%-8.3g", so step 1000 reads "1e+03" and 107234 "1.07e+05"
# (the figure as printed). "%g" always signs its exponent and gives it two digits or more.
_G_COUNTER = re.compile(r"[1-9](?:\.\d{1,16})?e\+\d{2,3}")


def _counter(value: Any) -> tuple[int | None, int | None]:
    """A step counter and its total: ``1500``, ``1500.0``, ``"1500"``, ``"1/94"``, ``"10/ 100"``."""
    if isinstance(value, bool):
        return None, None
    if isinstance(value, int):
        return value, None
    if isinstance(value, float):
        return (int(value), None) if value.is_integer() else (None, None)
    if not isinstance(value, str) or len(value) > 64:
        return None, None
    a, sep, b = value.partition("/")
    a, b = a.strip(), b.strip()
    whole, dot, zeros = a.partition(".")
    if dot and zeros and not zeros.strip("0"):  # "794.0": Lightning and verl print counters as floats
        a = whole
    elif "e+" in a and _G_COUNTER.fullmatch(a):
        a = str(int(float(a)))
    if not (a.isascii() and a.isdigit()):
        return None, None
    return int(a), int(b) if sep and b.isascii() and b.isdigit() else None


def _set_counter(p: Parsed, attr: str, n: int, key: str, text: str) -> None:
    if getattr(p, attr) is not None:
        return
    if LONG_MIN <= n <= LONG_MAX:
        setattr(p, attr, n)
    else:
        p.keep_as_text(f"{attr}_out_of_range", key, text)


def _lift_counter(p: Parsed, key: str, nk: str, value: Any) -> bool:
    n, total = _counter(value)
    if n is None:
        return False
    text = text_of(value)
    _set_counter(p, "step" if nk in STEP_KEYS else "max_steps", n, key, text)
    if total is not None:
        _set_counter(p, "max_steps", total, key, text)
    return True


def _lift_unknown(p: Parsed, nk: str, f: float, unit: str | None) -> None:
    """An unknown number: a metric of the line (named for its key and unit)."""
    if len(p.metrics) >= MAX_METRICS:
        return
    name = nk
    if unit in _SI_COUNT and "mem" not in nk:
        f, unit = f * _SI_COUNT[unit], None
    if unit and unit not in ("%", "b"):
        if unit.endswith("b") or unit in _ONE_LETTER_MEMORY:  # a memory figure: in MB, like gpu_memory_mb
            f = f * memory_scale(unit, 1.0)
            unit = "mb"
        if not name.endswith("_" + unit):
            name = f"{name}_{unit}"
    p.metrics.setdefault(name, f)


_SETTLED_LATER = frozenset(("memory_mb", "bare_norm"))


def lift_value(p: Parsed, key: str, nk: str, value: Any, *, keep_unknown: bool = True) -> bool:
    """Counters and metric families. True when ``value`` was used (or kept as flagged text)."""
    nk = canonical(nk)
    if nk in STEP_KEYS or nk in MAX_STEP_KEYS:
        return _lift_counter(p, key, nk, value)
    num, unit = number(value)
    if num is None:
        return False
    f = as_float(num)
    fam = EPOCH_FAMILY if nk in EPOCH_KEYS else family(nk)
    if fam is None:
        if keep_unknown and f is not None:
            _lift_unknown(p, nk, f, unit)
        return False  # an unknown key keeps its text in attributes too
    name, scale = fam
    # nvidia-smi dmon's "mem" column: the memory bus's busy %; ParlAI's report table prints its "gpu_mem" (the share of
    # the GPU's memory allocated) with float_formatter, a fraction's leading zero dropped (".1003"): a share, no amount
    if name in _MEMORY_METRICS and (unit == "%" or (unit is None and isinstance(value, str)
                                                    and value.lstrip()[:1] == ".")):
        if keep_unknown and f is not None:
            _lift_unknown(p, nk, f, unit)
        return False
    if f is None:
        p.keep_as_text(f"{name}_out_of_range", key, text_of(value))
    elif name == "epoch":
        if p.epoch is None:
            p.epoch = f
    elif name not in p.metrics and len(p.metrics) < MAX_METRICS:
        p.metrics[name] = f * memory_scale(unit, scale) if name in _MEMORY_METRICS else f * scale
    # A bare memory figure may not be the GPU's (keys.settle_memory), nor a bare norm the gradients' (settle_norm): its
    # key keeps its text too.
    return name not in _SETTLED_LATER


def _time(p: Parsed, value: Any) -> bool:
    ms = record_time(value)
    if ms is None:
        return False
    if p.time_text is None:
        p.ts_ms, p.time_text = ms, text_of(value)
    return True


def _level(p: Parsed, value: Any, nk: str) -> bool:
    level = level_of(value, nk, LEVELS)
    if level is None:
        return False
    p.level = level
    return True


def _logger(p: Parsed, value: Any, depth: int) -> bool:
    if not isinstance(value, str) or not value or (p.logger is not None and depth):
        return False
    p.logger = value
    return True


def _text_once(own: dict, slot: str, value: Any) -> bool:
    """The record's message or exception text: the first string under one of its keys."""
    if not isinstance(value, str) or slot in own:
        return False
    own[slot] = value
    return True


def _task(p: Parsed, field_name: str, value: Any) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TASK_CHARS:
        return False
    if field_name == "model_name" and is_gpu_product(value):
        return False  # a GPU's product name (DCGM's modelName): kept in attributes
    if p.task is None:
        p.task = {}
    if field_name in p.task:
        return False
    p.task[field_name] = value
    return True


# normalised key -> what the record's key is (the head's fields, then the task's).
_ROLE: dict[str, str] = {
    **dict.fromkeys(TIME_KEYS, "time"), **dict.fromkeys(LEVEL_KEYS | {"levelno"}, "level"),
    **dict.fromkeys(MESSAGE_KEYS, "message"), **dict.fromkeys(EXCEPTION_KEYS, "exception"),
    **dict.fromkeys(LOGGER_KEYS, "logger"),
}


def _lift_named(p: Parsed, nk: str, value: Any, depth: int, own: dict) -> bool:
    """The keys with a role of their own: time, level, message, exception, logger, task fields."""
    role = _ROLE.get(nk)
    if role == "time":
        return _time(p, value)
    if role == "level":
        return _level(p, value, nk)
    if role == "message" or (role == "exception" and value):
        return _text_once(own, role, value)
    if role == "logger":
        return _logger(p, value, depth)
    task_field = TASK_KEYS.get(nk)
    return task_field is not None and _task(p, task_field, value)


def lift_record(obj: dict, p: Parsed) -> None:
    """Every key of a structured record into ``p``: time, level, message, logger, task, counters and
    metrics by family; the rest into ``attributes``. The record's own values win over the line head's."""
    own: dict[str, str] = {}  # the record's message and exception text
    for key, value in obj.items():
        if isinstance(value, dict) and isinstance(key, str) and _ROLE.get(norm(key)) == "time":
            _time_parts(p, value)
    named = _lift_named_value(p, obj) + _yielding_counters(obj)
    for path, leaf, value, depth in _walk(obj, "", 0):
        if value is None:
            continue
        if _set_aside(p, path, leaf, value, depth, named):
            continue
        nk = norm(path)
        if _lift_named(p, nk, value, depth, own) or lift_value(p, path, nk, value, keep_unknown=False):
            continue
        if depth and _under_role(p, path, leaf, value):
            continue
        if depth and lift_value(p, path, norm(leaf), value, keep_unknown=False):
            continue  # {"metrics": {"loss": ...}}: the leaf names the family
        if (depth and isinstance(value, str) and (task_field := TASK_KEYS.get(norm(leaf))) is not None
                and _task(p, task_field, value)):
            continue  # {"logging.googleapis.com/labels": {"task_id": ...}}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            lift_value(p, path, nk, value)  # an unknown number: a metric of the step line, and text
        elif p.fmt == "logfmt" and isinstance(value, str) and _LOGFMT_NUMBER.fullmatch(value):
            lift_value(p, path, nk, value)  # slog, logrus and go-kit print a number bare: the same
        p.attributes[path] = text_of(value)
    _paired_logger(obj, p)
    message, exception = own.get("message"), own.get("exception")
    if exception:
        message = f"{message}\n{exception}" if message else exception
    p.message = message
    p.wide = True


def envelope_figures(fields: dict, p: Parsed) -> None:
    """Figures an agent's envelope carries beside the line (GELF's additional fields, envelopes._gelf) into ``p``; what
    the line itself says wins (a counter or metric already read is kept)."""
    for key, value in fields.items():
        lift_value(p, key, norm(key), value, keep_unknown=False)


def _paired_logger(obj: dict, p: Parsed) -> None:
    """A logger named by a key that says so only beside its printer's other key (keys.PAIRED_LOGGER_KEYS)."""
    for key, beside in PAIRED_LOGGER_KEYS:
        name = obj.get(key)
        if p.logger is None and name.__class__ is str and name and beside in obj:
            p.logger = name
            return


# What a record must measure, besides a learning rate, to be a step's state rather than its settings: a loss, a norm,
# a GPU figure, a throughput or a time (every family but the learning rate's).
MEASURED = CANONICAL_METRICS - {"learning_rate"}


def settle_settings(p: Parsed) -> None:
    """A record that names a learning rate or a step budget but no step, no epoch and nothing measured is a
    configuration dict (``print(config)``, ``logger.info(f"hparams: {vars(args)}")``, a JSON dump of
    TrainingArguments with its ``"max_steps": -1`` meaning "not set"): those values stay as text in
    ``attributes``, never fields."""
    if p.step is not None or p.epoch is not None or (p.max_steps is None and "learning_rate" not in p.metrics):
        return
    if not MEASURED.isdisjoint(p.metrics) or any(k.endswith("loss") for k in p.metrics):
        return
    lr = p.metrics.pop("learning_rate", None)
    if lr is not None:
        p.attributes.setdefault("learning_rate", repr(lr))
    if p.max_steps is not None:
        p.attributes.setdefault("max_steps", str(p.max_steps))
        p.max_steps = None


def _set_aside(p: Parsed, path: str, leaf: str, value: Any, depth: int, named: tuple[str, ...]) -> bool:
    """A leaf read apart, its text kept: the record's own bookkeeping (never a metric of the step line), a named
    value's parts, a setting of the run's configuration, a list of named values."""
    if path in RECORD_META_KEYS or path in named or (depth and _in_config(path)) or (
            isinstance(value, list) and norm(leaf) not in CONFIG_KEYS and _lift_named_list(p, value)):
        p.attributes[path] = text_of(value)
        return True
    return False


def _yielding_counters(obj: dict) -> tuple[str, ...]:
    """A tracker's counter (:data:`TRACKER_COUNTERS`) in a record that names the trainer's step too."""
    if TRACKER_COUNTERS.isdisjoint(obj):
        return ()
    if not any(k not in TRACKER_COUNTERS and isinstance(k, str) and canonical(norm(k)) in STEP_KEYS for k in obj):
        return ()
    return tuple(k for k in obj if k in TRACKER_COUNTERS)


def _in_config(path: str) -> bool:
    """Whether a nested leaf lies under a configuration key (:data:`CONFIG_KEYS`)."""
    return any(norm(part) in CONFIG_KEYS for part in path.split(".")[:-1])


def _named_value(obj: dict) -> tuple[list[str], Any, tuple[str, ...]] | None:
    """(the names to try, the value, the keys used) of a record that names its one metric in a field
    (:data:`NAMED_VALUE_KEYS`); a qualifier (ClearML's series) is tried first in front of the name, then alone."""
    for name_key, value_key in NAMED_VALUE_KEYS:
        name, value = obj.get(name_key), obj.get(value_key)
        if not isinstance(name, str) or not name or value is None or isinstance(value, (bool, dict, list)):
            continue
        names: list[str] = [name]
        used: tuple[str, ...] = (name_key, value_key)
        for qualifier_key in NAMED_VALUE_QUALIFIERS:
            qualifier = obj.get(qualifier_key)
            if isinstance(qualifier, str) and qualifier:
                names, used = [f"{qualifier}/{name}", qualifier, name], (*used, qualifier_key)
        return names, value, used
    return None


def _lift_named_value(p: Parsed, obj: dict) -> tuple[str, ...]:
    """A record's named value as the metric it names (an unknown name stays a metric by that name); the keys used."""
    found = _named_value(obj)
    if found is None:
        return ()
    names, value, used = found
    if number(value)[0] is None:
        return ()
    if not any(lift_value(p, name, norm(name), value, keep_unknown=False) for name in names):
        title = names[-1] if len(names) == 1 else f"{names[-1]}/{names[1]}"  # ClearML's title, then its series
        lift_value(p, title, norm(title), value)
    return used


def _lift_named_list(p: Parsed, items: list) -> bool:
    """A list of named values (MLflow's LogBatch and GetMetricHistory ``metrics``): each one's metric, and the
    step and time they all share. False when it is no such list, or the points of a history (their steps differ:
    no one of them is the record's)."""
    if not items or len(items) > MAX_METRICS or not all(isinstance(i, dict) and _named_value(i) for i in items):
        return False
    if any(i.get("step") != items[0].get("step") for i in items):
        return False
    used: set[str] = set()
    for item in items:
        used.update(_lift_named_value(p, item))
    first = items[0]
    for key, value in first.items():
        if key in used or value is None or isinstance(value, (dict, list)) or any(i.get(key) != value for i in items):
            continue
        nk = norm(key)
        if _ROLE.get(nk) == "time":
            _time(p, value)
        elif canonical(nk) in STEP_KEYS or canonical(nk) in EPOCH_KEYS:
            lift_value(p, key, nk, value, keep_unknown=False)
    return True


def _time_parts(p: Parsed, value: dict) -> None:
    """A time written as seconds and nanoseconds (:data:`TIME_PARTS`): Cloud Logging's
    ``"timestamp": {"seconds": ..., "nanos": ...}``, log4j2's ``"instant": {"epochSecond", "nanoOfSecond"}``."""
    for sec_key, nano_key in TIME_PARTS:
        sec, nanos = value.get(sec_key), value.get(nano_key, 0)
        if type(sec) is int and type(nanos) is int and 0 <= nanos < 1_000_000_000:
            _time(p, sec * 1000 + nanos // 1_000_000)
            return


def _under_role(p: Parsed, path: str, leaf: str, value: Any) -> bool:
    """A leaf of a dict that a time or level key holds: loguru's ``serialize=True`` writes
    ``"time": {"repr": "...", "timestamp": 1717243200.123}`` and ``"level": {"name": "INFO", "no": 20}``
    (Python's level numbers)."""
    role = _ROLE.get(norm(path.rpartition(".")[0].rpartition(".")[2]))
    if role == "time":
        return _time(p, value)
    if role == "level" and (isinstance(value, str) or leaf in ("no", "levelno")):
        return _level(p, value, "levelno" if leaf == "no" else norm(leaf))
    return False


def _walk(obj: dict, prefix: str, depth: int):
    """(dotted path, leaf key, value, depth) of every leaf; dicts deeper than MAX_DEPTH stay whole."""
    for k, v in obj.items():
        key = k if isinstance(k, str) else str(k)
        path = prefix + key
        if isinstance(v, dict) and v and depth < MAX_DEPTH:
            yield from _walk(v, path + ".", depth + 1)
        else:
            yield path, key, v, depth

