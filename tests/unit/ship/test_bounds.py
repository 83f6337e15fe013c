"""The pure bounds of a node: what waits (bytes and age, drop-oldest), when batches go, what health says."""

from __future__ import annotations

import json
import subprocess
import sys

from streams.config import REPO_ROOT
from streams.ship.backlog import Drop, Waiting, WriteHistory, plan_drops
from streams.ship.batching import Due, SendSchedule
from streams.ship.checkpoint import Checkpoint, CheckpointStore, Entry
from streams.ship.health import ShipHealth

MiB = 1024 * 1024


# -- ages ---------------------------------------------------------------------------------------------

def test_history_dates_bytes_no_older_than_they_are() -> None:
    h = WriteHistory(spacing_s=10.0)
    h.seen(100.0, 1000)
    h.seen(105.0, 2000)  # too soon after the last sample: dated by the next one instead
    h.seen(112.0, 3000)
    assert h.first_seen(0) == 100.0 and h.first_seen(999) == 100.0
    assert h.first_seen(1000) == 112.0  # written between 100 and 105, dated 112: a lower bound on age
    assert h.first_seen(3000) is None
    assert h.seen_by(111.0) == 1000 and h.seen_by(112.0) == 3000 and h.seen_by(50.0) == 0
    h.forget_below(2500)
    assert list(h.samples) == [(112.0, 3000)]


# -- drop-oldest ----------------------------------------------------------------------------------------

def w(stream: int, acked: int, size: int, first: float, aged_out: int = 0, detached: bool = False) -> Waiting:
    return Waiting(stream, acked, size, first, aged_out, detached)


def test_nothing_is_dropped_within_the_bounds() -> None:
    assert plan_drops([w(1, 0, 5 * MiB, 10.0), w(2, 100, 3 * MiB, 20.0)], max_bytes=8 * MiB) == []


def test_over_the_byte_bound_the_oldest_go_first_rotated_files_before_live_ones() -> None:
    files = [w(1, 0, 4 * MiB, first=50.0),  # live, oldest waiting byte seen at 50
             w(2, 0, 3 * MiB, first=80.0, detached=True),  # rotated away: only the shipper keeps it
             w(3, 1 * MiB, 2 * MiB, first=10.0)]  # live, oldest of all
    drops = plan_drops(files, max_bytes=4 * MiB)  # 8 MiB wait: 4 must go
    assert drops == [Drop(2, 0, 3 * MiB, "waiting_bytes"), Drop(3, 1 * MiB, 2 * MiB, "waiting_bytes")]


def test_aged_bytes_go_whatever_the_byte_bound_and_count_toward_it() -> None:
    files = [w(1, 100, 1000, first=0.0, aged_out=600), w(2, 0, 500, first=5.0)]
    assert plan_drops(files, max_bytes=10 * MiB) == [Drop(1, 100, 600, "waiting_age")]
    # After the aged bytes, 400 + 500 wait; a bound of 700 takes 200 more from the oldest rest.
    assert plan_drops(files, max_bytes=700) == [Drop(1, 100, 600, "waiting_age"), Drop(1, 600, 800, "waiting_bytes")]


# -- the send schedule ----------------------------------------------------------------------------------

def test_full_batches_wait_for_the_slot_unless_a_bound_is_near() -> None:
    s = SendSchedule(interval_ms=90_000, phase_ms=30_000, early_fraction=0.5)
    s.start(0)
    assert s.next_ms == 30_000 and s.wait_ms(10_000) == 20_000
    cap, wcap = 16 * MiB, 2048 * MiB
    assert s.due(10_000, held=4 * MiB, held_cap=cap, waiting=4 * MiB, waiting_cap=wcap) is Due.NOTHING
    assert s.due(10_000, held=8 * MiB, held_cap=cap, waiting=8 * MiB, waiting_cap=wcap) is Due.FULL
    assert s.due(10_000, held=1 * MiB, held_cap=cap, waiting=1024 * MiB, waiting_cap=wcap) is Due.FULL
    assert s.due(10_000, held=cap, held_cap=cap, waiting=cap, waiting_cap=wcap) is Due.ALL  # reading stopped
    assert s.due(30_000, held=0, held_cap=cap, waiting=0, waiting_cap=wcap) is Due.ALL
    assert s.next_ms == 120_000


# -- health ---------------------------------------------------------------------------------------------

def test_health_reports_a_failing_checkpoint_without_asking_for_a_restart() -> None:
    t = [1000.0]
    h = ShipHealth(lambda: t[0], stuck_after_s=60)
    assert h.liveness() == (True, "ok") and h.readiness() == (True, "ready")
    h.checkpoint("cannot write checkpoint /c.json: [Errno 28] No space left on device")
    t[0] += 12
    alive, text = h.liveness()
    assert alive and "checkpoint not written for 12 s" in text and "No space left" in text
    assert h.readiness()[0] is False
    h.checkpoint(None)
    assert h.readiness() == (True, "ready")
    t[0] += 61
    assert h.liveness()[0] is False  # the loop has not turned: that a restart does fix


# -- checkpoint --------------------------------------------------------------------------------------------

def test_checkpoint_keeps_sizes_and_reads_the_previous_version(tmp_path) -> None:
    store = CheckpointStore(tmp_path / "ck.json")
    store.save(Checkpoint([Entry(1, 2, 256, "ab", "/l/a.log", 0, 100, size=400)], {"/l/a.log": 0}))
    assert store.load().entries[0].size == 400  # type: ignore[union-attr]
    old = {"version": 1, "files": [{"dev": 1, "ino": 2, "fp_len": 256, "fp": "ab", "path": "/l/a.log",
                                    "generation": 0, "offset": 100}], "generations": {"/l/a.log": 0}}
    (tmp_path / "ck.json").write_text(json.dumps(old))
    assert store.load().entries[0].size == -1  # type: ignore[union-attr]  # unknown


def test_a_disk_at_its_limit_never_leaves_a_torn_checkpoint(tmp_path) -> None:
    """A real kernel limit: the write goes short, then fails; the old checkpoint must stay whole."""
    store = CheckpointStore(tmp_path / "ck.json")
    small = Checkpoint([Entry(1, 2, 256, "ab", "/l/a.log", 0, 100, 400)], {"/l/a.log": 0})
    store.save(small)
    big = Checkpoint([Entry(1, i, 256, "ab", f"/l/{i}.log", 0, 100, 400) for i in range(40)], {})
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from streams.ship.checkpoint import Checkpoint, CheckpointError, CheckpointStore\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"  # else the kernel kills the writer
        "resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    CheckpointStore(Path(sys.argv[1])).save(Checkpoint.from_json(sys.argv[2]))\n"
        "except CheckpointError as exc:\n"
        "    print('refused:', exc)\n"
        "else:\n"
        "    print('written')\n")
    out = subprocess.run([sys.executable, "-c", script, str(store.path), big.to_json()], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.startswith("refused:") and "File too large" in out, out
    assert store.load() == small
    assert not (tmp_path / "ck.json.tmp").exists()
