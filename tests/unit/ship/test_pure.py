"""The shipper's pure parts: identity, lines, batches, schedule, acknowledgements, checkpoint, labels."""

from __future__ import annotations

import json

import pytest

from streams.config import load_settings
from streams.ship.acks import AckTracker
from streams.ship.batching import Batcher, next_send_ms, stagger_phase_ms
from streams.ship.checkpoint import Checkpoint, CheckpointError, CheckpointStore, Entry
from streams.ship.identity import (
    Change,
    Fingerprint,
    Observation,
    classify,
    is_copy_of,
    split_stream_offset,
    stream_offset,
)
from streams.ship.labels import Origin, SourceBuilder, parse_podinfo_labels
from streams.ship.lines import LineSplitter
from streams.ship.settings import ShipSettings

HEAD = b"2024-07-05 22:43:44 rank0 INFO starting\n" * 10


def obs(size: int, head: bytes = HEAD, dev: int = 1, ino: int = 7) -> Observation:
    return Observation(dev, ino, size, head[:size])


# -- identity / rotation ----------------------------------------------------------------------------

def test_growth_and_no_change() -> None:
    fp = Fingerprint.of(HEAD)
    assert classify(1, 7, fp, 100, obs(400)) is Change.GREW
    assert classify(1, 7, fp, 400, obs(400)) is Change.SAME


def test_rename_and_create_is_a_replacement() -> None:
    assert classify(1, 7, Fingerprint.of(HEAD), 100, obs(10, ino=8)) is Change.REPLACED


def test_copytruncate_is_detected_by_size_and_by_content() -> None:
    fp = Fingerprint.of(HEAD)
    assert classify(1, 7, fp, 300, obs(50)) is Change.TRUNCATED
    # Truncated and already rewritten past our position: same inode, longer, other first bytes.
    other = b"2024-07-06 00:00:00 rank0 INFO restarted\n" * 20
    assert classify(1, 7, fp, 300, obs(800, head=other)) is Change.TRUNCATED


def test_inode_reuse_is_caught_by_the_fingerprint() -> None:
    fp = Fingerprint.of(HEAD[:256])
    reused = Observation(1, 7, 5000, b"x" * 256)
    assert classify(1, 7, fp, 10, reused) is Change.TRUNCATED


def test_short_fingerprint_matches_the_grown_file_and_copies() -> None:
    fp = Fingerprint.of(HEAD[:30])  # taken while the file had 30 bytes
    assert fp.matches(HEAD[:256]) and not fp.complete()
    assert is_copy_of(fp, 30, obs(300)) and not is_copy_of(fp, 301, obs(300))
    assert not Fingerprint.of(HEAD[:30]).matches(HEAD[:29])


def test_stream_offsets_keep_generations_apart() -> None:
    assert stream_offset(0, 123) == 123
    assert split_stream_offset(stream_offset(3, 123)) == (3, 123)
    assert stream_offset(1, 0) > stream_offset(0, (1 << 40) - 1)


# -- lines --------------------------------------------------------------------------------------------

def test_lines_carry_byte_offsets_across_chunks_and_hold_partials() -> None:
    s = LineSplitter(0, 1000)
    assert s.feed(b"ab\r\ncd\nef") == [(0, 4, "ab"), (4, 7, "cd")]
    assert s.partial == b"ef" and s.next_offset == 9
    assert s.feed(b"g\n") == [(7, 11, "efg")]
    assert s.feed(b"\xff\n") == [(11, 13, "\ufffd")]


def test_partial_flush_then_continuation_is_a_new_line() -> None:
    s = LineSplitter(100, 1000)
    assert s.feed(b"half") == []
    assert s.flush() == [(100, 104, "half")]
    assert s.feed(b" more\n") == [(104, 110, " more")]


def test_long_lines_are_cut_with_their_own_offsets() -> None:
    s = LineSplitter(0, 4)
    assert s.feed(b"abcdefghij\nxy\n") == [(0, 4, "abcd"), (4, 8, "efgh"), (8, 11, "ij"), (11, 14, "xy")]
    assert s.feed(b"123456789") == [(14, 18, "1234"), (18, 22, "5678")]
    assert s.partial == b"9"


# -- batching and schedule ------------------------------------------------------------------------------

def test_batches_are_cut_by_lines_and_bytes_and_per_stream() -> None:
    b = Batcher(max_lines=3, max_bytes=10_000)
    b.add(1, 0, [(i * 10, i * 10 + 10, f"l{i}") for i in range(7)], ts_ms=5)
    b.add(2, 1 << 40, [(0, 5, "other")], ts_ms=5)
    full = b.take_full()
    assert [len(x.records) for x in full] == [3, 3]
    assert (full[0].start, full[0].end, full[1].start, full[1].end) == (0, 30, 30, 60)
    rest = b.take_all()
    assert [(x.stream, len(x.records)) for x in rest] == [(1, 1), (2, 1)]
    assert rest[1].records[0] == {"line": "other", "file_offset": 1 << 40, "ts": 5}
    assert b.take_all() == []


def test_byte_limit_and_drop() -> None:
    b = Batcher(max_lines=1000, max_bytes=100)
    b.add(1, 0, [(i * 40, i * 40 + 40, "x" * 39) for i in range(5)], ts_ms=0)
    assert [len(x.records) for x in b.take_full()] == [1, 1, 1, 1]  # 40 + 16 overhead: one per batch
    b.drop(1)
    assert b.take_all() == [] and b.pending_streams() == set()


def test_stagger_is_deterministic_and_spread() -> None:
    assert stagger_phase_ms("node-a", 90_000) == stagger_phase_ms("node-a", 90_000)
    phases = {stagger_phase_ms(f"gpu-node-{i}", 90_000) for i in range(200)}
    assert len(phases) > 190 and min(phases) < 10_000 and max(phases) > 80_000
    assert stagger_phase_ms("anything", 0) == 0


def test_next_send_lands_on_the_nodes_phase() -> None:
    interval, phase = 30_000, 47_123  # phase beyond the interval: only phase mod interval matters
    t = next_send_ms(1_000_000, interval, phase)
    assert 1_000_000 < t <= 1_000_000 + interval and t % interval == phase % interval
    assert next_send_ms(t, interval, phase) == t + interval
    assert next_send_ms(999, 1000, 0) == 1000 and next_send_ms(1000, 1000, 0) == 2000


# -- acknowledgements ----------------------------------------------------------------------------------

def test_offset_moves_only_over_contiguous_acks() -> None:
    a = AckTracker(100)
    t1, t2, t3 = a.sent(200), a.sent(300), a.sent(400)
    assert not a.acked(t2) and a.offset == 100
    assert a.acked(t1) and a.offset == 300
    a.reset()
    assert not a.acked(t3) and a.offset == 300 and a.in_flight == 0


# -- checkpoint ----------------------------------------------------------------------------------------

def test_checkpoint_roundtrip_and_generations(tmp_path) -> None:
    store = CheckpointStore(tmp_path / "d" / "ck.json")
    assert store.load() is None
    ck = Checkpoint([Entry(1, 2, 256, "ab", "/l/a.log", 3, 999)], {"/l/a.log": 3})
    assert ck.next_generation("/l/a.log") == 4 and ck.next_generation("/l/b.log") == 0
    store.save(ck)
    again = store.load()
    assert again is not None and again.entries == ck.entries and again.generations == ck.generations
    assert not (tmp_path / "d" / "ck.json.tmp").exists()


def test_a_torn_or_foreign_checkpoint_is_refused(tmp_path) -> None:
    path = tmp_path / "ck.json"
    path.write_text('{"version": 1, "files": [{"dev": 1')
    with pytest.raises(CheckpointError, match="unreadable"):
        CheckpointStore(path).load()
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(CheckpointError):
        CheckpointStore(path).load()


# -- labels --------------------------------------------------------------------------------------------

def test_downward_api_labels_file() -> None:
    text = 'project="llama"\ntask_id="run-42"\napp.kubernetes.io/part-of="train"\n' \
           'note="say \\"hi\\""\ncontroller-revision-hash="abc"\n'
    assert parse_podinfo_labels(text) == {"project": "llama", "task_id": "run-42",
                                          "app.kubernetes.io/part-of": "train", "note": 'say "hi"'}


def test_source_and_labels_precedence() -> None:
    from streams.ship.labels import origin

    settings = ShipSettings(labels={"project": "from-config", "node_role": "trainer"},
                            path_pattern=r"/train/(?P<task_id>[^/]+)/rank(?P<rank>\d+)\.log$")
    env = {"NODE_NAME": "gpu-7", "POD_NAMESPACE": "ml", "POD_NAME": "shipper-x"}
    node = origin(settings, env, 'project="from-pod"\nteam="vision"\n')
    assert node == Origin("gpu-7", "ml", "shipper-x", None,
                          {"project": "from-config", "team": "vision", "node_role": "trainer"})
    source, labels = SourceBuilder(node, settings.path_pattern).for_path("/train/run-9/rank3.log")
    assert source["rank"] == 3 and source["node_role"] == "trainer" and source["host"] == "gpu-7"
    assert source["file"] == "/train/run-9/rank3.log"
    assert labels == {"project": "from-config", "team": "vision", "node_role": "trainer",
                      "task_id": "run-9", "rank": "3"}


def test_settings_from_environment(monkeypatch) -> None:
    monkeypatch.setenv("SLUICE_SHIP__LABELS__PROJECT", "llama")
    monkeypatch.setenv("SLUICE_SHIP__INTERVAL_S", "0.5")
    monkeypatch.setenv("SLUICE_SHIP__PATHS", '["/logs/**/*.log"]')
    monkeypatch.delenv("SLUICE_CONFIG", raising=False)
    s = load_settings().ship
    assert s.paths == ["/logs/**/*.log"]
    assert s.labels == {"project": "llama"} and s.interval_s == 0.5 and s.compression == "zstd"
    with pytest.raises(ValueError, match="two batches"):
        ShipSettings(max_buffer_bytes=600_000)
