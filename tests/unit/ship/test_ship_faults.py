"""The shipping loop under hostile input and faults: symlinks, poison names, a full disk, Kafka away.

Real files and symlinks in tmp_path, the real RawBatch encoding, a recording producer, a fake clock.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest

from devtools.testing.ship import FakeClock, RecordingSender, make_shipper
from streams.config import REPO_ROOT
from streams.ship.bounds import FLAGS_LABEL
from streams.ship.checkpoint import Checkpoint, CheckpointError, CheckpointStore
from streams.ship.labels import Origin, SourceBuilder
from streams.ship.metrics import ShipCollector
from streams.ship.shipper import Shipper

SECRET = b"token=eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.secret\n"


def run(shipper: Shipper, sender: RecordingSender, clock: FakeClock, seconds: int, fail: bool = False) -> None:
    """Tick once a second, delivering (or failing) what was sent."""
    for _ in range(seconds):
        clock.t += 1.0
        shipper.tick()
        sender.deliver(fail=fail)
    shipper.tick()


def texts(sender: RecordingSender) -> list[str]:
    return [ln["line"] for ln in sender.lines()]


def write_lines(path: Path, prefix: str, n: int, size: int = 100) -> None:
    with path.open("ab") as fh:
        fh.write(b"".join(f"{prefix} {i:06d} ".encode().ljust(size - 1, b"x") + b"\n" for i in range(n)))


# -- symlinks ----------------------------------------------------------------------------------------------

def test_a_symlink_planted_in_the_logs_is_never_read_and_is_counted_once(tmp_path) -> None:
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    logs.mkdir()
    outside.mkdir()
    (outside / "token").write_bytes(SECRET)
    (logs / "rank0.log").write_bytes(b"step 1\n")
    (logs / "rank1.log").symlink_to(outside / "token")
    shipper, sender, clock = make_shipper(tmp_path, paths=[f"{logs}/**/*.log"], scan_interval_s=1.0)
    shipper.start()
    run(shipper, sender, clock, 5)  # five scans
    assert texts(sender) == ["step 1"]
    assert shipper.stats.refused == {"symlink": 1}


def test_a_symlink_swapped_in_after_the_first_read_is_not_followed(tmp_path) -> None:
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    (logs / "job").mkdir(parents=True)
    (outside / "job").mkdir(parents=True)
    (outside / "token").write_bytes(SECRET)
    (outside / "job" / "rank1.log").write_bytes(SECRET)
    (logs / "rank0.log").write_bytes(b"first\n")
    (logs / "job" / "rank1.log").write_bytes(b"also first\n")
    shipper, sender, clock = make_shipper(tmp_path, paths=[f"{logs}/**/*.log"], scan_interval_s=1.0)
    shipper.start()
    run(shipper, sender, clock, 2)
    assert sorted(texts(sender)) == ["also first", "first"]
    (logs / "rank0.log").unlink()  # the file read so far is replaced by a link to the token
    (logs / "rank0.log").symlink_to(outside / "token")
    (logs / "job").rename(tmp_path / "job.old")  # and a directory by a link to a look-alike outside
    (logs / "job").symlink_to(outside / "job")
    run(shipper, sender, clock, 5)
    assert sorted(texts(sender)) == ["also first", "first"]
    assert shipper.stats.refused == {"symlink": 2, "outside_roots": 1}


# -- poison input ------------------------------------------------------------------------------------------

def test_a_file_whose_name_breaks_the_contract_costs_a_flag_not_the_node(tmp_path) -> None:
    write_lines(tmp_path / "rank99999999999.log", "poison", 50)  # rank beyond the contract's int
    fd = os.open(os.fsencode(tmp_path) + b"/rank\xff.log", os.O_CREAT | os.O_WRONLY, 0o644)  # not UTF-8
    os.write(fd, b"latin\n")
    os.close(fd)
    write_lines(tmp_path / "rank0.log", "good", 50)
    shipper, sender, clock = make_shipper(tmp_path, path_pattern=r"rank(?P<rank>\d+)\.log$")
    shipper.start()
    run(shipper, sender, clock, 3)
    by_file = {v["source"]["file"]: v for v in sender.delivered}
    assert sorted(texts(sender)) == sorted([f"good {i:06d} ".ljust(99, "x") for i in range(50)]
                                           + [f"poison {i:06d} ".ljust(99, "x") for i in range(50)] + ["latin"])
    poison = by_file[f"{tmp_path}/rank99999999999.log"]
    assert poison["source"]["rank"] is None and poison["labels"]["rank"] == "99999999999"
    assert poison["labels"][FLAGS_LABEL] == "rank_out_of_range"
    assert by_file[f"{tmp_path}/rank\\xff.log"]["lines"][0]["line"] == "latin"
    assert by_file[f"{tmp_path}/rank0.log"]["source"]["rank"] == 0


class UnboundedSources(SourceBuilder):
    """A source builder with a bug: it lets a rank through that the contract cannot carry."""

    def for_path(self, path: str) -> tuple[dict[str, Any], dict[str, str]]:
        source, labels = super().for_path(path)
        if "poison" in path:
            source["rank"] = 99999999999
        return source, labels


def test_a_batch_that_cannot_be_encoded_is_never_put_back_forever(tmp_path) -> None:
    write_lines(tmp_path / "poison.log", "p", 20)
    write_lines(tmp_path / "rank0.log", "g", 20)
    sources = UnboundedSources(Origin("node-1", None, None, None, {"project": "p"}), None)
    shipper, sender, clock = make_shipper(tmp_path, sources=sources)
    shipper.start()
    run(shipper, sender, clock, 3)
    assert len(texts(sender)) == 40
    flagged = {v["source"]["file"]: v["labels"].get(FLAGS_LABEL) for v in sender.delivered}
    assert flagged == {f"{tmp_path}/poison.log": "envelope_quarantined", f"{tmp_path}/rank0.log": None}
    assert {e.path: e.offset for e in shipper.acked_entries()} == {f"{tmp_path}/poison.log": 2000,
                                                                    f"{tmp_path}/rank0.log": 2000}


def test_a_broker_that_refuses_the_size_gets_smaller_records(tmp_path) -> None:
    write_lines(tmp_path / "a.log", "big", 3000)  # one 300 kB batch
    shipper, sender, clock = make_shipper(tmp_path)
    sender.refuse_over = 100 * 1024  # the topic's max.message.bytes is below ship.max_message_bytes
    shipper.start()
    run(shipper, sender, clock, 6)
    assert texts(sender) == [f"big {i:06d} ".ljust(99, "x") for i in range(3000)]  # in order, once each
    assert shipper.packer.message_limit < 200_000 and shipper.stats.delivery_failures == 1  # halved once


# -- what waits --------------------------------------------------------------------------------------------

def test_past_the_waiting_bound_the_oldest_bytes_are_dropped_rotated_files_first(tmp_path) -> None:
    MiB = 1024 * 1024
    write_lines(tmp_path / "a.log", "old", 6000)  # 600 kB
    shipper, sender, clock = make_shipper(tmp_path, max_waiting_bytes=1 * MiB)
    shipper.start()
    (tmp_path / "a.log").rename(tmp_path / "a.log.1")  # rotated while Kafka is away...
    write_lines(tmp_path / "a.log", "new", 8000)  # 800 kB in the new file
    run(shipper, sender, clock, 3, fail=True)
    (tmp_path / "a.log.1").unlink()  # ...and deleted by logrotate: only the shipper's descriptor keeps it
    run(shipper, sender, clock, 3, fail=True)
    assert sender.delivered == []
    dropped = shipper.stats.dropped_bytes["waiting_bytes"]
    assert 1_400_000 - MiB <= dropped < 1_400_000 - MiB + 100  # the excess, to the next line start
    run(shipper, sender, clock, 5)  # Kafka is back
    got = texts(sender)
    old = [t for t in got if t.startswith("old")]
    assert [t for t in got if t.startswith("new")] == [f"new {i:06d} ".ljust(99, "x") for i in range(8000)]
    first_kept = 6000 - len(old)
    assert old == [f"old {i:06d} ".ljust(99, "x") for i in range(first_kept, 6000)]  # whole lines, the newest
    assert first_kept * 100 == dropped


def test_bytes_older_than_the_age_bound_are_dropped_and_younger_ones_kept(tmp_path) -> None:
    write_lines(tmp_path / "a.log", "stale", 100)
    shipper, sender, clock = make_shipper(tmp_path, max_waiting_age_s=64.0)  # age samples every second
    shipper.start()
    run(shipper, sender, clock, 40, fail=True)
    write_lines(tmp_path / "a.log", "fresh", 100)
    run(shipper, sender, clock, 40, fail=True)  # the stale lines are 80 s old, the fresh ones 40 s
    assert shipper.stats.dropped_bytes == {"waiting_age": 100 * 100}
    run(shipper, sender, clock, 3)
    assert texts(sender) == [f"fresh {i:06d} ".ljust(99, "x") for i in range(100)]


def test_a_file_deleted_while_the_shipper_was_down_is_counted_as_lost(tmp_path) -> None:
    write_lines(tmp_path / "a.log", "x", 10)
    write_lines(tmp_path / "b.log", "z", 10)
    shipper, sender, clock = make_shipper(tmp_path)
    shipper.start()
    run(shipper, sender, clock, 2)  # 1000 bytes of each acknowledged
    write_lines(tmp_path / "a.log", "y", 30)
    run(shipper, sender, clock, 2, fail=True)  # 3000 more seen, not acknowledged; then the pod dies
    (tmp_path / "a.log").unlink()
    (tmp_path / "b.log").unlink()  # shipped whole: nothing lost
    again, _, _ = make_shipper(tmp_path)
    again.start()
    assert again.stats.dropped_files == {"gone_before_shipped": 1}
    assert again.stats.dropped_bytes == {"gone_before_shipped": 3000}


def test_a_truncation_with_no_copy_counts_what_was_never_read(tmp_path) -> None:
    write_lines(tmp_path / "a.log", "t", 100)  # 10,000 bytes; memory holds 4 KiB of them while Kafka is slow
    shipper, sender, clock = make_shipper(tmp_path, max_buffer_bytes=4096, max_batch_bytes=2048,
                                          max_line_bytes=1024, read_chunk_bytes=1024)
    shipper.start()
    for _ in range(3):  # Kafka slow: 4 KiB read and in flight, the rest unread
        clock.t += 1.0
        shipper.tick()
    os.truncate(tmp_path / "a.log", 0)  # truncated in place, and no copy kept
    clock.t += 1.0
    shipper.tick()
    assert shipper.stats.dropped_files == {"truncated_before_shipped": 1}
    assert shipper.stats.dropped_bytes == {"truncated_before_shipped": 10_000 - 4096}
    sender.deliver()
    assert len(texts(sender)) == 4096 // 100  # what was in flight still arrives


# -- a full disk for the checkpoint --------------------------------------------------------------------------

class FullDisk(CheckpointStore):
    """The checkpoint's filesystem at its limit until ``full`` is cleared (the real disk is in the
    integration test)."""

    full = False

    def save(self, checkpoint: Checkpoint) -> None:
        if self.full:
            raise CheckpointError(f"cannot write checkpoint {self.path}: [Errno 28] No space left on device")
        super().save(checkpoint)


def test_a_checkpoint_that_cannot_be_written_is_retried_while_shipping_goes_on(tmp_path) -> None:
    store = FullDisk(tmp_path / "ck.json")
    write_lines(tmp_path / "a.log", "a", 10)
    shipper, sender, clock = make_shipper(tmp_path, store=store)
    shipper.start()
    store.full = True
    write_lines(tmp_path / "a.log", "b", 10)
    run(shipper, sender, clock, 4)
    assert len(texts(sender)) == 20  # still shipping
    assert shipper.stats.checkpoint_failures >= 3  # retried
    ready, why = shipper.health.readiness()
    assert not ready and "No space left on device" in why and shipper.health.liveness()[0]
    assert store.load().entries[0].offset < 2000  # type: ignore[union-attr]
    store.full = False
    run(shipper, sender, clock, 1)
    assert store.load().entries[0].offset == 2000  # type: ignore[union-attr]
    assert shipper.health.readiness() == (True, "ready")


# -- the schedule and the endpoints ---------------------------------------------------------------------

def test_full_batches_wait_for_the_nodes_slot_unless_memory_nears_its_cap(tmp_path) -> None:
    write_lines(tmp_path / "a.log", "burst", 400)  # 40 kB: eight full batches of 50 lines
    shipper, sender, clock = make_shipper(tmp_path, interval_s=90.0, max_batch_lines=50)
    shipper.start()
    slot = shipper.schedule.next_ms / 1000
    while clock.t + 1 < slot:
        clock.t += 1.0
        shipper.tick()
        assert sender.pending == []  # full, but the node's slot has not come
    clock.t = slot
    shipper.tick()
    assert len(sender.pending) == 8
    near, nsender, nclock = make_shipper(tmp_path / "near", interval_s=90.0, max_batch_lines=50,
                                         max_buffer_bytes=64 * 1024, max_batch_bytes=16 * 1024,
                                         max_line_bytes=4 * 1024)
    (tmp_path / "near").mkdir()
    write_lines(tmp_path / "near" / "a.log", "burst", 400)
    near.start()
    nclock.t += 1.0
    near.tick()
    assert nsender.pending  # 40 kB held of a 64 kB cap: full batches go before the slot


def test_metrics_report_what_was_read_sent_waiting_dropped_and_refused(tmp_path) -> None:
    (tmp_path / "token.log").symlink_to("/proc/self/environ")
    write_lines(tmp_path / "a.log", "m", 10)
    shipper, sender, clock = make_shipper(tmp_path)
    shipper.start()
    run(shipper, sender, clock, 2)
    registry = CollectorRegistry()
    registry.register(ShipCollector(shipper))
    text = generate_latest(registry).decode()
    for line in ("sluice_ship_lines_read_total 10.0", "sluice_ship_lines_sent_total 10.0",
                 'sluice_ship_refused_paths_total{reason="symlink"} 1.0', "sluice_ship_waiting_bytes 0.0",
                 'sluice_ship_dropped_bytes_total{reason="waiting_bytes"} 0.0', "sluice_ship_checkpoint_failing 0.0",
                 "sluice_ship_ack_latency_seconds_count 1.0"):
        assert line in text, line


def test_docs_metrics_lists_exactly_what_the_shipper_serves(tmp_path) -> None:
    shipper, _, _ = make_shipper(tmp_path)
    served = {family.name + ("_total" if family.type == "counter" else "")
              for family in ShipCollector(shipper).collect()}
    text = (REPO_ROOT / "docs" / "metrics.md").read_text()
    body = text.split("## The node shipper", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `(sluice_ship_[a-z0-9_]+)`", body, re.MULTILINE)) == served
