"""Times as logs write them: impossible clock readings and offsets are no time at all."""

from __future__ import annotations

import pytest

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.times import ISO, iso_ms, record_time


def ms(text: str) -> int | None:
    m = ISO.search(text)
    assert m is not None
    return iso_ms(m)


def test_offsets_are_applied() -> None:
    assert ms("2025-04-05T10:23:45.123+02:00") == ms("2025-04-05T08:23:45.123Z")
    assert ms("2025-04-05T10:23:45-0530") == ms("2025-04-05T15:53:45Z")


@pytest.mark.parametrize("text", ["2025-04-05T10:23:45+99:99", "2025-04-05T10:23:45+19:00",
                                  "2025-04-05T10:23:45-05:75", "2025-04-05T25:00:00Z",
                                  "2025-04-05T10:61:00Z", "2025-04-05T10:00:61Z"])
def test_an_impossible_clock_or_offset_is_no_time(text: str) -> None:
    assert ms(text) is None


def test_a_leap_second_and_the_end_of_day_are_times() -> None:
    assert ms("2016-12-31T23:59:60Z") == ms("2017-01-01T00:00:00Z")
    assert ms("2025-04-05T24:00:00Z") == ms("2025-04-06T00:00:00Z")


@pytest.mark.parametrize("value", [int("9" * 400), -int("9" * 400)], ids=["positive", "negative"])
def test_an_integer_past_every_clock_is_no_time(value: int) -> None:
    assert record_time(value) is None


def test_a_json_record_with_a_400_digit_time_is_an_event_without_that_time() -> None:
    # a JSON integer has no size limit: past a double's range it cannot even be compared as one
    line = b'{"msg": "x", "time": ' + b"9" * 400 + b"}"
    asm = Assembler()
    out = asm.feed(RawRecord("logs.raw", 0, 1, line, b"node-1/app.log", 1_700_000_000_000)) + asm.flush_all()
    assert [(o.kind, o.value["timestamp"]) for o in out] == [("event", 1_700_000_000_000)]
