"""Structured records inside a line: JSON, Python dict reprs and logfmt, wherever the line puts them.

- JSON spaced any way (``{ "timestamp": ...}``, tabs, trailing blanks), alone, behind a per-process
  prefix, or after a ``<time> <LEVEL>`` head: the grok shape ``%{TIMESTAMP_ISO8601} %{LOGLEVEL} {json}``.
  Python's ``json`` writes NaN and Infinity bare, and reads them back.
- Python dict reprs, as HF Trainer and ms-swift print their logs (``print(logs)``,
  ``tqdm.write(str(logs))``): read with ``ast.literal_eval`` (no code runs) once the numbers it cannot
  read are replaced: ``nan``, ``inf``, ``-inf`` (``repr(float)``), NumPy 2's ``np.float64(0.5)``, a 0-d
  ``array(0.5, dtype=float32)`` and torch's ``tensor(1.2, device='cuda:0')``.
- logfmt, as Go's ``log/slog`` text handler, logrus and go-kit write it: ``time=... level=INFO msg="..."``,
  recognised only when the whole line is ``key=value`` pairs and its first key is a time, level or message.

Limits are checked before parsing: a record longer than ``MAX_RECORD_CHARS`` or with more than
``MAX_BRACKETS`` brackets (deeply nested input) is left as text, and a parser's own recursion error is
caught: a hostile line costs nothing but its own fields.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from streams.assemble import jsontext

MAX_RECORD_CHARS = 64 * 1024
MAX_BRACKETS = 512

_NAN = "\x00nan"  # literal_eval has no NaN literal: a sentinel string, turned back into NaN after
_PY_FIX = re.compile(
    r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""  # a string: left alone
    r"|(?<![\w.])(-?)(nan|inf)(?![\w.(])"  # repr(float('nan')), repr(float('-inf'))
    r"|\b(?:np|numpy|torch)\.\w+\(\s*(-?)(nan|inf|[-+\d.eE]+)\s*\)"  # np.float64(0.5)
    # tensor(1.2, device='cuda:0'); a 0-d NumPy array, array(2.3456, dtype=float32), and JAX's Array(...), as
    # EasyLM's train loops print jax.device_get(metrics) with pprint.pformat
    r"|\b(?:tensor|array|Array)\(\s*(-?)(nan|inf|[-+\d.eE]+)\s*(?:,[^()]*)?\)"
)


def _fix(m: re.Match) -> str:
    if m.group(1) is not None:
        return m.group(1)
    sign, word = next((m.group(i), m.group(i + 1)) for i in (2, 4, 6) if m.group(i + 1) is not None)
    if word == "nan":
        return repr(_NAN)
    if word == "inf":
        return "-1e999" if sign else "1e999"  # a float literal too large for a double is inf
    return sign + word


def _restore_nan(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _restore_nan(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore_nan(v) for v in obj]
    return math.nan if obj == _NAN else obj


def python_dict(text: str) -> dict | None:
    """A Python dict repr as a dict (NaN and Inf kept), or None."""
    fixed = _PY_FIX.sub(_fix, text)
    try:
        obj = ast.literal_eval(fixed)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    if jsontext.may_hold_lone_surrogates(fixed):
        obj = jsontext.scrub(obj)
    return _restore_nan(obj) if "\\x00nan" in fixed else obj


def json_dict(text: str) -> dict | None:
    try:
        obj = jsontext.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _within_limits(text: str) -> bool:
    return len(text) <= MAX_RECORD_CHARS and text.count("{") + text.count("[") <= MAX_BRACKETS


def find_record(text: str) -> tuple[dict, int, str] | None:
    """The record a line ends with: (the dict, where it starts, "json" or "pydict"), or None.

    A record starts at a ``{`` followed (after blanks) by a quote or ``}``; the first three such
    places are tried, so a ``{`` earlier in the message does not hide the record.
    """
    s = text.rstrip()
    if not s.endswith("}"):
        return None
    i = s.find("{")
    tries = 0
    n = len(s)
    while i >= 0 and tries < 3:
        j = i + 1
        while j < n and s[j] in " \t":
            j += 1
        quote = s[j] if j < n else ""
        if quote in ("\"", "'"):
            tries += 1
            body = s[i:]
            if not _within_limits(body):
                return None
            if quote == "\"":
                obj = json_dict(body)
                if obj is not None:
                    return obj, i, "json"
            obj = python_dict(body)  # a Python repr (single quotes, or nan in a double-quoted dict)
            if obj is not None:
                return obj, i, "pydict"
        i = s.find("{", i + 1)
    return None


# The keys a logfmt line starts with (log15 and Grafana write ``t=`` first: ``t=2024-... lvl=info msg=...``).
_LOGFMT_HEAD = re.compile(r"(?:time|ts|t|timestamp|level|lvl|msg|caller)=")
_LOGFMT_PAIR = re.compile(r"([A-Za-z_@][\w.@/-]*)=(\"(?:[^\"\\]|\\.)*\"|[^\s\"]*)(?:[ \t]+|\Z)")


def logfmt(text: str) -> dict | None:
    """A logfmt line as a dict, or None when any part of the line is not a ``key=value`` pair."""
    s = text.rstrip()
    if not _LOGFMT_HEAD.match(s) or len(s) > MAX_RECORD_CHARS:
        return None
    out: dict[str, Any] = {}
    pos, n = 0, len(s)
    while pos < n:
        m = _LOGFMT_PAIR.match(s, pos)
        if m is None or m.end() == pos:
            return None
        value = m.group(2)
        if value.startswith("\""):
            try:
                value = jsontext.loads(value)  # Go's strconv.Quote escapes as JSON does, for what logs hold
            except ValueError:
                value = value[1:-1]
        out[m.group(1)] = value
        pos = m.end()
    return out if len(out) >= 2 else None
