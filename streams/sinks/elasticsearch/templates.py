"""Index templates, component templates and the ILM policies the hot tier installs at start.

Mappings are explicit (numbers are numbers, whatever the first document says) and ``dynamic`` is
``false`` at the top: a field the contract does not know is kept in ``_source`` but not indexed.
``labels`` and ``attributes`` are open maps of strings, mapped ``flattened``: every key is searchable as
a keyword (``labels.task_id: "run-42"``), Kubernetes-style keys such as ``app`` beside
``app.kubernetes.io/name`` do not collide as value and object, and a key never seen before costs no
mapping update (mapped field by field, each new key of each new daily index would be a cluster-state
update on the master, and a quiet project's writes would queue behind another's). ``metrics``
stays an open map of doubles
(dynamic template, ``subobjects: false``): its values must stay numbers.

Retention: where the server has ILM (``GET /_ilm/policy`` answers), a policy per retention period
(``sluice-delete-<N>d``: hot, delete N days after index creation) is installed and attached through
the template (default period) or on the first write to a project's new daily index (projects with
their own ``retention_days``). Where it has none (the integ-test-zip), the worker's retention job
(:mod:`streams.sinks.elasticsearch.retention`) deletes daily indices by the date in their name.
"""

from __future__ import annotations

import logging
from typing import Any

from streams.config import RoutingSettings
from streams.sinks.elasticsearch.request import IndexNamer
from streams.sinks.elasticsearch.settings import HotSinkSettings

log = logging.getLogger(__name__)

LOGS_TEMPLATE = "sluice-logs"
METRICS_TEMPLATE = "sluice-metrics"
COMMON_COMPONENT = "sluice-common@mappings"
LOGS_COMPONENT = "sluice-logs@mappings"
METRICS_COMPONENT = "sluice-metrics@mappings"
SETTINGS_COMPONENT = "sluice@settings"
DEFAULT_RETENTION_DAYS = 7

KW = {"type": "keyword"}
DOUBLE = {"type": "double"}
LONG = {"type": "long"}
FLOAT = {"type": "float"}
DATE = {"type": "date", "format": "epoch_millis||strict_date_optional_time"}


def _open_map(hot: HotSinkSettings) -> dict[str, Any]:
    # An open map of strings, every key a keyword, no mapping update per key (see the module note).
    return {"type": "flattened", "ignore_above": hot.keyword_ignore_above}


def common_mappings(hot: HotSinkSettings) -> dict[str, Any]:
    """Fields shared by events and metric points."""
    return {
        "properties": {
            "event_id": KW,
            "timestamp": DATE,
            "project": KW,
            "task_id": KW,
            "task_type": KW,
            "model_name": KW,
            "phase": KW,
            "epoch": DOUBLE,
            "step": LONG,
            "max_steps": LONG,
            "non_finite": KW,
            "source": {
                "properties": {
                    "host": KW, "namespace": KW, "pod": KW, "container": KW, "file": KW,
                    "stream": KW, "node_role": KW, "rank": {"type": "integer"},
                },
            },
            "labels": _open_map(hot),
            "raw": {
                "properties": {
                    "topic": KW, "partition": {"type": "integer"}, "first_offset": LONG, "last_offset": LONG,
                    "first_file_offset": LONG, "last_file_offset": LONG,
                },
            },
        },
    }


def logs_mappings(hot: HotSinkSettings) -> dict[str, Any]:
    return {
        "dynamic": False,
        "properties": {
            "ingest_ts": DATE,
            "level": KW,
            "message": {"type": "text", "fields": {"keyword": {"type": "keyword",
                                                                "ignore_above": hot.keyword_ignore_above}}},
            "logger": KW,
            "loss": DOUBLE,
            "learning_rate": DOUBLE,
            "grad_norm": DOUBLE,
            "gpu_memory_mb": FLOAT,
            "gpu_utilization_pct": FLOAT,
            "error_class": KW,
            "error_type": KW,
            "root_cause": {"type": "keyword", "ignore_above": hot.keyword_ignore_above},
            "signal": KW,
            "multiline_kind": KW,
            "line_count": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "attributes": _open_map(hot),
        },
    }


# The device of a GPU sample (``sluice.v1.GpuDevice``; null on metric points from log lines).
GPU_DEVICE = {
    "properties": {
        "index": {"type": "integer"}, "uuid": KW, "name": KW, "mig_instance": KW, "reader": KW, "pids": LONG,
        "throttle_reasons": KW, "xids": {"type": "integer"}, "attribution": KW, "task_log_ms": DATE,
    },
}


def metrics_mappings() -> dict[str, Any]:
    return {
        "dynamic": False,
        "properties": {"metrics": {"type": "object", "dynamic": True, "subobjects": False}, "gpu": GPU_DEVICE},
        "dynamic_templates": [{"metrics_as_double": {"path_match": "metrics.*", "mapping": DOUBLE}}],
    }


def index_settings(hot: HotSinkSettings, policy: str | None) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "number_of_shards": hot.number_of_shards,
        "number_of_replicas": hot.number_of_replicas,
        # refresh_interval is left to Elasticsearch: 1 s, except that a shard nobody has searched for
        # index.search.idle.after (30 s) skips its periodic refreshes until a search comes, which waits
        # for the next refresh and so still sees every document (Elasticsearch's index settings docs).
        # Set to "1s" explicitly, every index written to would refresh every second whether anyone reads
        # it or not: a replay into 40 old daily indices would pay for 40 refreshes a second.
    }
    if policy:
        settings["lifecycle"] = {"name": policy}
    return {"index": settings}


def policy_name(days: int) -> str:
    return f"sluice-delete-{days}d"


def ilm_policy(days: int) -> dict[str, Any]:
    return {
        "phases": {
            "hot": {"min_age": "0ms", "actions": {}},
            "delete": {"min_age": f"{days}d", "actions": {"delete": {}}},
        },
        "_meta": {"managed_by": "sluice"},
    }


def events_patterns(routing: RoutingSettings, hot: HotSinkSettings) -> list[str]:
    """``<events_index_prefix>-*`` plus every custom ``index_prefix`` of the routing table."""
    namer = IndexNamer.of(routing, hot)
    base = namer.events_base
    custom = {namer.events_prefix(p) for p in routing.projects if routing.projects[p].index_prefix}
    # A custom prefix under the base is covered already; patterns must not repeat.
    return sorted({f"{base}-*"} | {f"{p}-*" for p in custom if not p.startswith(f"{base}-") and p != base})


def template_bodies(routing: RoutingSettings, hot: HotSinkSettings, ilm: bool) -> dict[str, dict[str, Any]]:
    """Name -> body of every component and index template, in installation order."""
    policy = policy_name(DEFAULT_RETENTION_DAYS) if ilm else None
    meta = {"managed_by": "sluice", "description": "Sluice hot tier: event and metric indices"}
    return {
        f"component:{COMMON_COMPONENT}": {"template": {"mappings": common_mappings(hot)}, "_meta": meta},
        f"component:{LOGS_COMPONENT}": {"template": {"mappings": logs_mappings(hot)}, "_meta": meta},
        f"component:{METRICS_COMPONENT}": {"template": {"mappings": metrics_mappings()}, "_meta": meta},
        f"component:{SETTINGS_COMPONENT}": {"template": {"settings": index_settings(hot, policy)}, "_meta": meta},
        f"index:{LOGS_TEMPLATE}": {
            "index_patterns": events_patterns(routing, hot),
            "composed_of": [SETTINGS_COMPONENT, COMMON_COMPONENT, LOGS_COMPONENT],
            "priority": hot.template_priority,
            "_meta": meta,
        },
        f"index:{METRICS_TEMPLATE}": {
            "index_patterns": [f"{hot.metrics_index_prefix}-*"],
            "composed_of": [SETTINGS_COMPONENT, COMMON_COMPONENT, METRICS_COMPONENT],
            "priority": hot.template_priority,
            "_meta": meta,
        },
    }


async def has_ilm(client: Any) -> bool:
    """True when the server answers the ILM API (the integ-test-zip answers "no handler")."""
    from elasticsearch import ApiError

    try:
        await client.ilm.get_lifecycle()
    except ApiError as exc:
        if exc.meta.status in (400, 404, 405, 410):
            return False
        raise
    return True


async def install(client: Any, routing: RoutingSettings, hot: HotSinkSettings) -> bool:
    """Install (or update) templates and, where ILM exists, the policies. Returns whether ILM exists."""
    ilm = await has_ilm(client)
    if ilm:
        periods = {DEFAULT_RETENTION_DAYS} | {r.retention_days for r in routing.projects.values()}
        for days in sorted(periods):
            await client.ilm.put_lifecycle(name=policy_name(days), policy=ilm_policy(days))
    for key, body in template_bodies(routing, hot, ilm).items():
        kind, name = key.split(":", 1)
        if kind == "component":
            await client.cluster.put_component_template(name=name, **body)
        else:
            await client.indices.put_index_template(name=name, **body)
    log.info("hot sink: templates installed (ILM %s)", "present" if ilm else "absent: retention job deletes indices")
    return ilm
