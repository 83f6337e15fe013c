"""deploy/, docker/ and docs/ agree with the code and validate against their schemas.

- Kubernetes built-in kinds: the OpenAPI-derived JSON schemas shipped in the ``kubernetes-validate``
  wheel (strict: unknown fields fail), for the oldest and newest Kubernetes versions we support.
- KEDA ScaledObject and Strimzi KafkaTopic: JSON schemas written below from the CRDs' documented
  fields (strict too), reusing Kubernetes' own ObjectMeta and HPA-behaviour definitions.
- Generated files (topics, index templates, ILM, lifecycle rules, Kibana, Grafana) equal what
  ``deploy/generate.py`` derives from the code; the semantic checks below say why they are right.
- Kibana objects use only fields of the hot sink's index template; Grafana only metrics of
  docs/metrics.md, which lists exactly what streams/observability.py registers.
- Every ``sluice ...`` command in docs/operator-guide.md exists in the click CLI.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import shlex
import sys
from functools import cache
from typing import Any

import click
import jsonschema
import kubernetes_validate
import pytest
import yaml
from referencing import Registry, Resource

from streams.config import REPO_ROOT

DEPLOY = REPO_ROOT / "deploy"
K8S = DEPLOY / "k8s"
STAGES = ("assemble", "hot", "cold", "watch")
K8S_VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
IMAGE_UID = 10001


@cache
def generate() -> Any:
    spec = importlib.util.spec_from_file_location("sluice_deploy_generate", DEPLOY / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def k8s_docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def all_k8s_docs() -> list[tuple[str, dict[str, Any]]]:
    return [(p.name, d) for p in sorted(K8S.glob("*.yaml")) if p.name != "kustomization.yaml"
            for d in k8s_docs(p.name)]


def of_kind(name: str, kind: str) -> dict[str, Any]:
    (doc,) = [d for d in k8s_docs(name) if d["kind"] == kind]
    return doc


@cache
def settings() -> Any:
    return generate().k8s_settings()


# -- schemas -----------------------------------------------------------------------------------------

_K8S_DEFS = "https://kubernetes.io/api/_definitions.json#/$defs/"
_STR = {"type": "string"}
_INT32 = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
_METADATA = {"$ref": _K8S_DEFS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}

# keda.sh/v1alpha1 ScaledObject (KEDA 2.x CRD): spec fields and the trigger shape, metadata values strings.
SCALED_OBJECT_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"}, "kind": {"const": "ScaledObject"}, "metadata": _METADATA,
        "spec": {
            "type": "object", "additionalProperties": False, "required": ["scaleTargetRef", "triggers"],
            "properties": {
                "scaleTargetRef": {"type": "object", "additionalProperties": False, "required": ["name"],
                                   "properties": {"apiVersion": _STR, "kind": _STR, "name": _STR,
                                                  "envSourceContainerName": _STR}},
                "pollingInterval": _INT32, "cooldownPeriod": _INT32, "initialCooldownPeriod": _INT32,
                "idleReplicaCount": _INT32, "minReplicaCount": _INT32, "maxReplicaCount": _INT32,
                "fallback": {"type": "object", "required": ["failureThreshold", "replicas"],
                             "properties": {"failureThreshold": _INT32, "replicas": _INT32}},
                "advanced": {
                    "type": "object", "additionalProperties": False,
                    "properties": {
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "scalingModifiers": {"type": "object"},
                        "horizontalPodAutoscalerConfig": {
                            "type": "object", "additionalProperties": False,
                            "properties": {
                                "name": _STR,
                                "behavior": {
                                    "$ref": _K8S_DEFS + "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior"},
                            },
                        },
                    },
                },
                "triggers": {
                    "type": "array", "minItems": 1,
                    "items": {
                        "type": "object", "additionalProperties": False, "required": ["type", "metadata"],
                        "properties": {
                            "type": _STR, "name": _STR, "useCachedMetrics": {"type": "boolean"},
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "authenticationRef": {"type": "object", "required": ["name"],
                                                  "properties": {"name": _STR, "kind": _STR}},
                            "metadata": {"type": "object", "additionalProperties": _STR},
                        },
                    },
                },
            },
        },
    },
}

# The kafka scaler's documented metadata keys (KEDA 2.x "Apache Kafka" scaler).
KAFKA_SCALER_KEYS = {
    "bootstrapServers", "consumerGroup", "topic", "lagThreshold", "activationLagThreshold", "offsetResetPolicy",
    "allowIdleConsumers", "scaleToZeroOnInvalidOffset", "excludePersistentLag", "version", "partitionLimitation",
    "limitToPartitionsWithLag", "ensureEvenDistributionOfPartitions", "sasl", "tls", "unsafeSsl",
}
KAFKA_SCALER_REQUIRED = {"bootstrapServers", "consumerGroup"}

# kafka.strimzi.io/v1beta2 KafkaTopic.
KAFKA_TOPIC_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "kafka.strimzi.io/v1beta2"}, "kind": {"const": "KafkaTopic"},
        "metadata": {"allOf": [_METADATA, {"required": ["name", "labels"],
                                           "properties": {"labels": {"required": ["strimzi.io/cluster"]}}}]},
        "spec": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "topicName": _STR,
                "partitions": {"type": "integer", "minimum": 1},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 32767},
                # Topic configs are strings to Kafka; Strimzi accepts scalars, we write strings.
                "config": {"type": "object", "additionalProperties": _STR},
            },
        },
    },
}

# keda.sh/v1alpha1 TriggerAuthentication: parameters from Secrets (the only source these files use).
TRIGGER_AUTH_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"}, "kind": {"const": "TriggerAuthentication"},
        "metadata": _METADATA,
        "spec": {
            "type": "object", "additionalProperties": False, "required": ["secretTargetRef"],
            "properties": {"secretTargetRef": {
                "type": "array", "minItems": 1,
                "items": {"type": "object", "additionalProperties": False, "required": ["parameter", "name", "key"],
                          "properties": {"parameter": _STR, "name": _STR, "key": _STR}}}},
        },
    },
}
# The kafka scaler's authentication parameters (KEDA 2.x "Apache Kafka" scaler, TriggerAuthentication).
KAFKA_AUTH_PARAMETERS = {"sasl", "username", "password", "tls", "ca", "cert", "key", "keyPassword",
                         "oauthTokenEndpointUri", "scopes"}

CRD_SCHEMAS = {("keda.sh/v1alpha1", "ScaledObject"): SCALED_OBJECT_SCHEMA,
               ("keda.sh/v1alpha1", "TriggerAuthentication"): TRIGGER_AUTH_SCHEMA,
               ("kafka.strimzi.io/v1beta2", "KafkaTopic"): KAFKA_TOPIC_SCHEMA}


@cache
def _k8s_registry() -> Registry:
    defs = kubernetes_validate.utils.schema_contents(
        f"kubernetes-json-schema/v{kubernetes_validate.latest_version()}-local-strict/_definitions.json",
        kubernetes_validate.latest_version())
    return Resource.from_contents(defs) @ Registry()


def validate_crd(doc: dict[str, Any]) -> None:
    schema = CRD_SCHEMAS[(doc["apiVersion"], doc["kind"])]
    jsonschema.Draft202012Validator(schema, registry=_k8s_registry()).validate(doc)


def test_every_kubernetes_document_validates_against_its_schema() -> None:
    docs = all_k8s_docs()
    assert {d["kind"] for _, d in docs} >= {"Namespace", "ConfigMap", "Deployment", "PodDisruptionBudget",
                                            "DaemonSet", "ScaledObject", "KafkaTopic"}
    for name, doc in docs:
        where = f"{name}: {doc['kind']} {doc['metadata'].get('name')}"
        if (doc["apiVersion"], doc["kind"]) in CRD_SCHEMAS:
            try:
                validate_crd(doc)
            except jsonschema.ValidationError as exc:
                pytest.fail(f"{where}: {exc.message} at {list(exc.absolute_path)}")
            continue
        for version in K8S_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{where} (Kubernetes {version}): {exc.message} at {list(exc.path)}")


def test_the_crd_schemas_catch_mistakes() -> None:
    so = of_kind("hot.yaml", "ScaledObject")
    bad = json.loads(json.dumps(so))
    bad["spec"]["maxReplicas"] = 3  # HPA's name, not KEDA's
    with pytest.raises(jsonschema.ValidationError):
        validate_crd(bad)
    bad = json.loads(json.dumps(so))
    bad["spec"]["triggers"][0]["metadata"]["lagThreshold"] = 100  # must be a string
    with pytest.raises(jsonschema.ValidationError):
        validate_crd(bad)
    kt = k8s_docs("topics.yaml")[0]
    bad = json.loads(json.dumps(kt))
    bad["spec"]["partition"] = 3
    with pytest.raises(jsonschema.ValidationError):
        validate_crd(bad)


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert kustomization["kind"] == "Kustomization"
    listed = kustomization["resources"]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


# -- generated files ---------------------------------------------------------------------------------

def test_generated_files_are_what_the_code_says() -> None:
    stale = [rel for rel, text in generate().render().items()
             if not (DEPLOY / rel).is_file() or (DEPLOY / rel).read_text() != text]
    assert not stale, f"run `python deploy/generate.py`: {stale} differ from the code"


def test_strimzi_topics_match_topic_specs() -> None:
    from streams.topics import topic_specs
    from streams.watch.settings import WatchSettings
    from streams.workers.watch import internal_topic_specs

    s = settings()
    specs = {t.name: t for t in topic_specs(s) + internal_topic_specs(s, WatchSettings())}
    topics = {d["spec"]["topicName"]: d for d in k8s_docs("topics.yaml")}
    assert set(topics) == set(specs)
    for name, spec in specs.items():
        kt = topics[name]
        assert kt["metadata"]["labels"]["strimzi.io/cluster"] == generate().STRIMZI_CLUSTER
        assert kt["spec"]["partitions"] == spec.partitions, name
        assert kt["spec"]["replicas"] == s.topics.replication_factor, name
        config = kt["spec"]["config"]
        assert config.get("retention.ms") == spec.config.get("retention.ms"), name
        assert config["cleanup.policy"] == spec.config.get("cleanup.policy", "delete"), name
        assert config["max.message.bytes"] == spec.config.get("max.message.bytes", str(s.kafka.max_message_bytes)), name
        assert int(config["max.message.bytes"]) >= s.kafka.max_message_bytes, name
    # The replay window the operator guide promises.
    assert topics["logs.raw"]["spec"]["config"]["retention.ms"] == str(7 * 24 * 3600 * 1000)
    assert topics["logs.alerts"]["spec"]["config"]["cleanup.policy"] == "compact,delete"


def test_elasticsearch_files_are_the_hot_sinks_templates_and_ilm() -> None:
    from streams.sinks.elasticsearch import templates as t

    hot = generate().hot_settings()
    for key, body in t.template_bodies(settings().routing, hot, ilm=True).items():
        kind, name = key.split(":", 1)
        folder = "component_template" if kind == "component" else "index_template"
        assert json.loads((DEPLOY / "elasticsearch" / folder / f"{name}.json").read_text()) == body, key
    policy = json.loads((DEPLOY / "elasticsearch" / "ilm" / f"{t.policy_name(t.DEFAULT_RETENTION_DAYS)}.json")
                        .read_text())
    assert policy == {"policy": t.ilm_policy(t.DEFAULT_RETENTION_DAYS)}
    assert policy["policy"]["phases"]["delete"]["min_age"] == "7d"
    # The replicas the hot Deployment asks for are the ones in the exported settings.
    exported = json.loads((DEPLOY / "elasticsearch" / "component_template" / "sluice@settings.json").read_text())
    assert exported["template"]["settings"]["index"]["number_of_replicas"] == hot.number_of_replicas


def test_bucket_lifecycle_is_the_cold_sinks() -> None:
    from streams.sinks.objectstore.settings import ColdSinkSettings
    from streams.sinks.objectstore.store import lifecycle_rules

    doc = json.loads((DEPLOY / "objectstore" / "lifecycle.json").read_text())
    assert doc == {"Rules": lifecycle_rules(generate().cold_settings())}
    assert doc == {"Rules": lifecycle_rules(ColdSinkSettings())}, "deploy should use the cold sink's defaults"
    (rule,) = doc["Rules"]
    assert {"Days": 30, "StorageClass": "STANDARD_IA"} in rule["Transitions"]
    assert {"Days": 90, "StorageClass": "GLACIER"} in rule["Transitions"]


# -- stage Deployments -------------------------------------------------------------------------------

SECRET_WORDS = ("PASSWORD", "SECRET", "API_KEY", "TOKEN", "WEBHOOK_URL", "ACCESS_KEY")
# Variables that boto3's default credential chain reads (the object store's key, when not IRSA's).
AWS_CHAIN_VARIABLES = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"}


def _setting_exists(var: str) -> bool:
    """SLUICE_* variables must name a real setting (the loader refuses any other)."""
    from streams.config import ENV_PREFIX, Settings
    from streams.config_check import unknown_environment

    return not unknown_environment(Settings, {var: "x"}, ENV_PREFIX)


def _container(stage: str) -> dict[str, Any]:
    (container,) = of_kind(f"{stage}.yaml", "Deployment")["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("stage", STAGES)
def test_stage_deployment(stage: str) -> None:
    deployment = of_kind(f"{stage}.yaml", "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = _container(stage)
    assert container["args"] == ["worker", stage]
    assert "replicas" not in deployment["spec"], "KEDA owns the replica count"
    for kind in ("requests", "limits"):
        assert set(container["resources"][kind]) == {"cpu", "memory"}
    # Non-root, as the image's user.
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == IMAGE_UID
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    # Probes on the observability port of the ConfigMap.
    port = settings().observability.port
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": port}
    assert deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert container["startupProbe"]["httpGet"]["port"] == "metrics"
    # Configuration from the ConfigMap, secrets only by reference.
    env = {e["name"]: e for e in container["env"]}
    mount = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["config"]
    assert env["SLUICE_CONFIG"]["value"] == f"{mount}/sluice.yaml"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"]["name"] == of_kind("configmap.yaml", "ConfigMap")["metadata"]["name"]
    for name, e in env.items():
        assert _setting_exists(name) or name in AWS_CHAIN_VARIABLES, f"{stage}: {name} is no setting of streams/"
        if any(word in name for word in SECRET_WORDS):
            assert "value" not in e, f"{stage}: {name} must come from a Secret"
            assert e["valueFrom"]["secretKeyRef"]["name"] == "sluice-credentials"


def test_configmap_loads_as_settings_and_holds_no_secret() -> None:
    text = generate().configmap_yaml()
    data = yaml.safe_load(text)
    for section in data.values():
        for key in section or {}:
            assert not any(w.lower() in key for w in ("password", "secret", "api_key", "token")), key
    s = settings()
    assert s.topics.replication_factor >= 3
    assert s.registry.compatibility == "BACKWARD_TRANSITIVE"


def test_shipper_and_workers_reach_the_same_kafka_and_registry() -> None:
    (container,) = of_kind("ship-daemonset.yaml", "DaemonSet")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["SLUICE_KAFKA__BOOTSTRAP_SERVERS"] == settings().kafka.bootstrap_servers
    assert env["SLUICE_REGISTRY__URL"] == settings().registry.url
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    for name in env:
        assert _setting_exists(name) or not name.startswith("SLUICE_"), name


def _consumer_groups() -> dict[str, tuple[str, list[tuple[str, int]]]]:
    """Stage -> (consumer group as the code names it, [(topic, partitions)] the group reads)."""
    from streams.watch.settings import WatchSettings

    s = settings()
    t = s.topics
    events = [(t.events_topic(p), t.events_partitions) for p in s.projects()]
    watch = WatchSettings()
    return {
        "assemble": (s.assemble.app_id, [(t.raw, t.raw_partitions)]),
        "hot": (s.hot.group_id,
                [*events, (t.metrics, t.metrics_partitions)]),
        "cold": (s.cold.group_id, events),
        # Faust tables and the by-task topic bound the useful workers; the sources are read by all.
        "watch": (watch.app_id, [(watch.by_task_topic(), watch.partitions)]),
    }


@pytest.mark.parametrize("stage", STAGES)
def test_autoscaling_follows_the_consumer_group_and_partitions(stage: str) -> None:
    scaled = of_kind(f"{stage}.yaml", "ScaledObject")
    spec = scaled["spec"]
    assert spec["scaleTargetRef"]["name"] == of_kind(f"{stage}.yaml", "Deployment")["metadata"]["name"]
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "kafka"
    meta = trigger["metadata"]
    assert set(meta) <= KAFKA_SCALER_KEYS and set(meta) >= KAFKA_SCALER_REQUIRED | {"lagThreshold"}
    group, topics = _consumer_groups()[stage]
    assert meta["consumerGroup"] == group
    assert meta["bootstrapServers"] == settings().kafka.bootstrap_servers
    if "topic" in meta:
        assert meta["topic"] in dict(topics)
    assert int(meta["lagThreshold"]) > 0
    assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
    assert spec["maxReplicaCount"] <= sum(n for _, n in topics), "workers beyond the partitions sit idle"


@pytest.mark.parametrize("stage", STAGES)
def test_disruption_budget_selects_the_stage(stage: str) -> None:
    pdb = of_kind(f"{stage}.yaml", "PodDisruptionBudget")
    labels = of_kind(f"{stage}.yaml", "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["maxUnavailable"] == 1


def test_hot_capacity_is_split_between_the_workers() -> None:
    # Each hot worker has its own rate controller: N workers at 80% of the cluster's capacity each
    # would ask for N x 80%. The Deployment's capacity is the cluster's divided by maxReplicaCount.
    hot = generate().hot_settings()
    max_workers = of_kind("hot.yaml", "ScaledObject")["spec"]["maxReplicaCount"]
    comment = (K8S / "hot.yaml").read_text()
    assert f"/ {max_workers} here" in comment
    match = re.search(r"([\d,]+) docs/s / (\d+) here", comment)
    assert match is not None
    assert hot.capacity_events_per_s * int(match.group(2)) == float(match.group(1).replace(",", ""))


# -- image -------------------------------------------------------------------------------------------

def test_image_is_slim_non_root_with_a_health_check() -> None:
    text = (REPO_ROOT / "docker" / "Dockerfile").read_text()
    bases = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
    assert bases and all(b.endswith("-slim") or " AS " in b for b in bases)
    assert re.findall(r"^FROM (\S+)", text, re.MULTILINE)[-1].endswith("-slim")
    users = re.findall(r"^USER (\S+)", text, re.MULTILINE)
    assert users and users[-1].split(":")[0] == str(IMAGE_UID)
    (check,) = re.findall(r"^HEALTHCHECK .*CMD (\[.*\])$", text, re.MULTILINE)
    command = json.loads(check)
    assert command[:2] == ["python", "-c"]
    # One worker per container, on the port the check asks.
    (port,) = re.findall(r"SLUICE_OBSERVABILITY__PORT=(\d+)", text)
    assert f"'SLUICE_OBSERVABILITY__PORT', '{port}'" in command[2] and "/healthz" in command[2]
    compile(command[2], "HEALTHCHECK", "exec")


# -- Kibana ------------------------------------------------------------------------------------------

SAVED_OBJECT_SCHEMA = {
    "type": "object", "required": ["type", "id", "attributes", "references"],
    "properties": {
        "type": {"enum": ["index-pattern", "lens", "search", "visualization", "dashboard"]},
        "id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "attributes": {"type": "object", "required": ["title"]},
        "references": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["type", "id", "name"],
            "properties": {"type": _STR, "id": _STR, "name": _STR}}},
        "coreMigrationVersion": _STR, "typeMigrationVersion": _STR,
    },
}
NUMERIC = {"long", "integer", "short", "byte", "double", "float", "half_float", "scaled_float"}
AGGREGATABLE = NUMERIC | {"keyword", "date", "boolean", "ip"}


def kibana_objects() -> list[dict[str, Any]]:
    objects = []
    for n, line in enumerate((DEPLOY / "kibana" / "sluice.ndjson").read_text().splitlines(), start=1):
        assert line.strip(), f"line {n} is empty"
        objects.append(json.loads(line))
    return objects


def _flatten(properties: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out = {}
    for name, mapping in properties.items():
        path = prefix + name
        if "properties" in mapping:
            out |= _flatten(mapping["properties"], path + ".")
        out[path] = mapping.get("type", "object")
        for sub, sub_mapping in mapping.get("fields", {}).items():
            out[f"{path}.{sub}"] = sub_mapping["type"]
    return out


@cache
def template_fields() -> dict[str, tuple[dict[str, str], list[tuple[str, str]]]]:
    """Index pattern -> (explicit field -> type, [(dynamic path glob, type)]) from the hot sink's code."""
    from streams.sinks.elasticsearch import templates as t

    bodies = t.template_bodies(settings().routing, generate().hot_settings(), ilm=True)
    out = {}
    for key, body in bodies.items():
        if not key.startswith("index:"):
            continue
        fields: dict[str, str] = {}
        dynamic: list[tuple[str, str]] = []
        for component in body["composed_of"]:
            mappings = bodies[f"component:{component}"]["template"].get("mappings", {})
            fields |= _flatten(mappings.get("properties", {}))
            for entry in mappings.get("dynamic_templates", []):
                (rule,) = entry.values()
                dynamic.append((rule["path_match"], rule["mapping"]["type"]))
        for pattern in body["index_patterns"]:
            out[pattern] = (fields, dynamic)
    from streams.watch.publish import index_templates

    watch = generate().watch_settings()
    for body in index_templates(watch.alerts_index_prefix, watch.incidents_index_prefix).values():
        for pattern in body["index_patterns"]:
            out[pattern] = (_flatten(body["template"]["mappings"]["properties"]), [])
    return out


def field_type(index_pattern: str, field: str) -> str | None:
    fields, dynamic = template_fields()[index_pattern]
    if field in fields:
        return fields[field]
    parent = field.rpartition(".")[0]
    while parent:  # any key under a flattened field is a keyword
        if fields.get(parent) == "flattened":
            return "keyword"
        parent = parent.rpartition(".")[0]
    for glob, kind in dynamic:
        if fnmatch.fnmatchcase(field, glob):
            return kind
    return None


def _kql_fields(query: str) -> set[str]:
    return set(re.findall(r"([A-Za-z_][\w.]*)\s*:", query))


def test_kibana_objects_parse_and_reference_each_other() -> None:
    objects = kibana_objects()
    ids = {(o["type"], o["id"]) for o in objects}
    assert len(ids) == len(objects), "ids must be unique per type"
    for o in objects:
        jsonschema.validate(o, SAVED_OBJECT_SCHEMA)
        for ref in o["references"]:
            assert (ref["type"], ref["id"]) in ids, f"{o['id']} references missing {ref['type']} {ref['id']}"
    views = {o["attributes"]["title"] for o in objects if o["type"] == "index-pattern"}
    assert views == {"sluice-logs-*", "sluice-metrics-*", "sluice-alerts-*", "sluice-incidents-*"}
    for o in objects:
        if o["type"] == "index-pattern":
            assert o["attributes"]["title"] in template_fields(), "a data view no index template covers"
            assert field_type(o["attributes"]["title"], o["attributes"]["timeFieldName"]) == "date"


def test_dashboard_panels_are_existing_objects() -> None:
    objects = kibana_objects()
    by_id = {(o["type"], o["id"]) for o in objects}
    dashboards = {o["id"]: o for o in objects if o["type"] == "dashboard"}
    assert set(dashboards) == {"sluice-training", "sluice-incidents"}
    for dashboard in dashboards.values():
        panels = json.loads(dashboard["attributes"]["panelsJSON"])
        refs = {r["name"]: r for r in dashboard["references"]}
        assert len(panels) >= 4
        for panel in panels:
            ref = refs[f"{panel['panelIndex']}:{panel['panelRefName']}"]
            assert ref["type"] == panel["type"]
            assert (ref["type"], ref["id"]) in by_id
            grid = panel["gridData"]
            assert grid["x"] + grid["w"] <= 48 and grid["i"] == panel["panelIndex"]
        json.loads(dashboard["attributes"]["optionsJSON"])
        json.loads(dashboard["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])


def _check_annotation_layers(o: dict[str, Any], views: dict[str, str], refs: dict[str, str]) -> int:
    """Fields of a Lens chart's annotation layers (markers from another data view); how many were checked."""
    checked = 0
    for layer in o["attributes"]["state"]["visualization"].get("layers", []):
        if layer.get("layerType") != "annotations":
            continue
        assert refs[f"xy-visualization-layer-{layer['layerId']}"] == layer["indexPatternId"]
        pattern = views[layer["indexPatternId"]]
        for note in layer["annotations"]:
            assert field_type(pattern, note["timeField"]) == "date", f"{o['id']}: {note['timeField']}"
            for field in [*note["extraFields"], *_kql_fields(note["filter"]["query"])]:
                assert field_type(pattern, field) is not None, f"{o['id']}: annotation field {field}"
                checked += 1
    return checked


def test_kibana_views_use_only_fields_of_the_index_template() -> None:
    objects = kibana_objects()
    views = {o["id"]: o["attributes"]["title"] for o in objects if o["type"] == "index-pattern"}
    checked = 0
    for o in objects:
        if o["type"] == "lens":
            state = o["attributes"]["state"]
            refs = {r["name"]: r["id"] for r in o["references"]}
            for layer_id, layer in state["datasourceStates"]["formBased"]["layers"].items():
                pattern = views[refs[f"indexpattern-datasource-layer-{layer_id}"]]
                assert set(layer["columnOrder"]) == set(layer["columns"])
                for column in layer["columns"].values():
                    fields = [column.get("sourceField"), *column.get("params", {}).get("secondaryFields", []),
                              column.get("params", {}).get("sortField")]
                    for field in filter(None, fields):
                        if field == "___records___":
                            continue
                        kind = field_type(pattern, field)
                        assert kind is not None, f"{o['id']}: {field} is not in the template of {pattern}"
                        assert kind in AGGREGATABLE, f"{o['id']}: {field} ({kind}) cannot be aggregated"
                        if column["operationType"] in ("average", "percentile", "median", "sum", "range"):
                            assert kind in NUMERIC, f"{o['id']}: {column['operationType']} of {kind} {field}"
                        checked += 1
                for field in _kql_fields(state["query"]["query"]):
                    assert field_type(pattern, field) is not None, f"{o['id']}: query field {field}"
            checked += _check_annotation_layers(o, views, refs)
        elif o["type"] == "search":
            pattern = views[o["references"][0]["id"]]
            source = json.loads(o["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
            for field in [*o["attributes"]["columns"], *_kql_fields(source["query"]["query"]),
                          *(s[0] for s in o["attributes"]["sort"])]:
                assert field_type(pattern, field) is not None, f"{o['id']}: {field} is not in {pattern}'s template"
                checked += 1
    assert checked >= 15


def test_kibana_metric_fields_are_ones_the_assemble_stage_emits() -> None:
    from streams.assemble.keys import CANONICAL_METRICS
    from streams.assemble.steplines import RULE_METRICS
    from streams.gpu.reading import METRIC_FIELDS

    emitted = CANONICAL_METRICS | RULE_METRICS | {name for name, _attr in METRIC_FIELDS}
    used = set(re.findall(r"metrics\.([a-z_]+)", (DEPLOY / "kibana" / "sluice.ndjson").read_text()))
    assert used and used <= emitted, used - emitted


# -- Grafana and the metrics contract ----------------------------------------------------------------

GRAFANA_SCHEMA = {
    "type": "object", "required": ["uid", "title", "panels", "schemaVersion", "templating", "time"],
    "properties": {
        "uid": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,40}$"},
        "schemaVersion": {"type": "integer", "minimum": 36},
        "templating": {"type": "object", "required": ["list"]},
        "panels": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["id", "type", "title", "gridPos", "targets", "datasource"],
            "properties": {
                "id": {"type": "integer"},
                "type": {"enum": ["timeseries", "stat", "gauge", "table", "bargauge"]},
                "gridPos": {"type": "object", "required": ["x", "y", "w", "h"],
                            "properties": {"x": {"type": "integer", "minimum": 0},
                                           "w": {"type": "integer", "minimum": 1, "maximum": 24}}},
                "targets": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "required": ["refId", "expr"],
                    "properties": {"expr": {"type": "string", "minLength": 1}}}},
            },
        }},
    },
}


def documented_metrics(section: str = "Implemented") -> set[str]:
    text = (REPO_ROOT / "docs" / "metrics.md").read_text()
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(sluice_[a-z0-9_]+)`", body, re.MULTILINE))


def test_docs_metrics_table_is_what_the_workers_register() -> None:
    from streams import observability

    registered = {family.name + ("_total" if family.type == "counter" else "")
                  for family in observability.REGISTRY.collect()}
    assert documented_metrics() == registered


def test_grafana_dashboard_uses_documented_metrics() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "sluice-pipeline.json").read_text())
    jsonschema.validate(dashboard, GRAFANA_SCHEMA)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    documented = documented_metrics()
    used = set()
    for panel in dashboard["panels"]:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for target in panel["targets"]:
            for name in re.findall(r"\b(sluice_[a-z0-9_]+)", target["expr"]):
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                assert name in documented or base in documented, f"{panel['title']}: {name} is not in docs/metrics.md"
                used.add(base if base in documented else name)
    # The views the pipeline's operators asked for.
    for wanted in ("sluice_consumer_lag", "sluice_sink_acked_total", "sluice_sink_latency_seconds",
                   "sluice_throttle_wait_seconds_total", "sluice_dead_letters_total", "sluice_open_multiline_blocks"):
        assert wanted in used, wanted


def test_the_dashboard_has_project_and_task_controls_and_gpu_panels() -> None:
    objects = kibana_objects()
    (dashboard,) = [o for o in objects if o["type"] == "dashboard" and o["id"] == "sluice-training"]
    controls = json.loads(dashboard["attributes"]["controlGroupInput"]["panelsJSON"])
    assert sorted(c["explicitInput"]["fieldName"] for c in controls.values()) == ["project", "task_id"]
    refs = {r["name"]: r["id"] for r in dashboard["references"]}
    for cid, control in controls.items():
        view = next(o for o in objects if o["id"] == refs[f"controlGroup_{cid}:optionsListDataView"])
        assert field_type(view["attributes"]["title"], control["explicitInput"]["fieldName"]) == "keyword"
    panels = {r["id"] for r in dashboard["references"]}
    assert {"sluice-gpu-utilisation", "sluice-gpu-samples-memory", "sluice-alerts-table"} <= panels
    gpu = next(o for o in objects if o["id"] == "sluice-gpu-utilisation")
    layers = gpu["attributes"]["state"]["visualization"]["layers"]
    assert [la["layerType"] for la in layers] == ["data", "annotations"]
    assert layers[1]["annotations"][0]["filter"]["query"] == 'rule : "gpu_idle"'


GRAFANA_ES_SCHEMA = {
    "type": "object", "required": ["uid", "title", "panels", "templating", "annotations"],
    "properties": {"panels": {"type": "array", "minItems": 2, "items": {
        "type": "object", "required": ["id", "type", "title", "gridPos", "targets", "datasource"],
        "properties": {"targets": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["refId", "query", "metrics", "bucketAggs", "timeField"]}}}}}},
}


def test_grafana_gpu_dashboard_reads_fields_of_the_metric_and_alert_indices() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "sluice-gpu.json").read_text())
    jsonschema.validate(dashboard, GRAFANA_ES_SCHEMA)
    metrics, alerts = "sluice-metrics-*", f"{settings().watch.alerts_index_prefix}*"
    titles = set()
    for panel in dashboard["panels"]:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for target in panel["targets"]:
            for field in [target["timeField"], *(m["field"] for m in target["metrics"]),
                          *(b["field"] for b in target["bucketAggs"]), *_kql_fields(target["query"])]:
                assert field_type(metrics, field) is not None, f"{panel['title']}: {field}"
            kinds = [b["type"] for b in target["bucketAggs"]]
            assert kinds[-1] == "date_histogram" and [b["field"] for b in target["bucketAggs"][:2]] == [
                "source.host", "gpu.index"], "per node and GPU"
        titles.add(panel["title"])
    assert {"GPU utilisation per node and GPU", "GPU memory in use per node and GPU"} <= titles
    (idle,) = dashboard["annotations"]["list"]
    assert "rule:gpu_idle" in idle["query"]
    for field in (idle["timeField"], idle["timeEndField"], idle["tagsField"], idle["textField"]):
        assert field_type(alerts, field) is not None, field
    assert field_type(alerts, idle["timeField"]) == field_type(alerts, idle["timeEndField"]) == "date"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert {"project", "task"} <= variables.keys()


# -- operator guide ----------------------------------------------------------------------------------

def guide_commands() -> list[tuple[str, str]]:
    """(command line, trailing comment) of every `sluice ...` line in the guide's code blocks."""
    text = (REPO_ROOT / "docs" / "operator-guide.md").read_text()
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL):
        for raw in block.splitlines():
            line = raw.strip().removeprefix("$ ")
            if " -- sluice " in line:  # kubectl exec/run ... -- sluice ...
                line = line.split(" -- ", 1)[1]
            if not line.startswith("sluice "):
                continue
            command, _, comment = line.partition(" #")
            out.append((command.strip(), comment.strip()))
    return out


def _takes_value(command: click.Command, token: str) -> int:
    """1 when ``token`` is an option of ``command`` followed by its value, else 0."""
    name = token.split("=", 1)[0]
    for param in command.params:
        if isinstance(param, click.Option) and name in (*param.opts, *param.secondary_opts):
            return 0 if param.is_flag or "=" in token else 1
    return 0


def _check_options(line: str, command: click.Command, path: list[str], tokens: list[str]) -> None:
    """Every option in ``tokens`` is one of ``command``'s; an option's value is never taken for one."""
    options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-"):
            assert token.split("=", 1)[0] in options, f"`{line}`: {token} is not an option of {' '.join(path)}"
            i += _takes_value(command, token)
        i += 1


def test_operator_guide_commands_exist_in_the_cli() -> None:
    from streams.cli.main import cli

    commands = guide_commands()
    assert len(commands) >= 10
    paths = set()
    for line, comment in commands:
        tokens = shlex.split(line)[1:]
        command: click.Command = cli
        path = ["sluice"]
        while isinstance(command, click.Group) and tokens:
            if tokens[0] in command.commands:
                command = command.commands[tokens.pop(0)]
                path.append(command.name or "")
            elif tokens[0].startswith("-"):  # a group's own option (`sluice --config F ...`)
                _check_options(line, command, path, tokens[:2])
                tokens = tokens[1 + _takes_value(command, tokens[0]):]
            else:
                break
        assert not isinstance(command, click.Group), f"`{line}`: {' '.join(path)} needs a subcommand"
        _check_options(line, command, path, tokens)
        if "not built yet" in (command.help or ""):
            assert "not built yet" in comment, f"`{line}`: mark it `# not built yet` as `sluice --help` does"
        paths.add(" ".join(path))
    for wanted in ("sluice schemas check", "sluice dlq ls", "sluice dlq show", "sluice dlq redrive",
                   "sluice replay", "sluice top"):
        assert wanted in paths, f"the guide should show {wanted}"


# -- access: TLS everywhere, each stage its own credentials, metrics for Prometheus only ----------

def test_connections_are_secured() -> None:
    s = settings()
    assert s.kafka.security_protocol == "SASL_SSL" and s.kafka.sasl_mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256")
    for url in (s.elasticsearch.url, s.registry.url, s.object_store.endpoint_url):
        assert url.startswith("https://"), url
    assert s.object_store.access_key_id is None, "the object store's key comes from the default credential chain"
    assert s.elasticsearch.username is None and s.elasticsearch.password is None, "hot and watch use API keys"
    (ship,) = of_kind("ship-daemonset.yaml", "DaemonSet")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in ship["env"]}
    assert env["SLUICE_KAFKA__SECURITY_PROTOCOL"]["value"] == s.kafka.security_protocol
    assert env["SLUICE_KAFKA__SSL_CAFILE"]["value"] == s.kafka.ssl_cafile
    assert env["SLUICE_REGISTRY__URL"]["value"].startswith("https://")


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_has_its_own_kafka_user_and_only_the_credentials_it_uses(stage: str) -> None:
    env = {e["name"]: e for e in _container(stage)["env"]}
    assert env["SLUICE_KAFKA__SASL_USERNAME"]["value"] == f"sluice-{stage}"
    assert env["SLUICE_KAFKA__SASL_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == f"kafka-{stage}-password"
    writes_es = stage in ("hot", "watch")
    assert ("SLUICE_ELASTICSEARCH__API_KEY" in env) == writes_es
    if writes_es:
        assert env["SLUICE_ELASTICSEARCH__API_KEY"]["valueFrom"]["secretKeyRef"]["key"] == \
            f"elasticsearch-{stage}-api-key"
    assert not any(name.startswith("SLUICE_OBJECT_STORE__") for name in env), "no static key in the settings"
    assert ({n for n in env if n.startswith("AWS_")} != set()) == (stage == "cold")
    for name in (n for n in env if n.startswith("AWS_")):
        assert env[name]["valueFrom"]["secretKeyRef"]["optional"] is True, "IRSA clusters set no static key"


def test_cold_stage_runs_as_its_own_service_account() -> None:
    pod = of_kind("cold.yaml", "Deployment")["spec"]["template"]["spec"]
    account = of_kind("cold.yaml", "ServiceAccount")
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert "eks.amazonaws.com/role-arn" in account["metadata"]["annotations"]


def test_metrics_listen_on_the_pod_ip_and_only_prometheus_may_connect() -> None:
    from streams.config import ObservabilitySettings

    assert ObservabilitySettings().host == "127.0.0.1", "the setting's default is loopback"
    port = settings().observability.port
    (policy,) = [d for d in k8s_docs("networkpolicy.yaml") if d["metadata"]["name"] == "sluice-workers-metrics"]
    selector = policy["spec"]["podSelector"]["matchExpressions"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    assert [p["port"] for p in rule["ports"]] == [port]
    assert all("podSelector" in peer for peer in rule["from"]), "from Prometheus pods only, not whole namespaces"
    for stage in STAGES:
        env = {e["name"]: e for e in _container(stage)["env"]}
        assert env["SLUICE_OBSERVABILITY__HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
        labels = of_kind(f"{stage}.yaml", "Deployment")["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(e["key"]) in e["values"] for e in selector), f"{stage} pods are not selected"
    # The shipper: its own port, the same rule.
    from streams.ship.settings import ShipSettings

    daemonset = of_kind("ship-daemonset.yaml", "DaemonSet")["spec"]["template"]
    (ship,) = daemonset["spec"]["containers"]
    env = {e["name"]: e for e in ship["env"]}
    assert env["SLUICE_OBSERVABILITY__HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    (ship_policy,) = [d for d in k8s_docs("networkpolicy.yaml") if d["metadata"]["name"] == "sluice-ship-metrics"]
    assert ship_policy["spec"]["podSelector"]["matchLabels"].items() <= daemonset["metadata"]["labels"].items()
    (ship_rule,) = ship_policy["spec"]["ingress"]
    assert [p["port"] for p in ship_rule["ports"]] == [ShipSettings().metrics_port]
    assert {p["containerPort"] for p in ship["ports"]} == {ShipSettings().metrics_port}


@pytest.mark.parametrize("stage", STAGES)
def test_keda_authenticates_to_the_sasl_listener(stage: str) -> None:
    (trigger,) = of_kind(f"{stage}.yaml", "ScaledObject")["spec"]["triggers"]
    auth = of_kind("keda-auth.yaml", "TriggerAuthentication")
    assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"]
    params = {ref["parameter"]: ref for ref in auth["spec"]["secretTargetRef"]}
    assert set(params) <= KAFKA_AUTH_PARAMETERS
    assert {"sasl", "username", "password", "tls"} <= set(params)
    assert not {"sasl", "tls"} & set(trigger["metadata"]), "auth settings belong in the TriggerAuthentication"


def test_the_report_cronjob_sends_yesterdays_report_with_secrets_from_files(tmp_path, monkeypatch) -> None:
    import os

    from streams.cli.main import cli
    from streams.config import load_settings

    cron = of_kind("report-cronjob.yaml", "CronJob")
    assert cron["spec"]["timeZone"] == "Etc/UTC" and cron["spec"]["concurrencyPolicy"] == "Forbid"
    _minute, hour, *rest = cron["spec"]["schedule"].split()
    assert rest == ["*", "*", "*"] and int(hour) < 6, "shortly after midnight UTC, for the day that just ended"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = container["args"]
    assert args[0] == "summary" and "--send" in args and args[args.index("--day") + 1] == "-1d"
    summary = cli.commands["summary"]
    summary.make_context("summary", args[1:])  # every option is one `sluice summary` takes
    assert pod["securityContext"]["runAsUser"] == IMAGE_UID and pod["restartPolicy"] == "Never"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"]["name"] == of_kind("configmap.yaml", "ConfigMap")["metadata"]["name"]
    assert volumes["report-secrets"]["secret"]["secretName"] == "sluice-report"
    env = {e["name"]: e for e in container["env"]}
    for name, e in env.items():
        assert _setting_exists(name), f"report: {name} is no setting of streams/"
        if any(word in name for word in SECRET_WORDS) and not name.endswith("_FILE"):
            assert "value" not in e, f"report: {name} must come from a Secret"
    # The settings as the pod loads them: the ConfigMap, this environment, the Secret's files.
    secret_dir = tmp_path / "report"
    secret_dir.mkdir()
    for key in ("webhook-url", "smtp-password"):
        (secret_dir / key).write_text(f"{key}-from-the-secret\n")
    config = tmp_path / "sluice.yaml"
    config.write_text(generate().configmap_yaml())
    for name in [k for k in os.environ if k.startswith("SLUICE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SLUICE_CONFIG", str(config))
    for name, e in env.items():
        if "value" in e and name != "SLUICE_CONFIG":
            monkeypatch.setenv(name, e["value"].replace(mounts["report-secrets"], str(secret_dir)))
    report = load_settings().watch.report
    target = report.target_for("any-project")
    assert target is not None and target.webhook_url is not None
    assert target.webhook_url.get_secret_value() == "webhook-url-from-the-secret"
    assert report.smtp_password is not None
    assert report.smtp_password.get_secret_value() == "smtp-password-from-the-secret"
