"""The registry and Kafka failure classifiers, and what the assemble stage does with a registry that
does not answer: it waits, and no good record becomes a dead letter."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.schema_registry.error import SchemaRegistryError

from streams.assemble.decode import decode_record
from streams.assemble.outputs import registry_schema_lookup
from streams.contracts import schema_text
from streams.errors import DecodeError, DependencyRefused, DependencyUnavailable, Failure
from streams.kafka_errors import kafka_failure
from streams.rdkafka import Message
from streams.registry import registry_failure


@pytest.mark.parametrize(("exc", "kind"), [
    (SchemaRegistryError(503, 50003, "unavailable"), Failure.TRANSIENT),
    (SchemaRegistryError(500, 50001, "store error"), Failure.TRANSIENT),
    (SchemaRegistryError(408, -1, "timeout"), Failure.TRANSIENT),
    (SchemaRegistryError(429, -1, "too many"), Failure.TRANSIENT),
    (httpx.ConnectError("[Errno 111] Connection refused"), Failure.TRANSIENT),
    (httpx.ReadTimeout("timed out"), Failure.TRANSIENT),
    (httpx.RemoteProtocolError("Server disconnected without sending a response."), Failure.TRANSIENT),
    (ConnectionRefusedError(111, "refused"), Failure.TRANSIENT),
    (SchemaRegistryError(401, 401, "Unauthorized"), Failure.REFUSED),
    (SchemaRegistryError(403, 40301, "forbidden"), Failure.REFUSED),
    (SchemaRegistryError(404, 40403, "Schema 99 not found"), Failure.PERMANENT),
    (SchemaRegistryError(422, 42201, "invalid schema"), Failure.PERMANENT),
    (json.JSONDecodeError("bad", "x", 0), Failure.PERMANENT),
])
def test_registry_failures_are_classified(exc: BaseException, kind: Failure) -> None:
    assert registry_failure(exc) is kind


def test_a_failure_caused_by_no_answer_is_transient() -> None:
    outer = RuntimeError("lookup failed")
    outer.__cause__ = httpx.ConnectError("refused")
    assert registry_failure(outer) is Failure.TRANSIENT


@pytest.mark.parametrize(("code", "kind"), [
    (KafkaError._AUTHENTICATION, Failure.REFUSED),
    (KafkaError.SASL_AUTHENTICATION_FAILED, Failure.REFUSED),
    (KafkaError.TOPIC_AUTHORIZATION_FAILED, Failure.REFUSED),
    (KafkaError.GROUP_AUTHORIZATION_FAILED, Failure.REFUSED),
    (KafkaError.MSG_SIZE_TOO_LARGE, Failure.PERMANENT),
    (KafkaError._MSG_TIMED_OUT, Failure.TRANSIENT),
    (KafkaError._TRANSPORT, Failure.TRANSIENT),
    (KafkaError._ALL_BROKERS_DOWN, Failure.TRANSIENT),
    (KafkaError.NOT_COORDINATOR, Failure.TRANSIENT),
])
def test_kafka_failures_are_classified(code: int, kind: Failure) -> None:
    assert kafka_failure(KafkaError(code)) is kind
    assert kafka_failure(KafkaException(KafkaError(code))) is kind


class FlakyRegistry:
    """The registry's client: raises ``failure`` for the first ``down`` calls, then answers."""

    def __init__(self, down: int, failure: BaseException) -> None:
        self.down, self.failure, self.calls = down, failure, 0

    def get_schema(self, schema_id: int) -> Any:
        self.calls += 1
        if self.calls <= self.down:
            raise self.failure
        if schema_id != 7:
            raise SchemaRegistryError(404, 40403, f"Schema {schema_id} not found")
        return SimpleNamespace(schema_str=schema_text("raw_batch"))

    def lookup_schema(self, subject: str, schema: Any, normalize_schemas: bool = False) -> Any:
        return SimpleNamespace(schema_id=11)


def raw_batch(lines: list[str], schema_id: int = 7) -> bytes:
    import io

    import fastavro

    from streams.contracts import parsed_schema
    from streams.rawbatch import default_source

    batch = {"source": default_source(Path("train.log"), "node-1"), "labels": {}, "sent_ts": 1_764_400_000_000,
             "lines": [{"line": text, "file_offset": i * 100, "ts": 1_764_400_000_000} for i, text in enumerate(lines)]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed_schema("raw_batch"), batch)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def test_a_registry_that_does_not_answer_is_not_the_records_fault() -> None:
    lookup = registry_schema_lookup(FlakyRegistry(1, httpx.ConnectError("refused")), url="http://registry:8081")
    value = raw_batch(["step 1 loss 2.5"])
    with pytest.raises(DependencyUnavailable) as down:
        decode_record(value, b"k", lookup)
    assert "http://registry:8081" in str(down.value)
    assert [ln.text for ln in decode_record(value, b"k", lookup)] == ["step 1 loss 2.5"]  # nothing cached: asked again
    with pytest.raises(DecodeError) as unknown:  # an id the registry does not know is the record's fault
        decode_record(raw_batch(["x"], schema_id=99), b"k", lookup)
    assert unknown.value.error_type == "schema_not_found"
    refusing = registry_schema_lookup(FlakyRegistry(9, SchemaRegistryError(401, 401, "Unauthorized")))
    with pytest.raises(DependencyRefused):
        decode_record(value, b"k", refusing)


def test_the_assemble_stage_waits_for_the_registry_and_dead_letters_nothing() -> None:
    from streams.config import Settings
    from streams.workers.assemble import AssembleStage

    registry = FlakyRegistry(2, httpx.ConnectError("[Errno 111] Connection refused"))
    stage = AssembleStage(Settings(), registry=registry)
    outputs: list[Any] = []

    async def commit(out: list[Any], _partitions: set[int]) -> None:
        outputs.extend(out)

    stage.commit = commit  # type: ignore[method-assign]
    # (records that are events: a step line would become a metric point)
    lines = ["[2025-11-29 10:00:00] INFO saving checkpoint to /ckpt/run-1",
             "[2025-11-29 10:00:01] INFO checkpoint saved"]
    event = Message(topic="logs.raw", partition=0, offset=5, value=raw_batch(lines), key=b"node-1/train.log",
                    timestamp=1_764_400_000.0, headers=None, generation_id=0)
    asyncio.run(asyncio.wait_for(stage.on_batch([event]), 30))
    outputs += stage.states[0].assembler.flush_all()
    assert registry.calls == 3  # two refused connections, then the answer
    assert not [o for o in outputs if o.kind == "dead_letter"]
    assert [o.value["message"] for o in outputs if o.kind == "event"] == lines


def test_the_assembler_lets_a_registry_outage_through_instead_of_dead_lettering() -> None:
    from streams.assemble.pipeline import Assembler, RawRecord
    from streams.assemble.route import ProjectRouter

    lookup = registry_schema_lookup(FlakyRegistry(1, httpx.ConnectError("refused")))
    asm = Assembler(lookup, ProjectRouter("default"))
    record = RawRecord("logs.raw", 0, 3, raw_batch(["step 1 loss 2.5"]), b"k", 1_764_400_000_000)
    with pytest.raises(DependencyUnavailable):
        asm.feed(record)
    assert not [o for o in asm.feed(record) + asm.flush_all() if o.kind == "dead_letter"]


def test_a_refused_transactional_producer_stops_the_stage_instead_of_retrying() -> None:
    from streams.workers.transactions import TransactionAborted, TransactionalWriter

    class Refused:
        def __init__(self, code: int) -> None:
            self.code = code

        def init_transactions(self, timeout: float) -> None:
            raise KafkaException(KafkaError(self.code, "SASL authentication error: Authentication failed"))

    def writer(code: int) -> TransactionalWriter:
        return TransactionalWriter({"bootstrap.servers": "127.0.0.1:9"}, "txn-refused", 1_000,
                                   producer_factory=lambda _conf: Refused(code))

    with pytest.raises(DependencyRefused, match="Authentication failed"):
        writer(KafkaError._AUTHENTICATION).write([("logs.events.p", b"k", b"v", -1)], {}, None)
    with pytest.raises(TransactionAborted):  # a broker away: rolled back, read again
        writer(KafkaError._TRANSPORT).write([("logs.events.p", b"k", b"v", -1)], {}, None)


class SwitchedRegistry(FlakyRegistry):
    """Answers until ``cut()``; then refuses the next ``down`` output schema lookups."""

    def __init__(self) -> None:
        super().__init__(0, httpx.ConnectError("[Errno 111] Connection refused"))
        self.lookups_refused = 0

    def cut(self, down: int) -> None:
        self.down_lookups = down

    def lookup_schema(self, subject: str, schema: Any, normalize_schemas: bool = False) -> Any:
        if self.lookups_refused < getattr(self, "down_lookups", 0):
            self.lookups_refused += 1
            raise self.failure
        return super().lookup_schema(subject, schema, normalize_schemas)


def test_a_restarted_stage_flushing_restored_blocks_waits_for_the_registry_instead_of_exiting() -> None:
    import time

    from test_assemble_turns import Broker

    from streams.config import AssembleSettings, Settings
    from streams.workers.assemble import AssembleStage

    def stage(registry: SwitchedRegistry, broker: Broker) -> AssembleStage:
        s = AssembleStage(Settings(assemble=AssembleSettings(idle_timeout_ms=1000)), registry=registry)
        s.writer = broker  # type: ignore[assignment]
        s.load_state = broker.load_state
        s.group_metadata = lambda: "member-1 of generation 1"
        return s

    broker = Broker()
    first = stage(SwitchedRegistry(), broker)
    lines = ["[2025-11-29 10:00:00] ERROR boom", "Traceback (most recent call last):",
             '  File "train.py", line 3, in <module>', "RuntimeError: CUDA error"]
    event = Message(topic="logs.raw", partition=0, offset=5, value=raw_batch(lines), key=b"node-1/train.log",
                    timestamp=1_764_400_000.0, headers=None, generation_id=0)
    asyncio.run(first.on_batch([event]))
    assert broker.offsets == {0: 6} and not broker.outputs  # the traceback is open, held in the state topic

    registry = SwitchedRegistry()
    registry.cut(3)  # the worker comes back while the registry does not answer
    second = stage(registry, broker)
    asyncio.run(second.take_over({0}))
    second.states[0].last_seen = time.monotonic() - 5
    asyncio.run(asyncio.wait_for(second.on_idle_tick(), 30))
    assert registry.lookups_refused == 3
    messages = [v for t, _k, v in broker.outputs if t.startswith("logs.events")]
    assert len(messages) == 1 and b"RuntimeError: CUDA error" in (messages[0] or b"")


class LogEventRegistry:
    """Knows the LogEvent contract as id 3 and the dead letter's subject; refuses the first ``down``
    calls of each kind."""

    def __init__(self, down: int) -> None:
        self.down = {"get": down, "lookup": down}
        self.calls = {"get": 0, "lookup": 0}

    def _call(self, kind: str) -> None:
        self.calls[kind] += 1
        if self.calls[kind] <= self.down[kind]:
            raise httpx.ConnectError("[Errno 111] Connection refused")

    def get_schema(self, schema_id: int) -> Any:
        self._call("get")
        if schema_id != 3:
            raise SchemaRegistryError(404, 40403, f"Schema {schema_id} not found")
        return SimpleNamespace(schema_str=schema_text("log_event"))

    def lookup_schema(self, subject: str, schema: Any, normalize_schemas: bool = False) -> Any:
        self._call("lookup")
        return SimpleNamespace(schema_id=12)


def a_wire_log_event() -> bytes:
    from streams.assemble.outputs import encode_body
    from streams.assemble.pipeline import Assembler, RawRecord
    from streams.assemble.route import ProjectRouter

    asm = Assembler(registry_schema_lookup(FlakyRegistry(0, RuntimeError())), ProjectRouter("default"))
    line = "[2025-11-29 10:00:00] INFO saving checkpoint to /ckpt/run-1"  # an event (a step line is a metric)
    asm.feed(RawRecord("logs.raw", 0, 3, raw_batch([line]), b"k", 1_764_400_000_000))
    event = next(o for o in asm.flush_all() if o.kind == "event")
    return b"\x00" + (3).to_bytes(4, "big") + encode_body(event, "python")


def test_the_watch_stage_waits_for_the_registry_instead_of_dead_lettering_or_exiting() -> None:
    from streams.config import Settings
    from streams.workers.watch import AlertPublisher, Router, encoder_ready

    sent: list[tuple[str, bytes | None]] = []

    async def send(topic: str, key: bytes | None, value: bytes, *_a: Any) -> asyncio.Future[None]:
        sent.append((topic, key))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    settings = Settings()
    app = SimpleNamespace(producer=SimpleNamespace(send=send))
    registry = LogEventRegistry(down=2)
    router = Router(settings, settings.watch, app, registry)  # type: ignore[arg-type]
    acked: list[int] = []

    def event(offset: int, value: bytes) -> Any:
        msg = Message(topic="logs.events.default", partition=0, offset=offset, value=value, key=b"k",
                      timestamp=1_764_400_000.0, headers=None, generation_id=0)
        return SimpleNamespace(message=msg, ack=lambda: acked.append(offset))

    asyncio.run(asyncio.wait_for(router.on_batch([event(1, a_wire_log_event()), event(2, b"\x00\x00\x00\x00\x03?"),
                                                  event(3, b"not avro")]), 30))
    assert [t for t, _k in sent] == [settings.watch.by_task_topic(), "logs.dlq", "logs.dlq"]  # the good one routed
    assert registry.calls["get"] == 3 and acked == [1, 2, 3]

    publisher = AlertPublisher(settings, settings.watch, app, LogEventRegistry(down=2))  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(encoder_ready(publisher.encoder), 30))  # what an alert's write waits on
    assert publisher.encoder.encode({**ALERT, "alert_id": "a1"})[0] == b"a1"


ALERT = {"alert_id": "", "rule": "cuda_oom", "severity": "critical", "project": "default", "task_id": "t",
         "summary": "CUDA out of memory", "count": 1, "event_ids": ["e1"], "timestamp": 1, "first_seen": 1,
         "last_seen": 1, "status": "open", "resolved_at": None, "details": {}}


def test_a_stage_waiting_for_the_registry_counts_each_wait_under_its_own_stage() -> None:
    from streams import observability as obs
    from streams.registry import until_answered

    answers = iter([DependencyUnavailable("schema registry at http://reg:8081 did not answer", "registry"), 7])

    def call() -> int:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def count(stage: str) -> float:
        value = obs.REGISTRY.get_sample_value("sluice_dependency_waits_total",
                                              {"stage": stage, "dependency": "registry"})
        return value or 0.0

    before = count("watch"), count("assemble")
    got = asyncio.run(until_answered(call, "schema id 7", base_s=0.001, cap_s=0.001,
                                     on_wait=obs.registry_waits("watch")))
    assert got == 7
    assert (count("watch"), count("assemble")) == (before[0] + 1, before[1])
