"""The shipping loop with a recording producer and a fake clock (real files in tmp_path, no servers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from devtools.testing.ship import FakeClock, RecordingSender, make_shipper
from streams.ship.checkpoint import CheckpointStore
from streams.ship.shipper import Shipper


def make(tmp_path: Path, **kw: Any) -> tuple[Shipper, RecordingSender, FakeClock]:
    return make_shipper(tmp_path, **kw)


def test_offsets_advance_only_on_ack_and_a_failure_re_reads(tmp_path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntwo\nthree\n")
    shipper, sender, clock = make(tmp_path)
    shipper.start()
    clock.t += 1.0
    shipper.tick()
    assert len(sender.pending) == 1 and shipper.acked_entries()[0].offset == 0
    sender.deliver(fail=True)  # the file is the buffer: re-read after the backoff
    clock.t += 0.1
    shipper.tick()
    assert sender.pending == []
    clock.t += 1.0
    shipper.tick()
    sender.deliver()
    shipper.tick()
    assert sender.offsets() == [0, 4, 8]
    assert shipper.acked_entries()[0].offset == 14
    assert CheckpointStore(tmp_path / "ck.json").load().entries[0].offset == 14  # type: ignore[union-attr]


def test_restart_resumes_from_the_checkpoint(tmp_path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntwo\n")
    shipper, sender, clock = make(tmp_path)
    shipper.start()
    clock.t += 1.0
    shipper.tick()
    sender.deliver()
    shipper.tick()
    with log.open("ab") as fh:
        fh.write(b"three\n")
    again, sender2, clock2 = make(tmp_path)  # a new process: no memory but the checkpoint
    again.start()
    clock2.t += 1.0
    again.tick()
    sender2.deliver()
    assert sender2.offsets() == [8]


def test_memory_cap_stops_reading(tmp_path) -> None:
    (tmp_path / "a.log").write_bytes(b"x" * 99 + b"\n" * 1 + (b"y" * 99 + b"\n") * 2000)  # 200 kB
    shipper, sender, clock = make(tmp_path, max_buffer_bytes=32 * 1024, max_batch_bytes=8 * 1024,
                                  max_line_bytes=1024, read_chunk_bytes=4096)
    shipper.start()
    for _ in range(5):  # nothing acknowledged: reading stops at the cap
        clock.t += 1.0
        shipper.tick()
    assert shipper.held_bytes() <= 32 * 1024 and shipper.stats.bytes_read <= 32 * 1024
    for _ in range(40):
        sender.deliver()
        clock.t += 1.0
        shipper.tick()
    sender.deliver()
    shipper.tick()
    assert shipper.stats.max_held_bytes <= 32 * 1024
    assert sender.offsets() == [i * 100 for i in range(2001)]


def test_partial_line_waits_then_goes_as_is(tmp_path) -> None:
    (tmp_path / "a.log").write_bytes(b"done\nhalf")
    shipper, sender, clock = make(tmp_path, partial_max_wait_s=3.0)
    shipper.start()
    clock.t += 1.0
    shipper.tick()
    sender.deliver()
    assert [ln["line"] for v in sender.delivered for ln in v["lines"]] == ["done"]
    for _ in range(4):
        clock.t += 1.0
        shipper.tick()
    sender.deliver()
    assert [ln["line"] for v in sender.delivered for ln in v["lines"]] == ["done", "half"]
