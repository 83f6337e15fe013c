"""Which indices the hot sink creates ahead of midnight, and when."""

from __future__ import annotations

from datetime import UTC, datetime

from streams.sinks.elasticsearch.precreate import family_and_day, precreate_due, tomorrows_indices


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def test_family_and_day() -> None:
    assert family_and_day("sluice-logs-vision-sft-2026.11.30") == ("sluice-logs-vision-sft", "2026.11.30")
    assert family_and_day("sluice-metrics-a-b-2026.01.02") == ("sluice-metrics-a-b", "2026.01.02")
    assert family_and_day("sluice-logs-vision-sft") is None
    assert family_and_day("2026.11.30") is None


def test_only_within_the_last_stretch_of_the_utc_day() -> None:
    hour = 3_600_000
    assert precreate_due(ms("2026-11-30T23:30:00"), hour)
    assert precreate_due(ms("2026-11-30T23:00:00"), hour)
    assert not precreate_due(ms("2026-11-30T22:59:59"), hour)
    assert not precreate_due(ms("2026-11-30T00:00:00"), hour)
    assert not precreate_due(ms("2026-11-30T23:59:00"), 0), "0 turns it off"


def test_tomorrow_for_every_family_written_today_and_only_today() -> None:
    written = {"sluice-logs-vision-sft-2026.11.30": "vision", "sluice-logs-vision-general-2026.11.30": "vision",
               "sluice-metrics-vision-2026.11.30": "vision", "sluice-logs-vision-sft-2021.05.26": "vision",
               "sluice-logs-old-dpo-2026.11.29": "old", "sluice-logs-nlp-sft-2026.11.30": "nlp", "odd": "x"}
    assert tomorrows_indices(written, ms("2026-11-30T23:30:00")) == {
        "sluice-logs-nlp-sft-2026.12.01": "nlp", "sluice-logs-vision-general-2026.12.01": "vision",
        "sluice-logs-vision-sft-2026.12.01": "vision", "sluice-metrics-vision-2026.12.01": "vision"}
    assert tomorrows_indices(written, ms("2026-12-31T23:30:00")) == {}, "nothing was written on that day"
    assert tomorrows_indices({"sluice-logs-a-x-2026.12.31": "a"}, ms("2026-12-31T23:30:00")) == {
        "sluice-logs-a-x-2027.01.01": "a"}


def test_the_sink_creates_tomorrow_once_with_a_projects_own_retention_policy() -> None:
    """The sink's side with a stand-in client (the real server: tests/integration/test_hot_sink.py)."""
    import asyncio
    from types import SimpleNamespace

    from streams.config import ElasticsearchSettings, ProjectRoute, RoutingSettings
    from streams.sinks.elasticsearch.settings import HotSinkSettings
    from streams.sinks.elasticsearch.sink import HotSink

    created: list[tuple[str, dict]] = []

    class Exists(Exception):
        error = "resource_already_exists_exception"

    async def create(index: str, **kwargs: object) -> None:
        created.append((index, dict(kwargs)))
        if index.startswith("sluice-logs-vision"):
            raise Exists(index)  # another worker was first: fine, not retried

    client = SimpleNamespace(indices=SimpleNamespace(create=create))
    routing = RoutingSettings(projects={"nlp": ProjectRoute(retention_days=30), "vision": ProjectRoute()})
    wall = [ms("2026-11-30T12:00:00") / 1000]
    sink = HotSink(ElasticsearchSettings(), routing, HotSinkSettings(), client=client, wall=lambda: wall[0])
    sink.ilm = True
    sink._written = {"sluice-logs-nlp-sft-2026.11.30": "nlp", "sluice-logs-vision-general-2026.11.30": "vision"}

    async def checks() -> None:
        sink._maybe_precreate(0.0)  # noon: nothing yet
        wall[0] = ms("2026-11-30T23:30:00") / 1000
        sink._maybe_precreate(30.0)  # within the minute: not looked at again
        assert created == []
        sink._maybe_precreate(61.0)
        task = sink._precreate_task
        assert task is not None
        await task
        sink._maybe_precreate(122.0)  # both done: no new task
        assert sink._precreate_task is task

    asyncio.run(checks())
    assert created == [("sluice-logs-nlp-sft-2026.12.01", {"settings": {"index.lifecycle.name": "sluice-delete-30d"}}),
                       ("sluice-logs-vision-general-2026.12.01", {})]
    assert "sluice-logs-nlp-sft-2026.12.01" in sink._policed, "its first write does not put the policy again"
