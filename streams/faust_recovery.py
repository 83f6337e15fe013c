"""Faust resumes a worker's stream partitions only once they are sought and their queues are emptied.

When a rebalance's recovery ends, faust-streaming's ``Recovery`` (``on_recovery_completed``, or
``_resume_streams`` in an app without tables) does, in this order:

1. resume the stream partitions (``consumer.resume_partitions``);
2. seek them to their committed offsets (``consumer.perform_seek``, which awaits the consumer thread);
3. ``app.flow_control.resume()``, which empties every stream's queue (they are ``clear_on_resume``);
4. resume the consumer's flow.

The consumer's flow is already running by then: recovering the tables needed it. So while step 2
awaits, the fetcher hands records of the partitions resumed in step 1 to the streams' queues, and
step 3 throws them away. aiokafka's position is already past them, so they are not fetched again
until the next rebalance. Meanwhile Faust commits only contiguous acked offsets, so the partition's
committed offset stops there, and the records in the gap are never processed on a steady group.
This is faust-streaming's issue #596 (open in 0.15.3): a worker restarted after kill -9 can leave
some of its records uncommitted for good.

:func:`resume_last` holds step 1 back. The stream partitions stay paused through the
seek and the clearing of the queues, and the held ``resume_partitions`` calls are applied when the
step returns. They are dropped if another rebalance began meanwhile; that rebalance's own recovery
resumes its partitions.

Holding the partitions back opened a second gap, which :func:`snapshot_active` closes. Faust hands
the consumer thread its live set of active partitions, and aiokafka reads an empty set as "all
partitions". Between the end of table recovery (its changelog partitions paused) and the held
resume, that set is empty. A fetch made then returned the paused stream partitions' records too;
Faust's loop, checking the same set, skipped them, and aiokafka's position had moved past them.
(The instrumented kill -9 run showed it: a fetch of all three metrics partitions while none was
active.) Each fetch now gets a copy of the set as it was when the fetch was asked for.

:func:`faust_resume_without_gaps` installs both (``streams.clients.faust_consumers`` calls it).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

_STEPS = ("on_recovery_completed", "_resume_streams")

Step = Callable[..., Awaitable[None]]
Fetch = Callable[..., Awaitable[Any]]


def resume_last(step: Step) -> Step:
    """Wrap a ``Recovery`` step so its ``consumer.resume_partitions`` calls take effect when it returns."""

    @functools.wraps(step)
    async def held_back(self: Any, generation_id: int = 0) -> None:
        consumer = self.app.consumer
        held: list[set[Any]] = []

        def hold(tps: Iterable[Any]) -> None:
            held.append(set(tps))

        consumer.resume_partitions = hold  # the instance's attribute hides the method during the step
        try:
            await step(self, generation_id)
        finally:
            del consumer.resume_partitions
        if held and self.app.consumer_generation_id == generation_id:  # else that rebalance's recovery resumes
            consumer.resume_partitions(set().union(*held))

    held_back._sluice_resume_last = True  # type: ignore[attr-defined]
    return held_back


def snapshot_active(getmany: Fetch) -> Fetch:
    """Wrap ``ThreadDelegateConsumer._getmany`` so the consumer thread gets a copy of the active set."""

    @functools.wraps(getmany)
    async def with_copy(self: Any, active_partitions: Any, timeout: float) -> Any:
        active = None if active_partitions is None else frozenset(active_partitions)
        return await getmany(self, active, timeout)

    with_copy._sluice_snapshot = True  # type: ignore[attr-defined]
    return with_copy


def faust_resume_without_gaps() -> None:
    """Install :func:`resume_last` on faust's ``Recovery`` and :func:`snapshot_active` on its
    thread-delegating consumer (idempotent, process-wide)."""
    from faust.tables.recovery import Recovery
    from faust.transport.consumer import ThreadDelegateConsumer

    for name in _STEPS:
        step = getattr(Recovery, name)
        if not getattr(step, "_sluice_resume_last", False):
            setattr(Recovery, name, resume_last(step))
    fetch = ThreadDelegateConsumer._getmany
    if not getattr(fetch, "_sluice_snapshot", False):
        ThreadDelegateConsumer._getmany = snapshot_active(fetch)  # type: ignore[method-assign, assignment]
