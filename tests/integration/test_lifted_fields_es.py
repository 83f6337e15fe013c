"""Lifted fields in the real Elasticsearch: NaN losses, per-task-type indices, out-of-window times.

Elasticsearch refuses a non-finite number in a numeric field (``[double] supports only finite values``),
and JSON cannot carry one. The event keeps its NaN (Avro doubles carry it to Kafka and the cold tier);
the hot sink's request builder writes the field as missing and names it, searchable, in ``non_finite``
(``loss=nan``). Checked here against the server, with the hot tier's own mappings.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import elasticsearch
import pytest

from streams.assemble.pipeline import Assembler, RawRecord
from streams.clients import es_client
from streams.config import ProjectRoute, RoutingSettings, Settings
from streams.sinks.elasticsearch.request import IndexNamer, bulk_body, encode
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.templates import common_mappings, logs_mappings, metrics_mappings

READ = 1_743_854_400_000  # 2025-04-05T12:00:00Z


def outputs(lines: list[str], project: str) -> list:
    asm = Assembler()
    out = []
    for i, line in enumerate(lines):
        out += asm.feed(RawRecord("logs.raw", 0, i, (line + "\n").encode(), b"k", READ + i))
    out += asm.flush_all()
    for o in out:  # as the project label would route it
        o.value["project"] = project
    return out


@pytest.fixture
def indices(stack: Settings, unique_name: Callable[[str], str]):
    es = es_client(stack.elasticsearch)
    hot = HotSinkSettings()
    project = unique_name("fields")
    prefix = unique_name("fieldtest")
    names = []
    # The hot tier's own mappings, under names and patterns of this test only (the stack is shared).
    metrics_pattern = f"{hot.metrics_index_prefix}-{project}-*"
    for pattern, mappings in ((f"{prefix}-*", logs_mappings(hot)), (metrics_pattern, metrics_mappings())):
        name = pattern.removesuffix("-*")
        es.cluster.put_component_template(name=f"{name}@common", template={"mappings": common_mappings(hot)})
        es.cluster.put_component_template(name=f"{name}@mappings", template={"mappings": mappings})
        es.indices.put_index_template(name=name, index_patterns=[pattern], priority=hot.template_priority + 50,
                                      composed_of=[f"{name}@common", f"{name}@mappings"])
        names.append(name)
    namer = IndexNamer(RoutingSettings(projects={project: ProjectRoute(index_prefix=prefix)}))
    yield es, namer, project, prefix, hot.metrics_index_prefix
    for name in names:
        es.options(ignore_status=404).indices.delete(index=f"{name}-*")
        es.options(ignore_status=404).indices.delete_index_template(name=name)
        for part in ("@mappings", "@common"):
            es.options(ignore_status=404).cluster.delete_component_template(name=f"{name}{part}")


def index_all(es, namer: IndexNamer, outs: list) -> list[str]:
    actions = [encode(o.value, namer) for o in outs]
    resp = es.bulk(operations=bulk_body(actions), refresh="wait_for")
    assert not resp["errors"], [i for i in resp["items"] if "error" in next(iter(i.values()))]
    return [a.index for a in actions]


def test_nan_loss_is_indexed_as_missing_and_named_in_non_finite(indices) -> None:
    es, namer, project, _prefix, metrics_prefix = indices
    megatron = " iteration       20/     100 | lm loss: NAN | grad norm: nan | loss scale: 1.0 |"
    hf = "{'loss': 1.25, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.5}"
    outs = outputs([megatron, hf], project)
    assert [o.kind for o in outs] == ["metric", "metric"] and math.isnan(outs[0].value["metrics"]["loss"])
    (index,) = set(index_all(es, namer, outs))
    hits = es.search(index=f"{metrics_prefix}-{project}-*", query={"term": {"non_finite": "metrics.loss=nan"}})["hits"]
    assert hits["total"]["value"] == 1 and hits["hits"][0]["_source"]["step"] == 20
    assert "loss" not in hits["hits"][0]["_source"]["metrics"]
    finite = es.search(index=f"{metrics_prefix}-{project}-*", query={"range": {"metrics.loss": {"gte": 1.0}}})["hits"]
    assert finite["total"]["value"] == 1, "the finite loss of the other point is a number"
    # What the request builder spares us: Elasticsearch refuses NaN in a double field outright.
    with pytest.raises(elasticsearch.BadRequestError, match="finite"):
        es.index(index=index, id="raw-nan", document={"metrics": {"loss": "NaN"}, "timestamp": READ})


def test_record_task_type_names_the_daily_index_and_a_bad_time_makes_none(indices) -> None:
    es, namer, project, prefix, _metrics_prefix = indices
    record = ('{"timestamp": "2025-04-05T10:23:45.123Z", "level": "INFO", "task_id": "t-1", '
              '"task_type": "lora_finetune", "msg": "checkpoint saved", "gpu_memory_mb": 18432}')
    far = '{"timestamp": "9999-01-01T00:00:00Z", "task_type": "lora_finetune", "msg": "clock gone wrong"}'
    outs = outputs([record, far], project)
    names = index_all(es, namer, outs)
    assert names == [f"{prefix}-lora_finetune-2025.04.05"] * 2, "the record's task type and day; no year 9999"
    doc = es.get(index=names[0], id=outs[0].value["event_id"])["_source"]
    assert doc["gpu_memory_mb"] == 18432.0 and doc["task_id"] == "t-1"
    bad = es.search(index=names[1], query={"term": {"attributes.sluice.flags": "timestamp_out_of_window"}})
    assert bad["hits"]["total"]["value"] == 1
