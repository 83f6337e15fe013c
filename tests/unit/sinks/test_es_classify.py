"""The retry classifier: per bulk item, and for whole-request failures."""

from __future__ import annotations

from streams.sinks.elasticsearch.classify import (
    Verdict,
    classify_bulk,
    classify_item,
    classify_request_error,
)


def item(status: int, etype: str = "", reason: str = "", caused_by: dict | None = None) -> dict:
    body: dict = {"status": status}
    if etype:
        body["error"] = {"type": etype, "reason": reason, **({"caused_by": caused_by} if caused_by else {})}
    return {"index": body}


def test_2xx_is_done() -> None:
    assert classify_item(item(201)).verdict is Verdict.OK
    assert classify_item(item(200)).verdict is Verdict.OK


def test_429_and_rejected_execution_retry_and_throttle() -> None:
    r = classify_item(item(429, "es_rejected_execution_exception", "rejected execution of TransportShardBulkAction"))
    assert r.verdict is Verdict.RETRY
    assert r.throttled
    assert "es_rejected_execution_exception" in r.reason


def test_5xx_retries_without_claiming_pushback() -> None:
    r = classify_item(item(503, "unavailable_shards_exception", "primary shard is not active"))
    assert r.verdict is Verdict.RETRY
    assert not r.throttled


def test_mapping_errors_are_rejected_with_the_reason_and_its_cause() -> None:
    r = classify_item(item(400, "document_parsing_exception", "[1:52] failed to parse field [logger] of type [long]",
                           caused_by={"type": "illegal_argument_exception", "reason": "For input string: \"trainer\""}))
    assert r.verdict is Verdict.REJECT
    assert r.error_type == "document_parsing_exception"
    assert "failed to parse field [logger]" in r.reason
    assert "For input string" in r.reason
    assert classify_item(item(400, "mapper_parsing_exception", "x")).verdict is Verdict.REJECT
    assert classify_item(item(400, "illegal_argument_exception", "x")).verdict is Verdict.REJECT


def test_bulk_without_errors_is_all_ok_and_incomplete_answers_retry_all() -> None:
    assert all(v.verdict is Verdict.OK for v in classify_bulk({"errors": False, "items": [item(201)] * 3}, 3))
    assert all(v.verdict is Verdict.RETRY for v in classify_bulk({"errors": False, "items": [item(201)]}, 3))


def test_mixed_bulk_is_classified_item_by_item() -> None:
    resp = {"errors": True, "items": [item(201), item(429, "es_rejected_execution_exception"),
                                      item(400, "mapper_parsing_exception", "bad")]}
    assert [v.verdict for v in classify_bulk(resp, 3)] == [Verdict.OK, Verdict.RETRY, Verdict.REJECT]


def test_whole_request_failures() -> None:
    assert classify_request_error(None, "ConnectionError", "refused").verdict is Verdict.RETRY
    assert classify_request_error(429, "es_rejected_execution_exception", "").throttled
    assert classify_request_error(502, "", "bad gateway").verdict is Verdict.RETRY
    assert classify_request_error(400, "parse_exception", "bad body").verdict is Verdict.REJECT


def test_client_exceptions_map_onto_the_verdicts() -> None:
    from elastic_transport import ApiResponseMeta, ConnectionError, HttpHeaders, NodeConfig
    from elasticsearch import ApiError

    from streams.sinks.elasticsearch.classify import classify_exception

    assert classify_exception(ConnectionError("refused")).verdict is Verdict.RETRY
    meta = ApiResponseMeta(429, "1.1", HttpHeaders(), 0.1, NodeConfig("http", "localhost", 9200))
    exc = ApiError("rejected", meta, {"error": {"type": "es_rejected_execution_exception", "reason": "queue full"}})
    r = classify_exception(exc)
    assert r.verdict is Verdict.RETRY
    assert r.throttled


def test_refused_credentials_stop_instead_of_rejecting() -> None:
    # A whole request answered 401 or 403 (wrong password, a role without the privilege): every document
    # would be refused alike, so none may be dead-lettered.
    for status, etype in ((401, "security_exception"), (403, "security_exception"), (401, "")):
        assert classify_request_error(status, etype, "unable to authenticate user").verdict is Verdict.STOP
    # An item refused for the user's privileges on its index, likewise.
    r = classify_item(item(403, "security_exception", "action [indices:data/write/bulk[s]] is unauthorized"))
    assert r.verdict is Verdict.STOP
    # A read-only block is 403 too, but it clears once disk is freed: retried, not a stop.
    blocked = classify_request_error(403, "cluster_block_exception", "index [x] blocked by: [FORBIDDEN/12/...]")
    assert blocked.verdict is Verdict.RETRY
    assert classify_item(item(403, "cluster_block_exception", "read-only")).verdict is Verdict.RETRY


def test_the_hot_sink_stops_on_a_401_and_dead_letters_nothing(corpus) -> None:
    import asyncio

    import pytest
    from elastic_transport import ApiResponseMeta, HttpHeaders
    from elasticsearch import AuthenticationException

    from devtools.testing.objectstore import corpus_events
    from streams.config import ElasticsearchSettings, RoutingSettings
    from streams.errors import DependencyRefused
    from streams.sinks.base import SinkRecord
    from streams.sinks.elasticsearch.settings import HotSinkSettings
    from streams.sinks.elasticsearch.sink import HotSink

    class WrongPassword:
        async def bulk(self, operations: bytes, filter_path: str) -> None:
            meta = ApiResponseMeta(401, "1.1", HttpHeaders(), 0.01, None)  # type: ignore[arg-type]
            raise AuthenticationException("security_exception", meta, {"error": {
                "type": "security_exception", "reason": "unable to authenticate user [sluice]"}, "status": 401})

    sink = HotSink(ElasticsearchSettings(url="http://es.example:9200"), RoutingSettings(),
                   HotSinkSettings(max_batch_age_s=0.0), client=WrongPassword(), clock=lambda: 0.0)
    for i, event in enumerate(corpus_events(corpus, "default", "t", limit=5)):
        sink.add(SinkRecord("logs.events.default", 0, i, None, event, b"", "default", 100))

    async def go() -> None:
        await sink.flush(0.0)
        while True:
            await asyncio.sleep(0.01)
            await sink.flush(0.0)

    with pytest.raises(DependencyRefused) as refused:
        asyncio.run(asyncio.wait_for(go(), 5))
    text = str(refused.value)
    assert "http://es.example:9200" in text and "HTTP 401" in text and "elasticsearch.username" in text
    assert sink.stats.items_rejected == 0
