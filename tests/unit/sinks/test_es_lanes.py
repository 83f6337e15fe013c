"""The hot sink's lanes: a project's bulk in flight never holds another project's records back."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from devtools.testing.objectstore import corpus_events
from streams.config import ElasticsearchSettings, ProjectRoute, RoutingSettings
from streams.sinks.base import SinkRecord
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.sink import HotSink


@dataclass
class Response:
    body: dict[str, Any]


class SlowForOneIndex:
    """A bulk endpoint that answers at once, except for requests touching ``slow`` indices, which
    wait until the test releases them (a bursting project's large bulk on a loaded cluster)."""

    def __init__(self, slow: str) -> None:
        self.slow = slow
        self.release = asyncio.Event()
        self.requests: list[set[str]] = []
        self.sizes: list[int] = []

    async def bulk(self, operations: bytes, filter_path: str) -> Response:
        lines = [json.loads(line) for line in operations.splitlines() if line]
        heads = [line["index"] for line in lines if "index" in line]
        self.requests.append({h["_index"] for h in heads})
        self.sizes.append(len(heads))
        if any(self.slow in h["_index"] for h in heads):
            await self.release.wait()
        return Response({"errors": False, "items": [{"index": {"status": 201}} for _ in heads]})


def records(corpus: Any, project: str, n: int, first_offset: int, partition: int) -> list[SinkRecord]:
    return [SinkRecord(f"logs.events.{project}", partition, first_offset + i, None, e, b"", project, 1000)
            for i, e in enumerate(corpus_events(corpus, project, "run-1", limit=n))]


def test_a_quiet_projects_bulk_is_not_held_behind_a_bursting_one(corpus) -> None:
    routing = RoutingSettings(default_project="noisy", projects={"noisy": ProjectRoute(), "quiet": ProjectRoute()})
    client = SlowForOneIndex(slow="noisy")
    sink = HotSink(ElasticsearchSettings(), routing, HotSinkSettings(max_batch_age_s=0.0), client=client,
                   clock=lambda: 0.0)

    async def until_due() -> None:
        while not sink.due(0.0):
            await asyncio.sleep(0.001)

    async def go() -> None:
        for rec in records(corpus, "noisy", 200, 0, 0):
            sink.add(rec)
        first = await asyncio.wait_for(sink.flush(0.0), 1.0)  # the noisy bulk goes out, and hangs
        assert first.acked == [] and sink.buffered() == 200
        for rec in records(corpus, "quiet", 3, 0, 1):
            sink.add(rec)
        assert sink.due(0.0), "the quiet lane is free: its batch is due"
        await asyncio.wait_for(sink.flush(0.0), 1.0)
        await asyncio.wait_for(until_due(), 1.0)  # its bulk ended while the noisy one hangs
        quiet = await asyncio.wait_for(sink.flush(0.0), 1.0)
        assert [r.project for r in quiet.acked] == ["quiet"] * 3
        assert sink.buffered() == 200, "the noisy bulk is still in flight"
        client.release.set()
        rest = await asyncio.wait_for(sink.flush(0.0), 1.0)  # nothing to start: waits for the bulk in flight
        assert len(rest.acked) == 200 and sink.buffered() == 0

    asyncio.run(go())
    assert [any("noisy" in i for i in req) for req in client.requests] == [True, False], "one bulk per lane"


def test_a_bulk_carries_at_most_one_windows_budget(corpus) -> None:
    """A small cluster's window budget caps the bulk size; a large cluster's does not bind."""
    small = HotSinkSettings(capacity_events_per_s=500, utilisation=0.8, window_s=0.1)
    assert small.bulk_events == 40
    assert HotSinkSettings(capacity_events_per_s=100_000).bulk_events == HotSinkSettings().max_batch_events
    routing = RoutingSettings(default_project="noisy", projects={"noisy": ProjectRoute()})
    client = SlowForOneIndex(slow="none")
    sink = HotSink(ElasticsearchSettings(), routing, small, client=client, clock=lambda: 0.0)

    async def go() -> int:
        for rec in records(corpus, "noisy", 100, 0, 0):
            sink.add(rec)
        acked = 0
        while sink.buffered():
            acked += len((await sink.flush(0.0)).acked)
        return acked

    assert asyncio.run(go()) == 100
    assert client.sizes == [40, 40, 20]
