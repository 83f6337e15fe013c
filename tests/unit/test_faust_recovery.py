"""resume_last on faust's real Recovery steps: stream partitions stay paused through the seek and the
clearing of the queues (faust-streaming #596). snapshot_active: the consumer thread fetches for the
partitions active when the fetch was asked, not for a set emptied meanwhile.

Each test builds a real (unstarted) faust App and runs a real ``Recovery`` step on it. Only the I/O
is replaced: the seek (which would await the consumer thread), and the fetcher's start. Both
record which stream partitions a fetcher could read at that moment (the consumer's active set), as
does the clearing of the queues (``app.flow_control.resume``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import faust
import pytest
from faust.tables.recovery import Recovery
from faust.types import TP

from streams.faust_recovery import faust_resume_without_gaps, resume_last, snapshot_active

STREAM = {TP("logs.metrics", 0), TP("logs.metrics", 1)}
STEPS = ("on_recovery_completed", "_resume_streams")


def original(name: str) -> Any:
    step = getattr(Recovery, name)
    return getattr(step, "__wrapped__", step)  # faust's own, whether or not a worker test installed the wrapper


def run_step(step: Any, *, rebalance_during_seek: bool = False, seek_fails: bool = False
             ) -> tuple[list[tuple[str, set[TP]]], set[TP], Any]:
    """Run ``step`` as a just-assigned worker would: stream partitions paused, flow running.
    Returns what the seek and the clearing saw as active, the active stream partitions after the
    step, and the consumer's ``resume_partitions`` afterwards."""

    async def main() -> tuple[list[tuple[str, set[TP]]], set[TP], Any]:
        app = faust.App("t-recovery", broker="kafka://127.0.0.1:1", store="memory://", web_enabled=False)
        consumer = app.consumer
        recovery = app.tables.recovery
        seen: list[tuple[str, set[TP]]] = []

        def active() -> set[TP]:
            return STREAM & consumer._get_active_partitions()

        async def perform_seek() -> None:
            seen.append(("seek", active()))
            if rebalance_during_seek:
                app.consumer_generation_id += 1
            if seek_fails:
                raise RuntimeError("the broker went away during the seek")
            await asyncio.sleep(0)

        clear_queues = app.flow_control.resume

        def resume_flow_control() -> None:
            seen.append(("clear", active()))
            clear_queues()

        async def fetcher_start() -> None:
            seen.append(("fetch", active()))

        consumer.assignment = lambda: set(STREAM)  # type: ignore[method-assign]
        consumer.perform_seek = perform_seek  # type: ignore[method-assign]
        app.flow_control.resume = resume_flow_control  # type: ignore[method-assign]
        app._fetcher.maybe_start = fetcher_start  # type: ignore[attr-defined]
        app.consumer_generation_id = 7
        consumer.pause_partitions(STREAM)  # as on_partitions_assigned leaves them
        consumer.resume_flow()  # table recovery runs the flow before this step
        if seek_fails:
            with pytest.raises(RuntimeError, match="went away"):
                await step(recovery, 7)
        else:
            await step(recovery, 7)
        return seen, active(), consumer.resume_partitions

    return asyncio.run(main())


@pytest.mark.parametrize("name", STEPS)
def test_faust_alone_lets_the_fetcher_read_stream_partitions_before_the_queues_are_cleared(name: str) -> None:
    """The premise: if a faust upgrade fixes the order, this fails, and the wrapper can go."""
    seen, after, _ = run_step(original(name))
    assert dict(seen)["seek"] == STREAM and dict(seen)["clear"] == STREAM
    assert after == STREAM


@pytest.mark.parametrize("name", STEPS)
def test_stream_partitions_are_resumed_only_after_the_seek_and_the_clearing(name: str) -> None:
    seen, after, resume = run_step(resume_last(original(name)))
    assert [step for step, _ in seen] == ["seek", "clear", "fetch"]
    assert all(tps == set() for _, tps in seen), seen
    assert after == STREAM, "resumed when the step returned"
    assert getattr(resume, "__self__", None) is not None, "the consumer's own resume_partitions is back"


@pytest.mark.parametrize("name", STEPS)
def test_a_rebalance_during_the_step_leaves_the_partitions_to_its_own_recovery(name: str) -> None:
    seen, after, resume = run_step(resume_last(original(name)), rebalance_during_seek=True)
    assert dict(seen)["seek"] == set()
    assert after == set(), "the old assignment's resume is dropped"
    assert getattr(resume, "__self__", None) is not None


def test_a_failed_seek_resumes_nothing_and_gives_the_method_back() -> None:
    seen, after, resume = run_step(resume_last(original("on_recovery_completed")), seek_fails=True)
    assert [step for step, _ in seen] == ["seek"]
    assert after == set()
    assert getattr(resume, "__self__", None) is not None


def test_installing_twice_wraps_once() -> None:
    faust_resume_without_gaps()
    faust_resume_without_gaps()
    for name in STEPS:
        step = getattr(Recovery, name)
        assert step._sluice_resume_last
        assert not getattr(step.__wrapped__, "_sluice_resume_last", False)
    from faust.transport.consumer import ThreadDelegateConsumer

    assert ThreadDelegateConsumer._getmany._sluice_snapshot
    assert not getattr(ThreadDelegateConsumer._getmany.__wrapped__, "_sluice_snapshot", False)


def test_the_consumer_thread_fetches_for_the_partitions_active_when_the_fetch_was_asked() -> None:
    """aiokafka reads an empty set as every partition: the thread must not see the set emptied later."""
    from faust.transport.consumer import ThreadDelegateConsumer

    live = {TP("logs.metrics-changelog", 0)}

    async def main(getmany: Any) -> set[TP] | None:
        seen: set[TP] | None = None
        asked = asyncio.Event()

        class Thread:
            async def getmany(self, active: Any, timeout: float) -> dict[TP, list[Any]]:
                nonlocal seen
                asked.set()
                await asyncio.sleep(0.01)  # the fetch waits in the consumer thread
                seen = set(active)
                return {}

        class Consumer:
            _thread = Thread()

        fetch = asyncio.ensure_future(getmany(Consumer(), live, 1.0))
        await asked.wait()
        live.clear()  # the end of table recovery pauses the changelog partitions
        await fetch
        return seen

    faust_getmany = getattr(ThreadDelegateConsumer._getmany, "__wrapped__", ThreadDelegateConsumer._getmany)
    assert asyncio.run(main(faust_getmany)) == set(), "faust alone: the thread sees the live set, emptied"
    live.add(TP("logs.metrics-changelog", 0))
    assert asyncio.run(main(snapshot_active(faust_getmany))) == {TP("logs.metrics-changelog", 0)}
