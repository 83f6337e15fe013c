"""The grown contracts (MetricPoint's gpu record, Alert's status) against the real registry: a subject that
holds the contracts as they were accepts the new ones under backward-transitive compatibility."""

from __future__ import annotations

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from streams.config import REPO_ROOT, Settings
from streams.contracts import schema_text

BEFORE = REPO_ROOT / "tests" / "fixtures" / "contracts"


@pytest.mark.parametrize(("contract", "before"), [("metric_point", "metric_point.before-gpu.avsc"),
                                                  ("alert", "alert.before-status.avsc")])
def test_the_registry_takes_the_grown_contract_over_the_old_one(stack: Settings, unique_name, contract: str,
                                                                before: str) -> None:
    client = SchemaRegistryClient({"url": stack.registry.url})
    subject = unique_name(f"grown-{contract}") + "-value"
    client.set_compatibility(subject_name=subject, level="BACKWARD_TRANSITIVE")
    client.register_schema(subject, Schema((BEFORE / before).read_text().strip(), "AVRO"))
    new = Schema(schema_text(contract), "AVRO")
    assert client.test_compatibility(subject, new, version=1) is True
    assert client.register_schema(subject, new) > 0
    assert len(client.get_versions(subject)) == 2
