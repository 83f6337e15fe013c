"""Deploy files that are derived from the code: ``python deploy/generate.py`` rewrites them.

``--check`` exits 1 when a file differs from what the code says (the unit tests run the same
comparison). Inputs are the code's own definitions, read with the Kubernetes configuration
(``deploy/k8s/configmap.yaml``, and each stage's ``SLUICE_HOT__*`` / ``SLUICE_COLD__*`` environment):

- ``deploy/k8s/topics.yaml``: Strimzi KafkaTopics from :func:`streams.topics.topic_specs` plus the
  watch stage's internal topics (:func:`streams.workers.watch.internal_topic_specs`);
- ``deploy/elasticsearch/``: the hot sink's component and index templates and ILM policies
  (:mod:`streams.sinks.elasticsearch.templates`), and the watch stage's alerts and incidents index
  templates (:func:`streams.watch.publish.index_templates`);
- ``deploy/objectstore/lifecycle.json``: the cold sink's bucket lifecycle rules;
- ``deploy/kibana/sluice.ndjson``: the training views (data views, Lens charts, saved searches, a
  dashboard with project and task controls) from :data:`KIBANA_CHARTS` below;
- ``deploy/grafana/sluice-pipeline.json``: the pipeline dashboard over the metrics of docs/metrics.md;
- ``deploy/grafana/sluice-gpu.json``: GPU utilisation and memory per node and GPU from the hot tier's
  metric indices (an Elasticsearch data source), GPU-idle incidents marked from ``sluice-alerts-*``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
if str(REPO) not in sys.path:  # `python deploy/generate.py` from a checkout
    sys.path.insert(0, str(REPO))

STRIMZI_CLUSTER = "sluice"


# -- inputs: the Kubernetes configuration ------------------------------------------------------------

def k8s_documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()) if d]


def configmap_yaml() -> str:
    (cm,) = k8s_documents("configmap.yaml")
    text: str = cm["data"]["sluice.yaml"]
    return text


@contextlib.contextmanager
def _clean_environment(extra: dict[str, str]) -> Iterator[None]:
    """Only ``extra`` among the SLUICE_* variables: the caller's shell must not leak into files."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(("SLUICE_", "F_", "FAUST_"))}
    for k in saved:
        del os.environ[k]
    os.environ.update(extra)
    try:
        yield
    finally:
        for k in extra:
            os.environ.pop(k, None)
        os.environ.update(saved)


def k8s_settings(stage: str | None = None) -> Any:
    """``Settings`` as a pod of deploy/k8s/ loads them: the ConfigMap's sluice.yaml, plus the literal
    ``SLUICE_*`` environment of ``stage``'s Deployment when one is named."""
    from streams.config import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sluice.yaml"
        path.write_text(configmap_yaml())
        env = stage_env(stage, "SLUICE_") if stage else {}
        env.pop("SLUICE_CONFIG", None)
        with _clean_environment({"SLUICE_CONFIG": str(path), **env}):
            return load_settings()


def stage_env(stage: str, prefix: str) -> dict[str, str]:
    """The literal environment variables starting with ``prefix`` of a stage's Deployment."""
    (deployment,) = [d for d in k8s_documents(f"{stage}.yaml") if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: str(e["value"]) for e in container.get("env", []) if e["name"].startswith(prefix)
            and "value" in e}


def hot_settings() -> Any:
    return k8s_settings("hot").hot


def cold_settings() -> Any:
    return k8s_settings("cold").cold


def watch_settings() -> Any:
    return k8s_settings("watch").watch


# -- Strimzi topics ------------------------------------------------------------------------------------

def topic_resource_name(topic: str) -> str:
    # Kubernetes names allow [a-z0-9.-]; Faust's changelog names carry '_'.
    return topic.lower().replace("_", "-")


def strimzi_topics() -> list[dict[str, Any]]:
    from streams.topics import message_size_config, topic_specs
    from streams.workers.watch import internal_topic_specs

    settings = k8s_settings()
    specs = topic_specs(settings) + internal_topic_specs(settings, watch_settings())
    docs = []
    for spec in specs:
        # The broker defaults, written out; every topic takes the largest record Sluice writes.
        config = {"cleanup.policy": "delete", **message_size_config(settings), **spec.config}
        if settings.topics.replication_factor > 1:
            # A write is acknowledged by two copies: one broker can be lost without losing a record.
            config["min.insync.replicas"] = str(min(2, settings.topics.replication_factor))
        docs.append({
            "apiVersion": "kafka.strimzi.io/v1beta2",
            "kind": "KafkaTopic",
            "metadata": {
                "name": topic_resource_name(spec.name),
                "namespace": "sluice",
                "labels": {"strimzi.io/cluster": STRIMZI_CLUSTER, "app.kubernetes.io/part-of": "sluice"},
            },
            "spec": {
                "topicName": spec.name,
                "partitions": spec.partitions,
                "replicas": settings.topics.replication_factor,
                "config": dict(sorted(config.items())),
            },
        })
    return docs


def render_topics() -> str:
    head = ("# GENERATED by `python deploy/generate.py` from streams/topics.py, the watch stage's internal\n"
            "# topics and deploy/k8s/configmap.yaml: edit those, not this file.\n"
            "# Strimzi's Topic Operator creates and reconciles these on the Kafka cluster `sluice`.\n")
    return head + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in strimzi_topics())


# -- Elasticsearch and object store ------------------------------------------------------------------

def elasticsearch_files() -> dict[str, Any]:
    from streams.sinks.elasticsearch import templates as t

    settings = k8s_settings()
    files: dict[str, Any] = {}
    for key, body in t.template_bodies(settings.routing, hot_settings(), ilm=True).items():
        kind, name = key.split(":", 1)
        folder = "component_template" if kind == "component" else "index_template"
        files[f"elasticsearch/{folder}/{name}.json"] = body
    from streams.watch.publish import index_templates

    watch = watch_settings()
    for name, body in index_templates(watch.alerts_index_prefix, watch.incidents_index_prefix).items():
        files[f"elasticsearch/index_template/{name}.json"] = body
    periods = {t.DEFAULT_RETENTION_DAYS} | {r.retention_days for r in settings.routing.projects.values()}
    for days in sorted(periods):
        files[f"elasticsearch/ilm/{t.policy_name(days)}.json"] = {"policy": t.ilm_policy(days)}
    return files


def lifecycle_document() -> dict[str, Any]:
    from streams.sinks.objectstore.store import lifecycle_rules

    return {"Rules": lifecycle_rules(cold_settings())}


# -- Kibana ----------------------------------------------------------------------------------------------

DATA_VIEWS = {
    "sluice-logs": {"title": "sluice-logs-*", "name": "Sluice training logs", "timeFieldName": "timestamp"},
    "sluice-metrics": {"title": "sluice-metrics-*", "name": "Sluice step metrics", "timeFieldName": "timestamp"},
    # The watch stage's alerts index (streams/watch/publish.py ALERT_MAPPINGS), one per project.
    "sluice-alerts": {"title": "sluice-alerts-*", "name": "Sluice alerts", "timeFieldName": "timestamp"},
    # Job incidents (doc: incident) and the first error of each of their ranks (doc: rank).
    "sluice-incidents": {"title": "sluice-incidents-*", "name": "Sluice job incidents", "timeFieldName": "opened"},
}

# Idle incidents marked on the GPU charts: an annotation per gpu_idle alert, at its incident's start.
IDLE_ANNOTATIONS = {"data_view": "sluice-alerts", "time_field": "first_seen", "query": 'rule : "gpu_idle"',
                    "label": "GPU idle incident", "fields": ["task_id", "status", "summary"]}

# One column of a Lens layer: (id, operation, field, extra params). Field None = count of documents.
_Col = tuple[str, str, str | None, dict[str, Any]]

KIBANA_CHARTS: list[dict[str, Any]] = [
    {
        "id": "sluice-loss-by-step", "title": "Loss against step, per task", "data_view": "sluice-metrics",
        "kind": "line", "query": "phase : \"train\" and metrics.loss : *",
        "x": ("step", "range", "step", {}),
        "y": [("loss", "average", "metrics.loss", {})],
        "split": ("task", "terms", "task_id", {"size": 10}),
    },
    {
        "id": "sluice-gpu-memory", "title": "GPU memory (MB) per node and rank", "data_view": "sluice-metrics",
        "kind": "line", "query": "metrics.gpu_memory_mb : *",
        "x": ("time", "date_histogram", "timestamp", {}),
        "y": [("mem", "max", "metrics.gpu_memory_mb", {})],
        # One process per GPU: the rank is the GPU of a node (there is no separate GPU-index field).
        "split": ("gpu", "terms", "source.host", {"size": 20, "secondaryFields": ["source.rank"]}),
    },
    {
        "id": "sluice-gpu-utilisation", "title": "GPU utilisation (%) per node and GPU; idle incidents marked",
        "data_view": "sluice-metrics", "kind": "line", "query": "gpu.index : *",
        "x": ("time", "date_histogram", "timestamp", {}),
        "y": [("util", "average", "metrics.gpu_utilization_pct", {})],
        "split": ("gpu", "terms", "source.host", {"size": 32, "secondaryFields": ["gpu.index"]}),
        "annotations": IDLE_ANNOTATIONS,
    },
    {
        "id": "sluice-gpu-samples-memory", "title": "GPU memory in use (MB) per node and GPU (sampled)",
        "data_view": "sluice-metrics", "kind": "line", "query": "gpu.index : *",
        "x": ("time", "date_histogram", "timestamp", {}),
        "y": [("mem", "max", "metrics.gpu_memory_mb", {})],
        "split": ("gpu", "terms", "source.host", {"size": 32, "secondaryFields": ["gpu.index"]}),
        "annotations": IDLE_ANNOTATIONS,
    },
    {
        "id": "sluice-active-tasks", "title": "Active tasks", "data_view": "sluice-logs",
        "kind": "metric", "query": "task_id : *",
        "y": [("tasks", "unique_count", "task_id", {})],
    },
    {
        "id": "sluice-tasks", "title": "Tasks: last step and loss", "data_view": "sluice-metrics",
        "kind": "table", "query": "task_id : *",
        "rows": ("task", "terms", "task_id", {"size": 100}),
        # Ranked by last seen: the tasks that logged most recently come first.
        "y": [("seen", "max", "timestamp", {}), ("project", "last_value", "project", {}),
              ("step", "max", "step", {}), ("loss", "last_value", "metrics.loss", {})],
    },
    {
        "id": "sluice-failures-by-class", "title": "Failures by error class", "data_view": "sluice-logs",
        "kind": "bar_stacked", "query": "error_class : *",
        "x": ("time", "date_histogram", "timestamp", {}),
        "y": [("count", "count", None, {})],
        "split": ("class", "terms", "error_class", {"size": 10}),
    },
    {
        # There is no inference-latency field in the index template, and the assemble stage emits no
        # latency metric: this chart shows the training step time that Megatron logs
        # (`elapsed time per iteration (ms)` -> metrics.iteration_time_ms) instead.
        "id": "sluice-step-time", "title": "Step time percentiles (ms); no inference latency field yet",
        "data_view": "sluice-metrics", "kind": "line", "query": "metrics.iteration_time_ms : *",
        "x": ("time", "date_histogram", "timestamp", {}),
        "y": [(f"p{p}", "percentile", "metrics.iteration_time_ms", {"percentile": p}) for p in (50, 95, 99)],
    },
]

# The incidents dashboard: filter one task_id for its timeline.
KIBANA_CHARTS += [
    {
        "id": "sluice-incidents-by-root", "title": "Job incidents by root cause", "data_view": "sluice-incidents",
        "kind": "bar_stacked", "query": "doc : \"incident\"",
        "x": ("time", "date_histogram", "opened", {}),
        "y": [("count", "count", None, {})],
        "split": ("root", "terms", "root_class", {"size": 12}),
    },
    {
        # One bar per rank: when it first failed, coloured by root / collateral / report.
        "id": "sluice-incident-timeline", "title": "First error of each rank (filter a task_id)",
        "data_view": "sluice-incidents", "kind": "bar_stacked", "query": "doc : \"rank\"",
        "x": ("time", "date_histogram", "time", {}),
        "y": [("ranks", "unique_count", "rank_label", {})],
        "split": ("role", "terms", "role", {"size": 3}),
    },
    {
        "id": "sluice-incident-ranks", "title": "Ranks in order of their first error (filter a task_id)",
        "data_view": "sluice-incidents", "kind": "table", "query": "doc : \"rank\"",
        "rows": ("rank", "terms", "rank_label", {"size": 200, "direction": "asc"}),
        "y": [("first", "min", "time", {}), ("kind", "last_value", "kind", {"sort": "time"}),
              ("role", "last_value", "role", {"sort": "time"}), ("task", "last_value", "task_id", {"sort": "time"})],
    },
]

KIBANA_SEARCHES: list[dict[str, Any]] = [
    {
        "id": "sluice-failures", "title": "Failures (whole tracebacks)", "data_view": "sluice-logs",
        "query": "error_class : *",
        "columns": ["task_id", "source.host", "source.rank", "error_class", "error_type", "root_cause", "message"],
    },
    {
        "id": "sluice-alerts-table", "title": "Alerts (newest first)", "data_view": "sluice-alerts",
        "query": "alert_id : *",
        "columns": ["rule", "severity", "status", "project", "task_id", "count", "summary", "first_seen",
                    "resolved_at"],
    },
    {
        "id": "sluice-incidents", "title": "Job incidents (the first failure of each job)",
        "data_view": "sluice-incidents", "query": "doc : \"incident\"", "sort": "opened",
        "columns": ["task_id", "severity", "root_class", "first_node", "first_rank", "collateral_ranks", "ranks",
                    "summary"],
    },
]

KIBANA_DASHBOARDS = [
    {
        "id": "sluice-training", "title": "Sluice: training",
        "description": "Training views over the Sluice hot tier (deploy/kibana/; fields from the index template)",
        # (object id, x, y, w, h) on Kibana's 48-column grid.
        "panels": [
            ("sluice-active-tasks", 0, 0, 8, 8), ("sluice-tasks", 8, 0, 40, 8),
            ("sluice-gpu-utilisation", 0, 8, 24, 15), ("sluice-gpu-samples-memory", 24, 8, 24, 15),
            ("sluice-loss-by-step", 0, 23, 24, 15), ("sluice-gpu-memory", 24, 23, 24, 15),
            ("sluice-failures-by-class", 0, 38, 24, 15), ("sluice-step-time", 24, 38, 24, 15),
            ("sluice-alerts-table", 0, 53, 48, 15), ("sluice-failures", 0, 68, 48, 20),
        ],
        # Options-list controls above the dashboard: they filter every panel whose data view has the field.
        "controls": [("project", "Project", "sluice-logs"), ("task_id", "Task", "sluice-logs")],
    },
    {
        "id": "sluice-incidents", "title": "Sluice: job incidents",
        "description": "The first failure of each job across its ranks (watch stage). Filter one task_id to see "
                       "its ranks in the order they failed.",
        "panels": [
            ("sluice-incidents-by-root", 0, 0, 24, 12), ("sluice-incident-timeline", 24, 0, 24, 12),
            ("sluice-incidents", 0, 12, 48, 16), ("sluice-incident-ranks", 0, 28, 48, 20),
        ],
    },
]

_NUMBER_OPS = {"average", "max", "min", "sum", "median", "percentile"}
_DATE_FIELDS = {"timestamp", "time", "opened"}


def _lens_column(col: _Col, sort_by: str | None) -> dict[str, Any]:
    _cid, op, field, extra = col
    column: dict[str, Any] = {"label": f"{op} of {field}" if field else "Count", "customLabel": False,
                              "operationType": op, "isBucketed": op in ("terms", "date_histogram", "range")}
    if op == "count":
        column.update(dataType="number", scale="ratio", sourceField="___records___", params={"emptyAsNull": True})
    elif op == "date_histogram":
        column.update(dataType="date", scale="interval", sourceField=field,
                      params={"interval": "auto", "includeEmptyRows": False, "dropPartials": False})
    elif op == "range":
        column.update(dataType="number", scale="interval", sourceField=field,
                      params={"type": "histogram", "ranges": [{"from": 0, "to": 1000, "label": ""}],
                              "maxBars": "auto", "includeEmptyRows": False})
    elif op == "terms":
        column.update(dataType="string", scale="ordinal", sourceField=field,
                      params={"size": extra.get("size", 10), "orderDirection": extra.get("direction", "desc"),
                              "otherBucket": False,
                              "missingBucket": False, "parentFormat": {"id": "terms"},
                              "orderBy": {"type": "column", "columnId": sort_by} if sort_by
                              else {"type": "alphabetical"},
                              **({"secondaryFields": extra["secondaryFields"]} if "secondaryFields" in extra
                                 else {})})
    elif op == "unique_count":
        column.update(dataType="number", scale="ratio", sourceField=field, params={"emptyAsNull": True})
    elif op == "last_value":
        column.update(dataType="number" if field and field.startswith("metrics.") else "string", scale="ratio",
                      sourceField=field, params={"sortField": extra.get("sort", "timestamp"), "showArrayValues": False})
    elif op in ("max", "min") and field in _DATE_FIELDS:
        column.update(dataType="date", scale="ratio", sourceField=field, params={"emptyAsNull": True})
    elif op in _NUMBER_OPS:
        column.update(dataType="number", scale="ratio", sourceField=field,
                      params={"percentile": extra["percentile"]} if op == "percentile" else {"emptyAsNull": True})
    else:
        raise ValueError(f"no Lens column for operation {op}")
    return column


def lens_object(chart: dict[str, Any]) -> dict[str, Any]:
    layer = "layer1"
    metrics: list[_Col] = chart["y"]
    buckets: list[_Col] = [c for c in (chart.get("split"), chart.get("rows"), chart.get("x")) if c]
    columns = {c[0]: _lens_column(c, metrics[0][0]) for c in buckets}
    columns |= {c[0]: _lens_column(c, None) for c in metrics}
    kind = chart["kind"]
    visualization: dict[str, Any]
    if kind == "metric":
        vis_type = "lnsMetric"
        visualization = {"layerId": layer, "layerType": "data", "metricAccessor": metrics[0][0]}
    elif kind == "table":
        vis_type = "lnsDatatable"
        visualization = {"layerId": layer, "layerType": "data", "columns": [{"columnId": c} for c in columns]}
    else:
        vis_type = "lnsXY"
        xy_layer: dict[str, Any] = {"layerId": layer, "layerType": "data", "seriesType": kind,
                                    "xAccessor": chart["x"][0], "accessors": [c[0] for c in metrics]}
        if chart.get("split"):
            xy_layer["splitAccessor"] = chart["split"][0]
        layers = [xy_layer]
        if chart.get("annotations"):
            layers.append(annotation_layer(chart["annotations"]))
        visualization = {"legend": {"isVisible": True, "position": "right"}, "valueLabels": "hide",
                         "preferredSeriesType": kind, "layers": layers}
    return {
        "type": "lens", "id": chart["id"],
        "attributes": {
            "title": chart["title"], "description": "", "visualizationType": vis_type,
            "state": {
                "datasourceStates": {"formBased": {"layers": {layer: {
                    "columnOrder": list(columns), "columns": columns, "incompleteColumns": {}}}}},
                "visualization": visualization,
                "query": {"query": chart["query"], "language": "kuery"},
                "filters": [],
            },
        },
        "references": [{"type": "index-pattern", "id": chart["data_view"],
                        "name": f"indexpattern-datasource-layer-{layer}"}]
        + ([{"type": "index-pattern", "id": chart["annotations"]["data_view"],
             "name": f"xy-visualization-layer-{ANNOTATION_LAYER}"}] if chart.get("annotations") else []),
        "coreMigrationVersion": "8.8.0", "typeMigrationVersion": "8.9.0",
    }


ANNOTATION_LAYER = "annotations"


def annotation_layer(spec: dict[str, Any]) -> dict[str, Any]:
    """A Lens query annotation layer: one marker per document of another data view."""
    return {
        "layerId": ANNOTATION_LAYER, "layerType": "annotations", "persistanceType": "byValue",
        "indexPatternId": spec["data_view"], "ignoreGlobalFilters": False,
        "annotations": [{
            "type": "query", "id": "idle", "label": spec["label"], "key": {"type": "point_in_time"},
            "timeField": spec["time_field"], "filter": {"type": "kibana_query", "query": spec["query"],
                                                        "language": "kuery"},
            "extraFields": spec["fields"], "icon": "alert", "color": "#E7664C",
        }],
    }


def search_object(search: dict[str, Any]) -> dict[str, Any]:
    source = {"query": {"query": search["query"], "language": "kuery"}, "filter": [],
              "indexRefName": "kibanaSavedObjectMeta.searchSourceJSON.index"}
    return {
        "type": "search", "id": search["id"],
        "attributes": {"title": search["title"], "description": "", "columns": search["columns"],
                       "sort": [[search.get("sort", "timestamp"), "desc"]],
                       "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps(source)}},
        "references": [{"type": "index-pattern", "id": search["data_view"],
                        "name": "kibanaSavedObjectMeta.searchSourceJSON.index"}],
        "coreMigrationVersion": "8.8.0", "typeMigrationVersion": "8.0.0",
    }


def dashboard_object(dashboard: dict[str, Any]) -> dict[str, Any]:
    kinds = {c["id"]: "lens" for c in KIBANA_CHARTS} | {s["id"]: "search" for s in KIBANA_SEARCHES}
    panels, references = [], []
    for n, (obj, x, y, w, h) in enumerate(dashboard["panels"], start=1):
        pid = f"p{n}"
        panels.append({"type": kinds[obj], "panelIndex": pid, "gridData": {"x": x, "y": y, "w": w, "h": h, "i": pid},
                       "embeddableConfig": {"enhancements": {}}, "panelRefName": f"panel_{pid}"})
        references.append({"type": kinds[obj], "id": obj, "name": f"{pid}:panel_{pid}"})
    controls = {}
    for order, (field, title, view) in enumerate(dashboard.get("controls", [])):
        cid = f"control-{field.replace('_', '-')}"
        controls[cid] = {"order": order, "width": "medium", "grow": True, "type": "optionsListControl",
                         "explicitInput": {"id": cid, "fieldName": field, "title": title, "selectedOptions": [],
                                           "enhancements": {}}}
        references.append({"type": "index-pattern", "id": view, "name": f"controlGroup_{cid}:optionsListDataView"})
    return {
        "type": "dashboard", "id": dashboard["id"],
        "attributes": {
            "title": dashboard["title"],
            "description": dashboard["description"],
            "panelsJSON": json.dumps(panels),
            "optionsJSON": json.dumps({"useMargins": True, "syncColors": False, "hidePanelTitles": False}),
            "timeRestore": True, "timeFrom": "now-24h", "timeTo": "now",
            "refreshInterval": {"pause": False, "value": 60000},
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps(
                {"query": {"query": "", "language": "kuery"}, "filter": []})},
            # Controls chained: the task list offers the tasks of the chosen project.
            "controlGroupInput": {
                "controlStyle": "oneLine", "chainingSystem": "HIERARCHICAL",
                "panelsJSON": json.dumps(controls, sort_keys=True),
                "ignoreParentSettingsJSON": json.dumps({"ignoreFilters": False, "ignoreQuery": False,
                                                        "ignoreTimerange": False, "ignoreValidations": False}),
            },
        },
        "references": references,
        "coreMigrationVersion": "8.8.0", "typeMigrationVersion": "8.9.0",
    }


def kibana_objects() -> list[dict[str, Any]]:
    views = [{"type": "index-pattern", "id": vid, "attributes": attrs, "references": [],
              "coreMigrationVersion": "8.8.0", "typeMigrationVersion": "8.0.0"} for vid, attrs in DATA_VIEWS.items()]
    return (views + [lens_object(c) for c in KIBANA_CHARTS] + [search_object(s) for s in KIBANA_SEARCHES]
            + [dashboard_object(d) for d in KIBANA_DASHBOARDS])


def render_ndjson(objects: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(o, sort_keys=True) + "\n" for o in objects)


# -- Grafana ---------------------------------------------------------------------------------------------

_DS = {"type": "prometheus", "uid": "${datasource}"}

# (title, unit, [(PromQL, legend)], width). Every sluice_* name must be in docs/metrics.md ("Implemented").
GRAFANA_PANELS: list[tuple[str, str, list[tuple[str, str]], int]] = [
    ("Consumer lag per stage (records)", "short",
     [('sum by (stage) (sluice_consumer_lag{stage=~"$stage"})', "{{stage}}")], 12),
    ("Consumer lag per partition (top 10)", "short",
     [('topk(10, sum by (stage, topic, partition) (sluice_consumer_lag{stage=~"$stage"}))',
       "{{stage}} {{topic}}[{{partition}}]")], 12),
    ("Records in per topic (/s; logs.events.<project> is per project)", "ops",
     [('sum by (stage, topic) (rate(sluice_records_in_total{stage=~"$stage"}[$__rate_interval]))',
       "{{stage}} {{topic}}")], 12),
    ("Records out per project (/s, acknowledged by the store)", "ops",
     [('sum by (stage, project) (rate(sluice_sink_acked_total{stage=~"$stage", project=~"$project"}'
       '[$__rate_interval]))', "{{stage}} {{project}}"),
      ('sum by (stage, kind) (rate(sluice_outputs_total{stage=~"$stage"}[$__rate_interval]))',
       "{{stage}} {{kind}}")], 12),
    ("Sink write latency p50 / p95 / p99", "s",
     [(f'histogram_quantile({q}, sum by (le, stage) (rate(sluice_sink_latency_seconds_bucket'
       f'{{stage=~"$stage"}}[$__rate_interval])))', f"p{int(q * 100)} {{{{stage}}}}") for q in (0.5, 0.95, 0.99)],
     12),
    ("Records per store write (mean)", "short",
     [('sum by (stage) (rate(sluice_sink_batch_records_sum{stage=~"$stage"}[$__rate_interval])) / '
       'sum by (stage) (rate(sluice_sink_batch_records_count{stage=~"$stage"}[$__rate_interval]))', "{{stage}}")],
     12),
    ("Throttle waits (share of time waiting for budget)", "percentunit",
     [('sum by (stage) (rate(sluice_throttle_wait_seconds_total{stage=~"$stage"}[$__rate_interval]))',
       "{{stage}}")], 12),
    ("Store pushback and retries (/s)", "ops",
     [('sum by (stage) (rate(sluice_sink_throttled_total{stage=~"$stage"}[$__rate_interval]))',
       "throttled {{stage}}"),
      ('sum by (stage) (rate(sluice_sink_retries_total{stage=~"$stage"}[$__rate_interval]))', "retried {{stage}}")],
     12),
    ("Rate budget (events per window, AIMD)", "short",
     [('sum by (stage) (sluice_rate_budget_events{stage=~"$stage"})', "{{stage}}")], 12),
    ("Dead letters (/s) by stage and error", "ops",
     [('sum by (stage, error_type) (rate(sluice_dead_letters_total{stage=~"$stage"}[$__rate_interval]))',
       "{{stage}} {{error_type}}")], 12),
    ("Open multiline buffers (assemble)", "short",
     [("sum by (partition) (sluice_open_multiline_blocks)", "partition {{partition}}")], 12),
    ("In flight and paused (bounded memory)", "short",
     [('sum by (stage) (sluice_records_in_flight{stage=~"$stage"})', "in flight {{stage}}"),
      ('max by (stage) (sluice_partitions_paused{stage=~"$stage"})', "paused {{stage}}")], 12),
]


def grafana_dashboard() -> dict[str, Any]:
    panels = []
    for n, (title, unit, targets, width) in enumerate(GRAFANA_PANELS):
        panels.append({
            "id": n + 1, "type": "timeseries", "title": title, "datasource": _DS,
            "gridPos": {"x": (n % 2) * 12, "y": (n // 2) * 8, "w": width, "h": 8},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}},
            "targets": [{"refId": chr(ord("A") + i), "datasource": _DS, "expr": expr, "legendFormat": legend}
                        for i, (expr, legend) in enumerate(targets)],
        })

    def variable(name: str, metric: str) -> dict[str, Any]:
        return {"name": name, "label": name, "type": "query", "datasource": _DS,
                "query": {"query": f"label_values({metric}, {name})", "refId": name},
                "definition": f"label_values({metric}, {name})", "refresh": 2, "includeAll": True, "multi": True,
                "allValue": ".*", "current": {"text": "All", "value": "$__all"}, "sort": 1}

    return {
        "uid": "sluice-pipeline", "title": "Sluice pipeline",
        "description": "The pipeline's own metrics (docs/metrics.md)",
        "tags": ["sluice"], "timezone": "utc", "schemaVersion": 39, "version": 1, "editable": True,
        "graphTooltip": 1, "time": {"from": "now-6h", "to": "now"}, "refresh": "30s",
        "annotations": {"list": []},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0},
            variable("stage", "sluice_records_in_total"),
            variable("project", "sluice_sink_acked_total"),
        ]},
        "panels": panels,
    }


# GPU panels over the hot tier (Elasticsearch data sources: one on sluice-metrics-*, one on sluice-alerts-*).
# (title, field of the GPU samples, aggregation, unit)
GRAFANA_GPU_PANELS: list[tuple[str, str, str, str]] = [
    ("GPU utilisation per node and GPU", "metrics.gpu_utilization_pct", "avg", "percent"),
    ("GPU memory in use per node and GPU", "metrics.gpu_memory_mb", "max", "decmbytes"),
    ("GPU power per node and GPU", "metrics.gpu_power_w", "avg", "watt"),
    ("GPU temperature per node and GPU", "metrics.gpu_temperature_c", "max", "celsius"),
]
GRAFANA_GPU_FILTER = 'gpu.index:* AND project:"$project" AND task_id:$task'


def grafana_gpu_dashboard() -> dict[str, Any]:
    metrics_ds = {"type": "elasticsearch", "uid": "${metrics}"}
    alerts_ds = {"type": "elasticsearch", "uid": "${alerts}"}
    terms = {"size": "32", "order": "asc", "orderBy": "_term", "min_doc_count": "1"}
    panels = []
    for n, (title, field, agg, unit) in enumerate(GRAFANA_GPU_PANELS):
        panels.append({
            "id": n + 1, "type": "timeseries", "title": title, "datasource": metrics_ds,
            "gridPos": {"x": (n % 2) * 12, "y": (n // 2) * 9, "w": 12, "h": 9},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}},
            "targets": [{
                "refId": "A", "datasource": metrics_ds, "query": GRAFANA_GPU_FILTER, "timeField": "timestamp",
                "alias": "{{source.host}} GPU {{gpu.index}}",
                "metrics": [{"id": "1", "type": agg, "field": field}],
                "bucketAggs": [{"id": "2", "type": "terms", "field": "source.host", "settings": terms},
                               {"id": "3", "type": "terms", "field": "gpu.index", "settings": terms},
                               {"id": "4", "type": "date_histogram", "field": "timestamp",
                                "settings": {"interval": "auto", "min_doc_count": "0"}}],
            }],
        })

    def terms_variable(name: str, field: str, query: str) -> dict[str, Any]:
        definition = json.dumps({"find": "terms", "field": field, "query": query})
        return {"name": name, "label": name, "type": "query", "datasource": metrics_ds, "query": definition,
                "definition": definition, "refresh": 2, "includeAll": True, "multi": False, "allValue": "*",
                "current": {"text": "All", "value": "$__all"}, "sort": 1}

    return {
        "uid": "sluice-gpu", "title": "Sluice GPUs",
        "description": "GPU samples of sluice ship (docs/gpu.md) from the hot tier; GPU-idle incidents from the "
                       "watch stage's alerts",
        "tags": ["sluice", "gpu"], "timezone": "utc", "schemaVersion": 39, "version": 1, "editable": True,
        "graphTooltip": 1, "time": {"from": "now-24h", "to": "now"}, "refresh": "1m",
        "annotations": {"list": [{
            "name": "GPU idle incidents", "datasource": alerts_ds, "enable": True, "iconColor": "red",
            "query": 'rule:gpu_idle AND project:"$project" AND task_id:$task', "timeField": "first_seen",
            "timeEndField": "resolved_at", "textField": "summary", "tagsField": "task_id",
        }]},
        "templating": {"list": [
            {"name": "metrics", "label": "Metrics (sluice-metrics-*)", "type": "datasource", "query": "elasticsearch",
             "current": {}, "hide": 0},
            {"name": "alerts", "label": "Alerts (sluice-alerts-*)", "type": "datasource", "query": "elasticsearch",
             "current": {}, "hide": 0},
            terms_variable("project", "project", "gpu.index:*"),
            terms_variable("task", "task_id", 'gpu.index:* AND project:"$project"'),
        ]},
        "panels": panels,
    }


# -- all files -------------------------------------------------------------------------------------------

def _json(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False) + "\n"


def render() -> dict[str, str]:
    """Path under deploy/ -> the text the code says it should hold."""
    files = {"k8s/topics.yaml": render_topics()}
    files |= {path: _json(body) for path, body in elasticsearch_files().items()}
    files["objectstore/lifecycle.json"] = _json(lifecycle_document())
    files["kibana/sluice.ndjson"] = render_ndjson(kibana_objects())
    files["grafana/sluice-pipeline.json"] = _json(grafana_dashboard())
    files["grafana/sluice-gpu.json"] = _json(grafana_gpu_dashboard())
    return files


def main(argv: list[str]) -> int:
    stale = []
    for rel, text in render().items():
        path = DEPLOY / rel
        if "--check" in argv:
            if not path.is_file() or path.read_text() != text:
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote deploy/{rel}")
    for rel in stale:
        print(f"deploy/{rel} differs from the code: run `python deploy/generate.py`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
