"""EagerDelivery: mode's ``wait_first`` results, without tasks when the first coroutine never suspends.

Each case runs the same calls against a plain mode Service and against the same Service with the
mixin, and compares what the caller sees; tasks are counted with the loop's task factory.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pytest
from mode import Service

from streams.faust_delivery import EagerDelivery, faust_eager_delivery


class Plain(Service):
    def __init__(self) -> None:
        super().__init__()
        self.suspend_flow = asyncio.Event()


class Eager(EagerDelivery, Plain):
    pass


def run_counting_tasks(make: Any) -> tuple[Any, int]:
    """Run ``make()`` (a coroutine factory) on a fresh loop; the result and how many tasks were made."""
    made = 0

    async def main() -> tuple[Any, int]:
        nonlocal made
        loop = asyncio.get_running_loop()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
            nonlocal made
            made += 1
            return asyncio.Task(coro, loop=loop, **kw)

        loop.set_task_factory(factory)
        result = await make()
        return result, made  # asyncio.run's own clean-up tasks come after: not counted

    return asyncio.run(main())


async def _quick(steps: list[str]) -> str:
    steps.append("ran")
    return "delivered"


def test_a_callback_that_never_suspends_gives_modes_result_with_no_task() -> None:
    for cls, expect_tasks in ((Plain, True), (Eager, False)):
        steps: list[str] = []

        async def call(cls: type[Plain] = cls, steps: list[str] = steps) -> tuple[bool, list[Any]]:
            svc = cls()
            res = await svc.wait_first(_quick(steps), svc.suspend_flow.wait())
            return res.stopped, res.results

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (stopped, results), tasks = run_counting_tasks(call)
            gc.collect()  # an unawaited coroutine warns when it is collected: the flow wait must be closed
        assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == [], cls
        assert (stopped, results, steps) == (False, ["delivered"], ["ran"]), cls
        assert (tasks > 0) is expect_tasks, (cls, tasks)


def test_a_callback_that_suspends_goes_on_from_where_it_stopped() -> None:
    for cls in (Plain, Eager):
        steps: list[str] = []

        async def call(cls: type[Plain] = cls, steps: list[str] = steps) -> list[Any]:
            svc = cls()
            room = asyncio.Event()

            async def put() -> str:  # a full queue: waits for room once, then delivers
                steps.append("wait")
                await room.wait()
                steps.append("put")
                await asyncio.sleep(0)
                return "delivered"

            asyncio.get_running_loop().call_later(0.05, room.set)
            res = await svc.wait_first(put(), svc.suspend_flow.wait())
            return res.results

        results, _ = run_counting_tasks(call)
        assert results == ["delivered"] and steps == ["wait", "put"], cls


def test_a_flow_suspended_while_the_callback_waits_cancels_it_as_before() -> None:
    for cls in (Plain, Eager):
        steps: list[str] = []

        async def call(cls: type[Plain] = cls, steps: list[str] = steps) -> tuple[list[Any], list[Any]]:
            svc = cls()

            async def put() -> str:
                steps.append("wait")
                try:
                    await asyncio.Event().wait()  # room never comes
                except asyncio.CancelledError:
                    steps.append("cancelled")
                    raise
                return "delivered"

            flow_wait = svc.suspend_flow.wait()
            asyncio.get_running_loop().call_later(0.05, svc.suspend_flow.set)
            res = await svc.wait_first(put(), flow_wait)
            await asyncio.sleep(0)  # the loser's cancellation is delivered on the next turn
            return res.done, res.results

        (done, results), _ = run_counting_tasks(call)
        assert results == [True] and len(done) == 1, cls  # Event.wait() returns True: the flow won
        assert steps == ["wait", "cancelled"], cls


def test_an_error_in_the_first_step_reaches_the_caller_and_a_suspended_flow_takes_modes_path() -> None:
    async def broken() -> None:
        raise ValueError("undecodable")

    for cls in (Plain, Eager):
        async def call(cls: type[Plain] = cls) -> None:
            svc = cls()
            await svc.wait_first(broken(), svc.suspend_flow.wait())

        with pytest.raises(ValueError, match="undecodable"):
            run_counting_tasks(call)

    for cls in (Plain, Eager):  # flow already suspended: mode's own path, tasks and all
        async def suspended(cls: type[Plain] = cls) -> list[Any]:
            svc = cls()
            svc.suspend_flow.set()
            res = await svc.wait_first(_quick([]), svc.suspend_flow.wait())
            return sorted(map(repr, res.results))

        results, tasks = run_counting_tasks(suspended)
        assert tasks > 0 and "True" in results, cls


def test_faust_builds_its_consumers_with_the_mixin_once() -> None:
    from faust.transport.drivers import aiokafka as driver

    faust_eager_delivery()
    first = driver.Transport.Consumer
    faust_eager_delivery()
    assert driver.Transport.Consumer is first and issubclass(first, EagerDelivery)
    assert first.wait_first is EagerDelivery.wait_first
