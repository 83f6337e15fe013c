"""A schema registry that does not answer is waited out, never dead-lettered: the real registry behind a
Toxiproxy proxy that refuses connections, the real Kafka and Elasticsearch.

- the hot sink holds each partition at its first record (sought back and paused, tried again after a
  backoff): nothing is indexed, dead-lettered or committed while the registry is away; once it
  answers, every event is indexed once and the group commits to the end;
- the assemble stage looks schemas up before its turn and waits: no good record becomes a
  ``schema_not_found`` dead letter.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from devtools.faults.toxiproxy import Toxiproxy
from devtools.testing.elasticsearch import EventProducer, committed_to_end, corpus_events, prepare_topics, settings_for
from streams.clients import es_client
from streams.config import Settings
from streams.rdkafka import Message
from streams.sinks.ratecontrol import Capacity
from streams.workers.hot import build_runner, hot_topics
from tests.integration.test_hot_sink import count, doc_ids, read_dead_letters

FAST = Capacity(50_000, 100_000_000)


@pytest.fixture
def registry_link(stack: Settings) -> object:
    """(toxiproxy, the registry's URL through it); the link starts down."""
    proxy = Toxiproxy().start()
    link = proxy.add("registry", urlsplit(stack.registry.url).netloc)
    proxy.fault("registry", "down")
    yield proxy, link.url_for(stack.registry.url)
    proxy.stop()


@pytest.mark.timeout(240)
def test_the_hot_sink_waits_for_the_registry_and_dead_letters_nothing(
        stack: Settings, corpus: Path, new_topic: Callable[..., str], unique_name: Callable[[str], str],
        registry_link: tuple[Toxiproxy, str]) -> None:
    proxy, registry_url = registry_link
    project = unique_name("regout")
    settings = settings_for(stack, project, dlq=new_topic("regout-dlq"), metrics=new_topic("regout-metrics"))
    prepare_topics(settings)
    values = list(corpus_events(sorted((corpus / "training").glob("*.log"))[:3], project,
                                include_metrics=False))[:300]
    EventProducer(settings).send_all(values)
    cut_off = settings.model_copy(update={"registry": settings.registry.model_copy(update={"url": registry_url})})
    group = unique_name("regout-hot")
    runner = build_runner(cut_off, FAST, group)
    seen: dict[str, object] = {}

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(runner.run(stop))
        try:
            await asyncio.sleep(10)  # the registry refuses connections all along
            seen["holds"] = dict(runner.source.holds)  # type: ignore[attr-defined]
            seen["indexed"] = await asyncio.to_thread(count, settings, project)
            seen["committed"] = await asyncio.to_thread(committed_to_end, settings, group, hot_topics(settings))
            proxy.heal("registry")
            deadline = time.monotonic() + 120
            while not await asyncio.to_thread(committed_to_end, settings, group, hot_topics(settings)):
                assert time.monotonic() < deadline, "not drained within 120 s of the registry's return"
                assert not task.done(), task
                await asyncio.sleep(1)
        finally:
            stop.set()
            await asyncio.wait_for(task, 60)

    try:
        asyncio.run(scenario())
        assert seen["holds"], "the partition was held at its first record"
        assert seen["indexed"] == 0 and seen["committed"] is False
        assert sorted(doc_ids(settings, project)) == sorted(v["event_id"] for v in values)
        assert read_dead_letters(settings, 0, timeout_s=5) == {}
    finally:
        es_client(stack.elasticsearch).indices.delete(index=f"sluice-logs-{project}-*", ignore_unavailable=True,
                                                      allow_no_indices=True)


def test_the_assemble_stage_waits_for_the_registry(stack: Settings, registry_link: tuple[Toxiproxy, str]) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    from streams.avro_io import avro_serializer
    from streams.contracts import register_all
    from streams.rawbatch import default_source
    from streams.workers.assemble import AssembleStage

    proxy, registry_url = registry_link
    register_all(stack)
    batch = {"source": default_source(Path("train.log"), "node-9"), "labels": {}, "sent_ts": 1_764_400_000_000,
             "lines": [{"line": f"[2025-11-29 10:00:0{i}] INFO saving checkpoint {i} to /ckpt/run-9",
                        "file_offset": 40 * i, "ts": 1_764_400_000_000} for i in range(3)]}
    from confluent_kafka.serialization import MessageField, SerializationContext

    value = avro_serializer(stack, "raw_batch")(batch, SerializationContext(stack.topics.raw, MessageField.VALUE))
    stage = AssembleStage(stack, SchemaRegistryClient({"url": registry_url}))
    outputs: list = []

    async def commit(out: list, _partitions: set[int]) -> None:
        outputs.extend(out)

    stage.commit = commit  # type: ignore[method-assign]
    event = Message(topic=stack.topics.raw, partition=0, offset=0, value=value, key=b"node-9/train.log",
                    timestamp=1_764_400_000.0, headers=None, generation_id=0)
    threading.Timer(8.0, proxy.heal, args=("registry",)).start()
    started = time.monotonic()
    asyncio.run(asyncio.wait_for(stage.on_batch([event]), 90))
    outputs += stage.states[0].assembler.flush_all()
    assert time.monotonic() - started >= 8.0, "it waited for the registry"
    assert not [o for o in outputs if o.kind == "dead_letter"]
    assert [o.value["message"] for o in outputs if o.kind == "event"] == [ln["line"] for ln in batch["lines"]]
