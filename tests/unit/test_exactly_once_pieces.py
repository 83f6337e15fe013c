"""Pieces of the assemble stage's exactly-once writing that need no broker."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from streams.workers.assemble import PartitionState
from streams.workers.transactions import TransactionAborted, TransactionalWriter


def test_partition_state_skips_what_comes_before_its_start_and_what_it_has_read() -> None:
    state = PartitionState(SimpleNamespace(), expect=100, strict=True)  # type: ignore[arg-type]
    assert not state.admits(140), "rewound: fetched before the seek, comes again in order"
    assert not state.admits(99)
    assert state.admits(100)
    state.next_offset = 101
    assert not state.admits(100), "re-delivered: already read"
    assert state.admits(101) and state.admits(105), "a gap (compaction, markers) is fine"


def test_a_take_over_resumes_past_a_committed_offset_that_retention_deleted() -> None:
    state = PartitionState(SimpleNamespace(), expect=100)  # type: ignore[arg-type]
    assert not state.admits(97), "before the committed offset (a stale committed offset read by Faust)"
    assert state.admits(250), "offsets 100-249 are gone: the partition must not wait for them for ever"
    state.next_offset = 251
    assert not state.admits(250)


class _Producer:
    """A transactional producer that records its calls; ``send_offsets_to_transaction`` can be made to
    block, as librdkafka 2.16's does after the group coordinator's broker restarted (#5456)."""

    def __init__(self, calls: list[tuple[int, str]], index: int, blocked: threading.Event | None) -> None:
        self.calls, self.index, self.blocked = calls, index, blocked

    def _record(self, name: str) -> None:
        self.calls.append((self.index, name))

    def init_transactions(self, timeout: float) -> None:
        self._record("init")

    def begin_transaction(self) -> None:
        self._record("begin")

    def produce(self, topic: str, value: bytes | None, key: bytes | None, partition: int) -> None:
        self._record("produce")

    def send_offsets_to_transaction(self, offsets: Any, metadata: bytes, timeout: float) -> None:
        self._record("send_offsets")
        if self.blocked is not None:
            self.blocked.wait()  # ignores its timeout
            self._record("send_offsets returned")

    def commit_transaction(self, timeout: float) -> None:
        self._record("commit")

    def abort_transaction(self, timeout: float) -> None:
        self._record("abort")


@pytest.mark.timeout(20)  # the old writer waited in the call for ever
def test_a_transactional_call_blocked_past_its_timeout_replaces_the_producer() -> None:
    calls: list[tuple[int, str]] = []
    release = threading.Event()
    made: list[_Producer] = []

    def factory(_config: dict[str, Any]) -> _Producer:
        made.append(_Producer(calls, len(made), release if not made else None))
        return made[-1]

    wedges: list[int] = []
    writer = TransactionalWriter({"bootstrap.servers": "127.0.0.1:9"}, "txn-wedge", 1_000, wedged_after_s=0.3,
                                 producer_factory=factory, on_wedged=lambda: wedges.append(1))
    message = [("logs.events.p", b"k", b"v", -1)]
    started = time.monotonic()
    with pytest.raises(TransactionAborted, match="send_offsets_to_transaction of txn-wedge still blocked"):
        writer.write(message, {("logs.raw", 0): 10}, b"CGMDv2:")
    assert time.monotonic() - started < 1.0 + 0.3 + 0.5, "given up after the call's timeout and the grace"
    assert len(made) == 2 and writer.producer is made[1], "a new producer takes the transactional id over"
    assert (len(wedges), writer.abandoned) == (1, 1), "counted: once as a wedge, and as abandoned until it returns"

    writer.write(message, {("logs.raw", 0): 10}, b"CGMDv2:")  # the retry, from the committed offsets
    assert (len(wedges), writer.abandoned) == (1, 1), "calls that return in time count nowhere"
    release.set()  # the old call returns at last: nothing follows it on the old producer
    time.sleep(0.1)
    assert writer.abandoned == 0
    assert calls == [(0, "init"), (0, "begin"), (0, "produce"), (0, "send_offsets"),
                     (1, "init"), (1, "begin"), (1, "produce"), (1, "send_offsets"), (1, "commit"),
                     (0, "send_offsets returned")]
