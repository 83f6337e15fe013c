"""deploy/prometheus/sluice-rules.yaml in the style of the deploy-manifest tests: a strict schema of the
PrometheusRule CRD's documented fields, then what makes the rules right for this code: every metric an
expression uses is one the workers register (docs/metrics.md), every `stage` value is one they label
with, every runbook points at a section of the operator guide, and the alerts the guide promises exist."""

from __future__ import annotations

import re

import jsonschema
import pytest
import yaml

from streams import observability as obs
from streams.config import REPO_ROOT

RULES = REPO_ROOT / "deploy" / "prometheus" / "sluice-rules.yaml"
GUIDE = REPO_ROOT / "docs" / "operator-guide.md"

_STR = {"type": "string"}
_DURATION = {"type": "string", "pattern": r"^([0-9]+(ms|s|m|h|d|w|y))+$"}
# monitoring.coreos.com/v1 PrometheusRule (prometheus-operator CRD): the fields used for alerting rules.
RULE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "PrometheusRule"},
        "metadata": {"type": "object", "required": ["name", "namespace"],
                     "properties": {"name": _STR, "namespace": _STR,
                                    "labels": {"type": "object", "additionalProperties": _STR}}},
        "spec": {
            "type": "object", "additionalProperties": False, "required": ["groups"],
            "properties": {"groups": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["name", "rules"],
                "properties": {
                    "name": _STR, "interval": _DURATION,
                    "rules": {"type": "array", "minItems": 1, "items": {
                        "type": "object", "additionalProperties": False, "required": ["alert", "expr", "labels",
                                                                                      "annotations"],
                        "properties": {
                            "alert": {"type": "string", "pattern": "^Sluice[A-Za-z]+$"}, "expr": _STR,
                            "for": _DURATION, "keep_firing_for": _DURATION,
                            "labels": {"type": "object", "required": ["severity"],
                                       "properties": {"severity": {"enum": ["critical", "warning", "info"]}},
                                       "additionalProperties": _STR},
                            "annotations": {"type": "object", "additionalProperties": False,
                                            "required": ["summary", "description", "runbook"],
                                            "properties": {"summary": _STR, "description": _STR, "runbook": _STR}},
                        },
                    }},
                },
            }}},
        },
    },
}


def rules() -> list[dict[str, object]]:
    doc = yaml.safe_load(RULES.read_text())
    return [r for g in doc["spec"]["groups"] for r in g["rules"]]


def registered_metrics() -> set[str]:
    return {m.name for m in obs.REGISTRY.collect()} | {
        f"{m.name}{suffix}" for m in obs.REGISTRY.collect() for suffix in ("_total", "_bucket", "_sum", "_count")}


def test_the_rules_validate_against_the_crd_schema() -> None:
    jsonschema.validate(yaml.safe_load(RULES.read_text()), RULE_SCHEMA)
    names = [r["alert"] for r in rules()]
    assert len(names) == len(set(names))


def test_the_schema_catches_mistakes() -> None:
    doc = yaml.safe_load(RULES.read_text())
    doc["spec"]["groups"][0]["rules"][0]["for"] = "ten minutes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, RULE_SCHEMA)


@pytest.mark.parametrize("rule", rules(), ids=lambda r: str(r["alert"]))
def test_each_rule_uses_metrics_and_stages_the_workers_have(rule: dict[str, object]) -> None:
    expr = str(rule["expr"])
    assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}")
    used = set(re.findall(r"\bsluice_[a-z_]+\b", expr))
    assert used and used <= registered_metrics(), used - registered_metrics()
    documented = (REPO_ROOT / "docs" / "metrics.md").read_text()
    assert all(f"`{m}`" in documented for m in used)
    assert set(re.findall(r'stage="([a-z_]+)"', expr)) <= set(obs.STAGE_LABELS.values())
    for labels in re.findall(r"by \(([^)]*)\)", expr):
        for label in (x.strip() for x in labels.split(",")):
            assert label in {"stage", "error_type", "project", "pod"}, label


def test_runbooks_are_sections_of_the_operator_guide() -> None:
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
               for h in re.findall(r"^#+ (.+)$", GUIDE.read_text(), re.MULTILINE)}
    for rule in rules():
        runbook = str(rule["annotations"]["runbook"])  # type: ignore[index]
        path, _, anchor = runbook.partition("#")
        assert path == "docs/operator-guide.md" and anchor in anchors, runbook


def test_every_health_concern_has_an_alert() -> None:
    exprs = " ".join(str(r["expr"]) for r in rules())
    for metric in ("sluice_consumer_lag_seconds", "sluice_dead_letters_total", "sluice_transactions_aborted_total",
                   "sluice_producers_abandoned", "sluice_partitions_paused", "sluice_worker_ready"):
        assert metric in exprs, metric
    assert all(f'absent(sluice_worker_ready{{stage="{s}"}})' in exprs for s in obs.STAGE_LABELS.values())
