"""The time formats agents put in their envelopes, to epoch milliseconds (None when unreadable)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from streams.assemble.times import MAX_MS  # the contract's times are dates: years 1970 to 9999

_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(\.\d+)?(.*)$")
# Epoch numbers above this are milliseconds, not seconds (it is the year 5138 in seconds).
_MS_FLOOR = 1e11


def agent_ms(value: int | None) -> int | None:
    """An agent's time for a line, or None (the record's own time is used) when no date can hold it."""
    if value is None or value.__class__ is not int or not 0 < value <= MAX_MS:  # (True is an int to Python)
        return None
    return value


def rfc3339_ms(value: str | None) -> int | None:
    """RFC 3339 with up to nanoseconds -> epoch ms."""
    if not value or not isinstance(value, str):
        return None
    s = value.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    m = _RFC3339.match(s)
    if not m:
        return None
    frac = (m.group(2) or ".0")[:7]  # Python parses at most microseconds
    try:
        dt = datetime.fromisoformat(m.group(1) + frac + (m.group(3) or "+00:00"))
    except (ValueError, OverflowError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return agent_ms(int(dt.timestamp() * 1000))


def epoch_ms(value: float) -> int | None:
    """Epoch seconds (Fluent Bit's ``@timestamp`` double) or milliseconds -> epoch ms."""
    if value.__class__ is int and not 0 < value <= MAX_MS:  # (an int past a float's range: isfinite raises)
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return agent_ms(int(value) if value > _MS_FLOOR else int(value * 1000))


def digits(text: str, most: int = 19) -> bool:
    """Whether ``text`` is a number of ASCII digits ``int()`` reads, at most ``most`` of them. (``str.isdigit``
    alone also takes superscripts and other digits ``int()`` refuses, such as "²".)"""
    return text.isascii() and text.isdigit() and len(text) <= most


def unix_nano_ms(value: object) -> int | None:
    """OTLP's ``time_unix_nano`` (an int, or a decimal string in OTLP JSON); 0 means unset."""
    if isinstance(value, str):
        value = int(value) if digits(value, 20) else 0  # (a uint64: 20 digits at most)
    if not isinstance(value, int) or value <= 0:
        return None
    return agent_ms(value // 1_000_000)
