"""The cold tier's partitioner: keys, buckets, stagger (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from devtools.testing.objectstore import corpus_events
from streams.config import ProjectRoute, RoutingSettings, Settings
from streams.sinks.objectstore.partition import (
    GroupKey,
    bucket_for,
    day_prefixes,
    group_of,
    object_key,
    stagger_s,
)


def test_key_layout_from_a_real_event(corpus) -> None:
    event = corpus_events(corpus, "llama", "run-42", limit=1)[0]
    event["timestamp"] = datetime(2026, 11, 29, 23, 59, 59, 999000, tzinfo=UTC)  # as the registry decodes it
    group = group_of(event, "fallback")
    key = object_key(group, "logs.events.llama", 2, 42)
    assert key == "llama/run-42/2026-11-29/trainer/logs.events.llama+2+00000000000000000042.avro"


def test_missing_task_and_role_are_unknown_and_slashes_cannot_escape_the_prefix(corpus) -> None:
    event = corpus_events(corpus, "llama", "run-42", limit=1)[0]
    event["task_id"] = None
    event["source"]["node_role"] = "../etc/x"
    event["timestamp"] = 0
    group = group_of(event, "fallback")
    assert group == GroupKey("llama", "unknown", "1970-01-01", ".._etc_x")
    event["project"] = ""
    assert group_of(event, "fallback").project == "fallback"


def test_day_is_the_event_time_in_utc_not_local() -> None:
    event = {"project": "p", "timestamp": int(datetime(2026, 1, 1, 0, 30, tzinfo=UTC).timestamp() * 1000),
             "source": {}}
    assert group_of(event, "p").day == "2026-01-01"


def test_bucket_comes_from_the_routing_table() -> None:
    settings = Settings(routing=RoutingSettings(projects={"a": ProjectRoute(bucket="bucket-a"), "b": ProjectRoute()}))
    assert bucket_for(settings, "a") == "bucket-a"
    assert bucket_for(settings, "b") == settings.object_store.default_bucket
    assert bucket_for(settings, "unrouted") == settings.object_store.default_bucket


def test_day_prefixes_cover_the_range_inclusive() -> None:
    assert day_prefixes("p", "t", date(2026, 2, 27), date(2026, 3, 1)) == [
        "p/t/2026-02-27/", "p/t/2026-02-28/", "p/t/2026-03-01/"]


def test_stagger_is_stable_spread_and_inside_the_interval() -> None:
    shifts = [stagger_s("logs.events.p", p, 600) for p in range(12)]
    assert shifts == [stagger_s("logs.events.p", p, 600) for p in range(12)], "same in every process"
    assert all(0 <= s < 600 for s in shifts)
    assert len({int(s) for s in shifts}) >= 10, "partitions must not share a boundary second"


def test_a_long_component_keeps_its_start_and_a_hash_of_the_whole() -> None:
    from streams.sinks.objectstore.partition import MAX_PART_BYTES, path_part

    long_task = "sweep-" + "lr1e-4_" * 60  # 426 bytes: a filesystem-backed store refuses a name over 255
    other = long_task[:-1] + "x"
    part, part_other = path_part(long_task), path_part(other)
    assert len(part.encode()) <= MAX_PART_BYTES and part.startswith("sweep-lr1e-4_")
    assert part != part_other, "two long ids that share their start stay apart"
    assert path_part(long_task) == part, "the same id, the same key: a replay overwrites"
    wide = "任务" * 100  # 600 bytes, cut on a character boundary
    assert len(path_part(wide).encode()) <= MAX_PART_BYTES and path_part(wide).startswith("任务")
    assert path_part("run-42") == "run-42"


def test_invisible_and_control_characters_cannot_disguise_a_key() -> None:
    """A label value is any text a node sent: a bidi override or a zero-width space in a task id would make
    its key list as another name than it is; a backslash or a C1 control is no part of a path either."""
    from streams.sinks.objectstore.partition import path_part

    assert path_part("../../\u202e\u200bx") == ".._.._x"
    assert path_part("run\u20661\u2069\ufeff-\u00ad2") == "run_1_-_2"
    assert path_part("a\\b\x85c\u2028d") == "a_b_c_d"
    assert path_part("任务-\U0001f600") == "任务-\U0001f600", "visible text stays as it is"
