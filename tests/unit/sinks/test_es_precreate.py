"""Which indices the hot sink creates ahead of midnight, and when."""

from __future__ import annotations

from datetime import UTC, datetime

from streams.sinks.elasticsearch.precreate import family_and_day, precreate_due, tomorrows_indices


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def test_family_and_day() -> None:
    assert family_and_day("logs-vision-sft-2026.11.30") == ("logs-vision-sft", "2026.11.30")
    assert family_and_day("metrics-a-b-2026.01.02") == ("metrics-a-b", "2026.01.02")
    assert family_and_day("logs-vision-sft") is None
    assert family_and_day("2026.11.30") is None


def test_only_within_the_last_stretch_of_the_utc_day() -> None:
    hour = 3_600_000
    assert precreate_due(ms("2026-11-30T23:30:00"), hour)
    assert precreate_due(ms("2026-11-30T23:00:00"), hour)
    assert not precreate_due(ms("2026-11-30T22:59:59"), hour)
    assert not precreate_due(ms("2026-11-30T00:00:00"), hour)
    assert not precreate_due(ms("2026-11-30T23:59:00"), 0), "0 turns it off"


def test_tomorrow_for_every_family_written_today_and_only_today() -> None:
    written = {"logs-vision-sft-2026.11.30": "vision", "logs-vision-general-2026.11.30": "vision",
               "metrics-vision-2026.11.30": "vision", "logs-vision-sft-2021.05.26": "vision",
               "logs-old-dpo-2026.11.29": "old", "logs-nlp-sft-2026.11.30": "nlp", "odd": "x"}
    assert tomorrows_indices(written, ms("2026-11-30T23:30:00")) == {
        "logs-nlp-sft-2026.12.01": "nlp", "logs-vision-general-2026.12.01": "vision",
        "logs-vision-sft-2026.12.01": "vision", "metrics-vision-2026.12.01": "vision"}
    assert tomorrows_indices(written, ms("2026-12-31T23:30:00")) == {}, "nothing was written on that day"
    assert tomorrows_indices({"logs-a-x-2026.12.31": "a"}, ms("2026-12-31T23:30:00")) == {
        "logs-a-x-2027.01.01": "a"}
