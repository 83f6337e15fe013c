"""Template bodies: explicit mappings, patterns from the routing table, ILM only where it exists."""

from __future__ import annotations

from streams.config import ProjectRoute, RoutingSettings
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.templates import events_patterns, ilm_policy, template_bodies

ROUTING = RoutingSettings(projects={"vision": ProjectRoute(), "nlp": ProjectRoute(index_prefix="team-nlp")})


def test_patterns_cover_custom_prefixes() -> None:
    assert events_patterns(ROUTING, HotSinkSettings()) == ["sluice-logs-*", "team-nlp-*"]


def test_numbers_are_numbers_and_text_has_a_keyword() -> None:
    bodies = template_bodies(ROUTING, HotSinkSettings(), ilm=False)
    common = bodies["component:sluice-common@mappings"]["template"]["mappings"]["properties"]
    logs = bodies["component:sluice-logs@mappings"]["template"]["mappings"]
    assert common["step"]["type"] == "long"
    assert common["epoch"]["type"] == "double"
    assert logs["properties"]["loss"]["type"] == "double"
    assert logs["properties"]["gpu_memory_mb"]["type"] == "float"
    assert logs["properties"]["message"]["fields"]["keyword"]["type"] == "keyword"
    assert logs["dynamic"] is False
    metrics = bodies["component:sluice-metrics@mappings"]["template"]["mappings"]
    assert metrics["dynamic_templates"][0]["metrics_as_double"]["mapping"]["type"] == "double"
    # Above Elasticsearch's own logs-*-* / metrics-*-* data-stream templates (priority 100).
    assert bodies["index:sluice-logs"]["priority"] > 100


def test_lifecycle_only_with_ilm() -> None:
    without = template_bodies(ROUTING, HotSinkSettings(), ilm=False)["component:sluice@settings"]
    with_ilm = template_bodies(ROUTING, HotSinkSettings(), ilm=True)["component:sluice@settings"]
    assert "lifecycle" not in without["template"]["settings"]["index"]
    assert with_ilm["template"]["settings"]["index"]["lifecycle"] == {"name": "sluice-delete-7d"}
    assert ilm_policy(7)["phases"]["delete"]["min_age"] == "7d"


def test_our_indices_stay_clear_of_elastics_builtin_data_streams() -> None:
    """Fleet and Elastic Agent own logs-*-* and metrics-*-* on a shared cluster: none of our names may match."""
    from fnmatch import fnmatch

    from streams.sinks.elasticsearch.request import IndexNamer

    namer = IndexNamer.of(ROUTING, HotSinkSettings())
    names = [namer.index_for({"project": "vision", "task_type": "sft", "message": "x"}, 0),
             namer.index_for({"project": "vision", "metrics": {"loss": 1.0}}, 0)]
    assert names == ["sluice-logs-vision-sft-1970.01.01", "sluice-metrics-vision-1970.01.01"]
    bodies = template_bodies(RoutingSettings(projects={"vision": ProjectRoute()}), HotSinkSettings(), ilm=False)
    patterns = bodies["index:sluice-logs"]["index_patterns"] + bodies["index:sluice-metrics"]["index_patterns"]
    for name in names + [p.replace("*", "x-y") for p in patterns]:
        assert not fnmatch(name, "logs-*-*") and not fnmatch(name, "metrics-*-*"), name


def test_index_prefixes_are_configurable() -> None:
    hot = HotSinkSettings(events_index_prefix="acme-logs", metrics_index_prefix="acme-metrics")
    bodies = template_bodies(ROUTING, hot, ilm=False)
    assert bodies["index:sluice-logs"]["index_patterns"] == ["acme-logs-*", "team-nlp-*"]
    assert bodies["index:sluice-metrics"]["index_patterns"] == ["acme-metrics-*"]
