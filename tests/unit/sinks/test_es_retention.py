"""The retention decision: which daily indices are past their project's retention."""

from __future__ import annotations

from datetime import date

from streams.config import ProjectRoute, RoutingSettings
from streams.sinks.elasticsearch.retention import RetentionTable, expired_indices

ROUTING = RoutingSettings(projects={
    "vision": ProjectRoute(retention_days=3),
    "a": ProjectRoute(retention_days=1),
    "a-b": ProjectRoute(retention_days=30),
    "nlp": ProjectRoute(index_prefix="team-nlp", retention_days=2),
})
TABLE = RetentionTable.from_routing(ROUTING)
TODAY = date(2026, 3, 10)


def test_keeps_today_and_retention_days_back() -> None:
    names = [f"sluice-logs-vision-sft-2026.03.{d:02d}" for d in range(5, 11)]
    assert expired_indices(names, TODAY, TABLE) == ["sluice-logs-vision-sft-2026.03.05",
                                                    "sluice-logs-vision-sft-2026.03.06"]


def test_projects_with_dashes_are_told_apart_by_the_task_segment() -> None:
    names = ["sluice-logs-a-general-2026.03.08", "sluice-logs-a-b-general-2026.03.08",
             "sluice-logs-a-b-general-2026.02.01"]
    assert expired_indices(names, TODAY, TABLE) == ["sluice-logs-a-b-general-2026.02.01",
                                                    "sluice-logs-a-general-2026.03.08"]


def test_metrics_custom_prefixes_and_unknown_projects() -> None:
    names = ["sluice-metrics-vision-2026.03.06", "team-nlp-dpo-2026.03.07", "sluice-logs-unknown-general-2026.03.02",
             "sluice-logs-unknown-general-2026.03.03"]
    # unknown project: the default 7 days
    assert expired_indices(names, TODAY, TABLE) == ["sluice-logs-unknown-general-2026.03.02",
                                                    "sluice-metrics-vision-2026.03.06", "team-nlp-dpo-2026.03.07"]


def test_indices_not_of_our_layout_are_never_touched() -> None:
    names = ["sluice-test-1", "other-2020.01.01", "sluice-logs-vision-sft-2026.13.40", ".kibana",
             "sluice-logs-2020.01.01", "logs-vision-sft-2020.01.01", "metrics-vision-2020.01.01",
             "team-nlpx-sft-2020.01.01"]
    assert expired_indices(names, TODAY, TABLE) == []


def test_an_old_dated_index_created_recently_is_kept_until_it_is_old_itself() -> None:
    """Replayed or rehydrated history (an index dated 2024, created today) must not vanish at once."""
    name = "sluice-logs-vision-sft-2024.05.01"
    assert expired_indices([name], TODAY, TABLE, created={name: TODAY}) == []
    assert expired_indices([name], TODAY, TABLE, created={name: date(2026, 3, 7)}) == []  # 3 days old: kept
    assert expired_indices([name], TODAY, TABLE, created={name: date(2026, 3, 6)}) == [name]  # 4 days old
