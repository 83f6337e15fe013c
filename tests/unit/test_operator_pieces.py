"""The pure pieces behind the operator commands: exit statuses, naming the unreachable server,
librdkafka lines once per cause, re-drive marks, the negative schema cache, unrouted projects, the
route guard of the assemble stage, `top`'s arithmetic, health, and the summary line."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import struct
from types import SimpleNamespace
from typing import Any

import fastavro
import httpx
import pytest

from streams import observability as obs
from streams.assemble.pipeline import Output
from streams.assemble.route import ProjectRouter
from streams.cli import exits
from streams.config import REPO_ROOT, AssembleSettings, Settings
from streams.contracts import parsed_schema
from streams.errors import ConfigError, NotFound, PartlyDone, SluiceError, Unreachable
from streams.kafka_log import OncePerCause, cause_of
from streams.rdkafka import Message
from streams.reach import unreachable_from
from streams.redrive_marks import REDRIVEN_FROM, REDRIVES, carry_marks, marks_for, marks_of, redrives_of
from streams.registry_cache import MissingSchemas, SchemaNotFound
from streams.top import Snapshot, compare
from streams.workers.assemble import AssembleStage
from streams.workers.routes import RouteGuard

SETTINGS = Settings()


# -- exit statuses -------------------------------------------------------------------------------

def test_each_error_kind_has_its_status() -> None:
    assert exits.status_of(SluiceError("x")) == 1
    assert exits.status_of(ConfigError("x")) == 3
    assert exits.status_of(Unreachable("Kafka", "h:1", "refused", "check")) == 4
    assert exits.status_of(NotFound("x")) == 5
    assert exits.status_of(PartlyDone("x")) == 6


def test_the_operator_guide_prints_the_exit_status_table() -> None:
    guide = (REPO_ROOT / "docs" / "operator-guide.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", guide, re.MULTILINE)
    assert [(int(code), meaning) for code, meaning in rows] == list(exits.TABLE)


# -- naming the server behind an exception -----------------------------------------------------

class ConnectionTimeout(Exception):
    pass


ConnectionTimeout.__module__ = "elastic_transport"


class EndpointConnectionError(Exception):
    pass


EndpointConnectionError.__module__ = "botocore.exceptions"


def test_connection_failures_name_their_server_through_the_cause_chain() -> None:
    from confluent_kafka import KafkaError, KafkaException

    outer = RuntimeError("search failed")
    outer.__cause__ = ConnectionTimeout("timed out after 10 s")
    found = unreachable_from(outer, SETTINGS)
    assert found is not None and str(found).startswith(f"cannot reach Elasticsearch at {SETTINGS.elasticsearch.url} "
                                                       "(timed out after 10 s)")
    s3 = unreachable_from(EndpointConnectionError("Could not connect"), SETTINGS)
    assert s3 is not None and s3.server == "the object store"
    kafka = unreachable_from(KafkaException(KafkaError(KafkaError._TRANSPORT, "b:9092/bootstrap: Connect failed")),
                             SETTINGS)
    assert kafka is not None and "cannot reach Kafka at 127.0.0.1:19092 (Connect failed)" in str(kafka)
    registry = unreachable_from(httpx.ConnectError("refused"), SETTINGS)
    assert registry is not None and registry.server == "the schema registry"
    assert unreachable_from(ValueError("a bug"), SETTINGS) is None
    assert unreachable_from(KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, "no")), SETTINGS) is None


# -- librdkafka lines ----------------------------------------------------------------------------

def test_a_cause_is_logged_once_whatever_its_counters() -> None:
    a = "FAIL [rdkafka#consumer-1] [thrd:h:1/bootstrap]: h:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: " \
        "Connection refused (after 0ms in state CONNECT)"
    b = a.replace("consumer-1", "producer-7").replace("after 0ms", "after 12ms")
    assert cause_of(a) == cause_of(b)
    assert cause_of(a) != cause_of(a.replace("Connection refused", "Connection reset"))
    once = OncePerCause()

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("streams.kafka", logging.ERROR, "", 0, msg, None, None)

    assert [once.filter(record(m)) for m in (a, b, a, a.replace("refused", "reset"))] == [True, False, False, True]


# -- re-drive marks ------------------------------------------------------------------------------

def test_marks_round_trip_and_count_redrives() -> None:
    headers = marks_for("logs.dlq", 0, 41, redrives_before=1)
    marks = marks_of([*headers, ("traceparent", b"00-abc")])
    assert marks == {REDRIVEN_FROM: "logs.dlq/0@41", REDRIVES: "2"}
    assert redrives_of(marks) == 2 and redrives_of({}) == 0 and redrives_of({REDRIVES: "garbage"}) == 0
    letters = [{"headers": {"step": "decode"}}, {"headers": {}}]
    carry_marks(letters, marks)
    assert letters[0]["headers"] == {"step": "decode", **marks} and letters[1]["headers"] == marks


def test_the_assemble_stage_copies_a_redriven_records_marks_into_its_new_letter() -> None:
    stage = AssembleStage(Settings(assemble=AssembleSettings()), registry=None)
    committed: list[list[Output]] = []

    async def commit(outputs: list[Output], _partitions: set[int]) -> None:
        committed.append(outputs)

    stage.commit = commit  # type: ignore[method-assign]
    unknown = b"\x00" + (999_999).to_bytes(4, "big") + b"\x02junk"
    marks = marks_for("logs.dlq", 0, 7, redrives_before=0)

    def event(offset: int, headers: Any) -> Any:
        return Message(topic="logs.raw", partition=0, offset=offset, value=unknown, key=b"src",
                       timestamp=1_700_000_000.0, headers=headers, generation_id=0)

    asyncio.run(stage.on_batch([event(100, marks), event(101, None)]))
    letters = [o.value for o in committed[0] if o.kind == "dead_letter"]
    assert [redrives_of(lt["headers"]) for lt in letters] == [1, 0]
    assert letters[0]["headers"][REDRIVEN_FROM] == "logs.dlq/0@7" and REDRIVEN_FROM not in letters[1]["headers"]


# -- schema ids the registry does not have --------------------------------------------------------

class Missing404(Exception):
    http_status_code = 404


class FakeRegistry:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def get_schema(self, schema_id: int) -> Any:
        self.asked.append(schema_id)
        if schema_id == 1:
            return SimpleNamespace(schema_str='"string"')
        if schema_id == 2:
            raise ConnectionError("registry down")
        raise Missing404(f"Schema {schema_id} not found")


def test_an_unknown_schema_id_is_asked_for_once_per_ttl() -> None:
    now = [0.0]
    cache, registry = MissingSchemas(ttl_s=60, clock=lambda: now[0]), FakeRegistry()
    for _ in range(5):
        with pytest.raises(SchemaNotFound):
            cache.get_schema(registry, 9999)
    assert registry.asked == [9999]
    now[0] = 61.0
    with pytest.raises(SchemaNotFound):
        cache.get_schema(registry, 9999)
    assert registry.asked == [9999, 9999], "asked again once the entry expired"
    for _ in range(2):
        with pytest.raises(ConnectionError):
            cache.get_schema(registry, 2)
    assert registry.asked.count(2) == 2, "a registry that is down is not remembered as 'not found'"
    assert cache.get_schema(registry, 1).schema_str == '"string"'


# -- projects not in the routing table ------------------------------------------------------------

def test_an_unrouted_project_goes_to_the_default_counted_and_told_once() -> None:
    told: list[tuple[str, str]] = []
    router = ProjectRouter("default", known=["default", "llm"], on_fold=lambda a, b: told.append((a, b)))
    for host in ("a", "b", "c"):
        assert router.project({"project": "ghost"}, {"host": host}) == "default"
    assert router.project({"project": "llm"}, {}) == "llm"
    assert router.take_folded() == {"ghost": 3} and router.take_folded() == {}
    assert told == [("ghost", "default")]


# -- the assemble stage's route guard --------------------------------------------------------------

class FakeEncoder:
    def __init__(self, unregistered: set[str]) -> None:
        self.unregistered = unregistered

    def topic_of(self, out: Output) -> str:
        return out.topic

    def encode(self, out: Output) -> tuple[str, bytes | None, bytes]:
        if out.topic in self.unregistered:
            raise Missing404(f"No artifact with ID '{out.topic}-value'")
        return out.topic, out.key, b"encoded"


class FakeLookupRegistry:
    def lookup_schema(self, subject: str, _schema: Any, normalize_schemas: bool = False) -> Any:
        assert subject == "logs.events.default-value"
        return SimpleNamespace(schema_id=42)


def an_event(project: str) -> Output:
    from streams.assemble.pipeline import parse_files

    path = REPO_ROOT / "corpus" / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    value = next(v for v in parse_files([path], labels={"project": project}) if "message" in v)
    value["project"] = project
    return Output("event", f"logs.events.{project}", value["event_id"].encode(), value)


def test_events_for_a_topic_that_cannot_be_written_become_letters_that_redrive_as_events() -> None:
    exists = {"logs.events.default": True, "logs.events.gone": False, "logs.events.nosubject": True}
    checked: list[str] = []

    def topic_exists(topic: str) -> bool:
        checked.append(topic)
        return exists[topic]

    guard = RouteGuard(SETTINGS, FakeEncoder({"logs.events.nosubject"}), FakeLookupRegistry(), topic_exists,
                       clock=lambda: 0.0)
    ok, gone, nosubject = an_event("default"), an_event("gone"), an_event("nosubject")
    sent, encoded = guard.encode_all([ok, gone, nosubject, gone])
    assert [o.kind for o in sent] == ["event", "dead_letter", "dead_letter", "dead_letter"]
    assert encoded[0] == ("logs.events.default", ok.key, b"encoded")
    letter = sent[1].value
    assert (letter["topic"], letter["error_type"], letter["partition"]) == ("logs.events.gone", "unroutable", -1)
    assert "topic logs.events.gone does not exist" in letter["error"] and "sluice project add gone" in letter["error"]
    assert "subject logs.events.nosubject-value is not registered" in sent[2].value["error"]
    # The letter's original is the event as its topic would hold it: re-driven there, the sinks read it.
    magic, schema_id = struct.unpack(">bI", letter["original"][:5])
    assert (magic, schema_id) == (0, 42)
    body = fastavro.schemaless_reader(io.BytesIO(letter["original"][5:]), parsed_schema("log_event"), None)
    assert body["event_id"] == gone.value["event_id"] and body["message"] == gone.value["message"]
    assert checked.count("logs.events.gone") == 1, "a missing topic is looked up again only after retry_s"


# -- top -----------------------------------------------------------------------------------------

def test_top_shows_a_partition_with_nothing_committed_lagging_from_the_first_offset_held() -> None:
    ends = {("raw", 0): 10, ("raw", 1): 8, ("logs.dlq", 0): 4}
    lows = {("raw", 0): 0, ("raw", 1): 2, ("logs.dlq", 0): 0}
    prev = Snapshot(0.0, ends, lows, {"g": {("raw", 0): 4, ("raw", 1): None}}, letters=3)
    cur = Snapshot(2.0, {**ends, ("raw", 0): 14}, lows, {"g": {("raw", 0): 10, ("raw", 1): None}}, letters=5)
    view = compare(prev, cur)
    rows = {(r.topic, r.partition): r for r in view.groups}
    assert (rows[("raw", 0)].committed, rows[("raw", 0)].lag, rows[("raw", 0)].out_per_s) == (10, 4, 3.0)
    assert (rows[("raw", 1)].committed, rows[("raw", 1)].lag, rows[("raw", 1)].out_per_s) == (None, 6, 0.0)
    assert (view.dead_letters, view.dead_letters_per_s) == (5, 1.0)


# -- health --------------------------------------------------------------------------------------

def test_readiness_needs_partitions_no_rebalance_and_reachable_stores() -> None:
    now = [0.0]
    health = obs.Health(stuck_after_s=30, clock=lambda: now[0])
    assert health.readiness() == (False, "not assigned partitions yet")
    health.assignment(3)
    assert health.readiness() == (True, "ready")
    health.revoked()
    assert health.readiness() == (False, "rebalancing")
    health.assignment(0)
    assert health.readiness() == (False, "no partitions assigned")
    health.assignment(2)
    health.store("Elasticsearch", "http://es:9200: connection refused")
    assert health.readiness() == (False, "cannot reach Elasticsearch: http://es:9200: connection refused")
    health.store("Elasticsearch", None)
    assert health.readiness()[0]


def test_liveness_fails_when_the_loop_or_the_turns_stop() -> None:
    now = [0.0]
    health = obs.Health(stuck_after_s=30, clock=lambda: now[0])
    now[0] = 29.0
    assert health.liveness() == (True, "ok")
    now[0] = 31.0
    assert health.liveness() == (False, "event loop stuck: no heartbeat for 31 s")
    health.beat()
    assert health.liveness() == (False, "no turn for 31 s (bound 30 s)")
    health.turned()
    assert health.liveness() == (True, "ok")


def test_the_endpoints_answer_from_their_own_thread_with_the_reason() -> None:
    health = obs.Health(stuck_after_s=5)
    endpoints = obs.serve("hot", 0, "127.0.0.1", health)
    try:
        base = f"http://127.0.0.1:{endpoints.port}"
        health.assignment(1)
        assert httpx.get(f"{base}/readyz", timeout=5).status_code == 200
        health.store("Elasticsearch", "refused")
        ready = httpx.get(f"{base}/readyz", timeout=5)
        assert (ready.status_code, ready.text) == (503, "cannot reach Elasticsearch: refused\n")
        assert 'sluice_worker_ready{stage="hot_sink"} 0.0' in httpx.get(f"{base}/metrics", timeout=5).text
        health.last_beat -= 60  # nothing runs the loop's heartbeat: as if the loop were stuck
        alive = httpx.get(f"{base}/healthz", timeout=5)
        assert alive.status_code == 503 and alive.text.startswith("event loop stuck")
    finally:
        endpoints.close()


def test_two_workers_of_one_host_get_ports_of_their_own() -> None:
    ports = {stage: obs.port_for(stage, None) for stage in obs.STAGE_PORTS}
    assert len(set(ports.values())) == len(ports) and obs.port_for("hot", 0) == 0 and obs.port_for("hot", 9) == 9


def test_the_summary_line_says_what_was_done_once_per_interval() -> None:
    now = [0.0]
    summary = obs.PeriodicSummary("hot_sink", 60, clock=lambda: now[0])
    summary.add("acknowledged", 10)
    assert summary.maybe_log() is None
    now[0] = 61.0
    summary.add("acknowledged", 5)
    line = summary.maybe_log("lag 0 records (0 s)")
    assert line == "hot_sink: in the last 61 s: 15 acknowledged; lag 0 records (0 s)"
    now[0] = 122.0
    assert summary.maybe_log() == "hot_sink: in the last 61 s: nothing"
