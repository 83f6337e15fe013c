"""Times and durations as operators type them: ``1h``, ``-2d``, ``now``, ISO-8601, a day, epoch ms.

Pure: the clock is a parameter. A duration given where a time is expected means that long ago, with
or without a leading ``-`` (``--since 1h`` and ``--from -2d`` both look back).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from streams.errors import SluiceError

UNITS_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_DURATIONS = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
TIME_HELP = "a time: 1h or -2d (that long ago), now, 2026-11-29, 2026-11-29T10:00Z, or epoch ms"


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``15m``, ``1h30m``, ``2d``, ``500ms``, or a plain number of seconds."""
    cleaned = text.strip().lower()
    try:
        return float(cleaned)
    except ValueError:
        pass
    parts = _DURATION.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise SluiceError(f"{text!r} is not a duration; write e.g. 90s, 15m, 1h30m, 2d")
    return sum(float(n) * UNITS_S[u] for n, u in parts)


def is_day(text: str) -> bool:
    return bool(_DAY.fullmatch(text.strip()))


def parse_instant(text: str, now_ms: int) -> int:
    """Epoch milliseconds (UTC) of a time as :data:`TIME_HELP` lists them."""
    cleaned = text.strip()
    if cleaned.lower() == "now":
        return now_ms
    if cleaned.isdigit() and len(cleaned) >= 10:  # epoch ms; a short number would be ambiguous
        return int(cleaned)
    ago = cleaned.removeprefix("-")
    if _DURATIONS.fullmatch(ago.lower()):
        return now_ms - int(parse_duration(ago) * 1000)
    try:
        if is_day(cleaned):
            moment = datetime.combine(date.fromisoformat(cleaned), datetime.min.time(), tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(cleaned.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise SluiceError(f"{text!r} is not a time; write {TIME_HELP}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def instant_datetime(text: str, now_ms: int) -> datetime:
    return datetime.fromtimestamp(parse_instant(text, now_ms) / 1000, UTC)
