"""JSON from untrusted input, parsed into values that every later step can write.

CPython's ``json`` turns a ``\\ud800`` escape with no partner into a lone surrogate, a ``str`` that
no UTF-8 encoder (Avro's, Elasticsearch's, a terminal's) accepts, and it reads bytes with
``surrogatepass``, so the bytes of an encoded surrogate become one too. Bytes are decoded here as
every other line is (invalid UTF-8 as U+FFFD), and a lone surrogate from an escape is replaced by
U+FFFD, where it enters. The look for such an escape is a regex search: JSON without one costs
nothing more.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_ESCAPE_S = re.compile(r"\\(?:u|U0000)[dD][89abcdefABCDEF]")
_LONE = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes) -> Any:
    """``json.loads``, with lone surrogates in any string (keys included) replaced by U+FFFD."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    value = json.loads(text)
    if _SURROGATE_ESCAPE_S.search(text) is None:
        return value
    return scrub(value)


def may_hold_lone_surrogates(text: str) -> bool:
    """Whether ``text`` (JSON or a Python literal) has an escape that can make a lone surrogate."""
    return _SURROGATE_ESCAPE_S.search(text) is not None


def scrub(value: Any) -> Any:
    """``value`` with lone surrogates in its strings (and keys, at any depth) replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub(v) for v in value)
    return value
