"""Faust's fetcher hands each message to its stream without making four tasks for it.

faust-streaming's ``Consumer._drain_messages`` delivers every fetched message with
``await self.wait_first(callback(message), self.suspend_flow.wait())``. mode's ``wait_first`` makes a
task of each argument and two more (the service's ``stopped`` and ``crashed`` events), awaits
``asyncio.wait`` and cancels the three that did not finish: four tasks per message, a cost that shows
when records hold one line each. Yet the callback (the conductor putting
the message on its channel's queue) nearly always finishes without ever suspending.

:class:`EagerDelivery` runs the callback's first step at once, as Python 3.12's eager tasks do. If it
finishes there, its result is the winner and no task is made. If it suspends (a full queue, flow
control), it goes on as a task from where it stopped, raced against the other awaitable exactly as
before. While the flow is suspended, or the consumer is stopping or has crashed, nothing changes: the
call goes to mode's ``wait_first`` untouched.
"""

from __future__ import annotations

import inspect
from collections.abc import Coroutine, Generator
from typing import Any


class _Resume:
    """Awaitable that goes on with a coroutine already stepped once, which yielded ``yielded``."""

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self.coro, self.yielded = coro, yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, yielded = self.coro, self.yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - a cancellation, or what the task throws in: the coroutine's
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _resumed(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    return await _Resume(coro, yielded)


class EagerDelivery:
    """Mixin for a Faust consumer (a mode ``Service`` with ``suspend_flow``): see the module's text."""

    async def wait_first(self, *coros: Any, timeout: Any = None) -> Any:
        from mode.services import WaitResults

        quiet = not (self.suspend_flow.is_set() or self._stopped.is_set() or self._crashed.is_set())  # type: ignore[attr-defined]
        if quiet and timeout is None and len(coros) == 2 and all(inspect.iscoroutine(c) for c in coros):
            first, other = coros
            try:
                yielded = first.send(None)
            except StopIteration as done:
                other.close()
                return WaitResults([first], [done.value], False)
            except BaseException:
                other.close()
                raise
            coros = (_resumed(first, yielded), other)
        return await super().wait_first(*coros, timeout=timeout)  # type: ignore[misc]


def faust_eager_delivery() -> None:
    """Make Faust's aiokafka transport build consumers with :class:`EagerDelivery` (idempotent, process-wide)."""
    from faust.transport.drivers import aiokafka as driver

    if issubclass(driver.Transport.Consumer, EagerDelivery):
        return
    driver.Transport.Consumer = type("EagerConsumer", (EagerDelivery, driver.Transport.Consumer), {})
