"""How the cold sink's uploads overlap its other work: building, and the event loop placing records."""

from __future__ import annotations

import asyncio
import threading
import time

from devtools.testing.objectstore import MemoryObjectStore, corpus_events
from streams.config import Settings
from streams.sinks.base import SinkRecord
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink

TOPIC = "logs.events.p"
TASKS = 6  # one object per task in a segment


class TimedStore(MemoryObjectStore):
    """Each data PUT takes ``delay_s`` and is logged with when it ended."""

    def __init__(self, conf: ColdSinkSettings, delay_s: float) -> None:
        super().__init__(conf)
        self.delay_s = delay_s
        self.ended: list[float] = []
        self._lock = threading.Lock()

    def put(self, bucket: str, key: str, body: bytes, content_type: str = "",
            metadata: dict[str, str] | None = None) -> None:
        data = not key.startswith(self.conf.cuts_prefix)  # not a recorded cut
        if data:
            time.sleep(self.delay_s)
        with self._lock:
            super().put(bucket, key, body, content_type, metadata)
            if data:
                self.ended.append(time.monotonic())


def one_segment(corpus, conf: ColdSinkSettings) -> list[SinkRecord]:
    """A segment's worth of real events (and one more, which closes it), over TASKS tasks."""
    events = corpus_events(corpus, "p", "t", limit=conf.rotate_records + 1)
    for i, event in enumerate(events):
        event["task_id"] = f"task-{i % TASKS}"
        event["timestamp"] = event["ingest_ts"]  # one day
        event["source"] = {**event["source"], "node_role": "trainer"}
    return [SinkRecord(TOPIC, 0, i, None, e, b"", "p", 200 + len(e["message"])) for i, e in enumerate(events)]


async def started(sink: ColdSink, records: list[SinkRecord]) -> None:
    await sink.start()
    for record in records:
        sink.add(record)
    await sink.flush(time.monotonic())  # recorded cuts loaded, records placed: the segment closes
    await sink.flush(time.monotonic())  # its upload starts in the background


def test_the_first_object_goes_up_while_the_others_are_still_being_built(corpus) -> None:
    conf = ColdSinkSettings(rotate_records=120, lifecycle_enabled=False)
    store = TimedStore(conf, delay_s=0.0)
    built: list[float] = []

    class SlowBuilds(ColdSink):
        def _build_one(self, group, seg, records):  # type: ignore[no-untyped-def]
            out = super()._build_one(group, seg, records)
            time.sleep(0.05)  # a big object's compression
            built.append(time.monotonic())
            return out

    sink = SlowBuilds(Settings(), conf, store=store)  # type: ignore[arg-type]

    async def go() -> None:
        await started(sink, one_segment(corpus, conf))
        await sink.uploads_ended()

    asyncio.run(go())
    assert len(built) == TASKS and len(store.ended) == TASKS
    # Built all at once before any PUT, the first PUT would end after the last build.
    assert store.ended[0] < built[-1], (store.ended[0] - built[0], built[-1] - built[0])


def test_queued_puts_go_on_while_the_event_loop_is_busy(corpus) -> None:
    conf = ColdSinkSettings(rotate_records=120, lifecycle_enabled=False, upload_concurrency=1)
    store = TimedStore(conf, delay_s=0.03)
    sink = ColdSink(Settings(), conf, store=store)  # type: ignore[arg-type]

    async def go() -> int:
        await started(sink, one_segment(corpus, conf))
        while any(p.objects is None for p in sink._pending):  # every object built and queued
            await asyncio.sleep(0.001)
        time.sleep(TASKS * 0.03 + 0.2)  # the loop busy placing a poll's records: it runs nothing else
        done = len(store.ended)
        await sink.uploads_ended()
        return done

    # One PUT at a time: if each next PUT needed the event loop to start it, at most one would end.
    assert asyncio.run(go()) == TASKS
