from __future__ import annotations

from datetime import UTC, datetime

import pytest

from streams.errors import SluiceError
from streams.timespec import parse_duration, parse_instant

NOW = int(datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp() * 1000)
HOUR = 3_600_000


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("15m", 900), ("1h30m", 5400), ("2d", 172_800), ("500ms", 0.5), ("1w", 604_800), ("2.5", 2.5),
    ("1.5h", 5400),
])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "1x", "1h 30m", "-1h", "1h-"])
def test_bad_durations_say_what_to_write(text: str) -> None:
    with pytest.raises(SluiceError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("1h", NOW - HOUR), ("-2d", NOW - 48 * HOUR), ("now", NOW), ("90m", NOW - 90 * 60_000),
    ("2026-03-09", NOW - 36 * HOUR), ("2026-03-10T10:00Z", NOW - 2 * HOUR),
    ("2026-03-10T10:00:00+00:00", NOW - 2 * HOUR),
    ("2026-03-10T11:00", NOW - HOUR), ("1773136800000", 1_773_136_800_000),
])
def test_instants(text: str, expected: int) -> None:
    assert parse_instant(text, NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "12", "2026-13-01", "1h ago"])
def test_bad_instants_say_what_to_write(text: str) -> None:
    with pytest.raises(SluiceError, match="not a time; write"):
        parse_instant(text, NOW)
