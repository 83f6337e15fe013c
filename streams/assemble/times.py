"""Times as logs write them -> UTC epoch milliseconds. Pure and cached: the hot path calls these per line.

Times without a zone are taken as UTC. A number is an epoch time in seconds, milliseconds,
microseconds or nanoseconds, told apart by its size (as Elasticsearch's and Vector's epoch parsers
do); a number below ``MIN_EPOCH_S`` seconds (2001-09-09) is a duration or a counter, not a time.
"""

from __future__ import annotations

import calendar
import math
import re

MIN_EPOCH_S = 1_000_000_000
# The contract's timestamps are epoch ms as Avro longs; Python's datetime (the sinks' day names) ends
# with year 9999, so nothing later may come out of here.
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
MAX_OFFSET_H = 18  # the widest UTC offset ISO 8601 tools accept (java.time.ZoneOffset's bound)

# (open_clip's logger writes its date and time with a comma between them: datefmt "%Y-%m-%d,%H:%M:%S"; Airflow's task
# log a comma and a blank, "[2022-01-20, 15:57:20 UTC]")
ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[ T,]|, )(\d\d):(\d\d):(\d\d)(?:[,.](\d+))?(Z|[+-]\d\d:?\d\d)?")

# Dates written with slashes, zone-less: year first ("2022/10/10 14:37:01", PaddleOCR's logger, nvidia-smi's
# csv "timestamp"), or month first as strftime's ``%x`` and ``%m/%d/%Y`` write them ("10/17/2025 16:31:56"
# nanotron, "10/04/19 14:41:25" XLM); a first number above 12 can only be a day (the European order).
SLASHED = re.compile(r"(?<!\d)(?:(\d{4})/(\d\d)/(\d\d)|(\d\d)/(\d\d)/(\d{4}|\d\d))[ T](\d\d:\d\d:\d\d)(?:[,.](\d+))?"
                     r"(?![\d/])")

# A zone written after a zone-less time, behind a blank: ``date``'s default and Java's ``z`` pattern write an
# abbreviation ("10:00:00 PST"), ``%z`` an offset ("10:00:00 +0900"). Only the abbreviations that name one offset
# are read (CST is China's and the US's, IST India's, Ireland's and Israel's): the others stay UTC.
ZONE_AFTER = re.compile(r" ([A-Z]{2,5}|[+-]\d\d:?\d\d)(?![\w:])")
ZONE_MINUTES = {
    "UTC": 0, "GMT": 0, "UT": 0, "WET": 0, "WEST": 60, "CET": 60, "CEST": 120, "MET": 60, "MEST": 120,
    "EET": 120, "EEST": 180, "MSK": 180, "JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AWST": 480,
    "ACST": 570, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "HST": -600, "AKST": -540, "AKDT": -480,
    "PST": -480, "PDT": -420, "MST": -420, "MDT": -360, "CDT": -300, "EST": -300, "EDT": -240,
}


def zone_after_ms(text: str, end: int) -> int:
    """Milliseconds to subtract from a zone-less time that ends at ``end`` for the zone written after it (0: none)."""
    m = ZONE_AFTER.match(text, end)
    if m is None:
        return 0
    zone = m.group(1)
    if zone[0] in "+-":
        return offset_ms(zone) or 0
    return ZONE_MINUTES.get(zone, 0) * 60000


def offset_ms(tz: str) -> int | None:
    """``+hh:mm``, ``+hhmm`` (or ``-``) -> milliseconds east of UTC; None for an offset no zone has."""
    hhmm = tz[1:].replace(":", "")
    if int(hhmm[:2]) > MAX_OFFSET_H or int(hhmm[2:]) > 59:
        return None
    minutes = int(hhmm[:2]) * 60 + int(hhmm[2:])
    return (minutes if tz[0] == "+" else -minutes) * 60000


_DAY_CACHE: dict[tuple[int, int, int], int] = {}


def ms_of(y: int, mo: int, d: int, hms: str, frac: str | None) -> int | None:
    """``hms`` is ``hh:mm:ss``; ``frac`` the digits after the second's point (any count)."""
    day = _DAY_CACHE.get((y, mo, d))
    try:
        if day is None:
            if not (1 <= mo <= 12 and 1 <= d <= 31):
                return None
            day = calendar.timegm((y, mo, d, 0, 0, 0, 0, 0, 0))
            if len(_DAY_CACHE) < 4096:  # log days are few; the cache stays tiny
                _DAY_CACHE[(y, mo, d)] = day
        h, mi, s = int(hms[0:2]), int(hms[3:5]), int(hms[6:8])
    except (ValueError, OverflowError):
        return None
    if h > 24 or mi > 59 or s > 60:  # 24:00:00 is ISO's end of day and :60 a leap second; more is no time
        return None
    return (day + h * 3600 + mi * 60 + s) * 1000 + (int((frac + "00")[:3]) if frac else 0)


def iso_ms(m: re.Match) -> int | None:
    """A match of :data:`ISO` -> epoch ms, its offset applied."""
    y, mo, d, h, mi, s, frac, tz = m.groups()
    ms = ms_of(int(y), int(mo), int(d), f"{h}:{mi}:{s}", frac)
    if ms is not None and tz and tz != "Z":
        offset = offset_ms(tz)
        if offset is None:  # not an offset any zone has: not a time
            return None
        ms -= offset
    return ms


def slashed_ms(m: re.Match) -> int | None:
    """A match of :data:`SLASHED` -> epoch ms (UTC)."""
    y, mo, d, a, b, yy, hms, frac = m.groups()
    if y is None:
        first, second = int(a), int(b)
        mo, d = (second, first) if first > 12 else (first, second)
        year = int(yy) + 2000 if len(yy) == 2 else int(yy)
        return ms_of(year, mo, d, hms, frac)
    return ms_of(int(y), int(mo), int(d), hms, frac)


def epoch_ms(value: float) -> int | None:
    """An epoch number in s, ms, µs or ns (by magnitude) -> ms; None for what cannot be a time."""
    if isinstance(value, int) and value.bit_length() > 64:  # no clock's; and past a double, where isfinite raises
        return None
    if not math.isfinite(value) or value < MIN_EPOCH_S:
        return None
    if value < 1e11:
        ms = value * 1000
    elif value < 1e14:
        ms = value
    elif value < 1e17:
        ms = value / 1000
    else:
        ms = value / 1_000_000
    return int(ms) if ms <= MAX_MS else None


_EPOCH_TEXT = re.compile(r"\d{9,19}(?:\.\d+)?\Z")


def record_time(value: object) -> int | None:
    """A structured record's time value (ISO 8601 text, epoch number or numeric text) -> epoch ms."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return epoch_ms(value)
    if not isinstance(value, str) or len(value) > 64:
        return None
    s = value.strip()
    m = ISO.match(s)
    if m:
        return iso_ms(m)
    m = SLASHED.match(s) if "/" in s[:10] else None
    if m:
        return slashed_ms(m)
    return epoch_ms(float(s)) if _EPOCH_TEXT.match(s) else None
