"""The real Elasticsearch, each supported major: the client speaks to it, documents indexed by id, templates applied."""

from __future__ import annotations

import elasticsearch
import httpx

from streams.clients import es_client
from streams.config import Settings


def _server_version(settings: Settings) -> str:
    # The integ-test-zip has no `GET /` handler; the nodes API reports the version.
    nodes = httpx.get(f"{settings.elasticsearch.url}/_nodes/_local", timeout=10).json()["nodes"]
    return str(next(iter(nodes.values()))["version"])


def test_the_client_speaks_to_every_supported_major(es_stack: Settings) -> None:
    """The 8.x client sends REST-compatibility headers for 8, which 8.x servers take natively and 9.x
    servers through their compatibility with the previous major."""
    server = _server_version(es_stack)
    assert server.split(".")[0] in ("8", "9")
    assert es_stack.stack.elasticsearch_version == server
    assert elasticsearch.__versionstr__.split(".")[0] == "8"
    es = es_client(es_stack.elasticsearch)
    assert es.cluster.health(wait_for_status="yellow", timeout="30s")["status"] in ("yellow", "green")


def test_index_by_id_is_idempotent_and_searchable(es_stack: Settings, unique_name) -> None:
    es = es_client(es_stack.elasticsearch)
    index = unique_name("sluice-test")
    doc = {"message": "torch.OutOfMemoryError: CUDA out of memory.", "level": "ERROR"}
    es.index(index=index, id="evt-1", document=doc, refresh="wait_for")
    es.index(index=index, id="evt-1", document=doc, refresh="wait_for")  # a replay: same _id
    assert es.count(index=index)["count"] == 1
    hits = es.search(index=index, query={"match": {"message": "cuda memory"}})["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["evt-1"]
    es.indices.delete(index=index)


def test_composable_template_maps_numbers_as_numbers(es_stack: Settings, unique_name) -> None:
    es = es_client(es_stack.elasticsearch)
    prefix = unique_name("tmpl")
    es.indices.put_index_template(
        name=prefix, index_patterns=[f"{prefix}-*"],
        template={"mappings": {"properties": {"loss": {"type": "double"}, "step": {"type": "long"}}}},
    )
    index = f"{prefix}-2026.11.29"
    # A string loss still lands as a number: the template, not the first document, decides.
    es.index(index=index, id="1", document={"loss": "1.25", "step": "10"}, refresh="wait_for")
    mapping = es.indices.get_mapping(index=index)[index]["mappings"]["properties"]
    assert mapping["loss"]["type"] == "double"
    assert es.search(index=index, query={"range": {"loss": {"gt": 1.0}}})["hits"]["total"]["value"] == 1
    es.indices.delete(index=index)
    es.indices.delete_index_template(name=prefix)


def test_ilm_is_absent_in_this_distribution(es_stack: Settings) -> None:
    """Recorded fact: the integ-test-zip has no ILM, so retention is Sluice's own job."""
    resp = httpx.get(f"{es_stack.elasticsearch.url}/_ilm/policy", timeout=10)
    assert resp.status_code in (400, 404, 405)
