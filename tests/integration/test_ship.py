"""`sluice ship` against real files and the real Kafka: rotation, kill -9, Kafka outage.

Every line written is known by (generation of the file at its path, byte offset, text); every line
read back from Kafka is decoded to the same triple, so loss and duplication are checked exactly.
Lines are real corpus lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devtools import CORPUS_DIR
from devtools.testing.ship import KafkaProxy
from streams.config import REPO_ROOT, Settings
from streams.ship.bounds import avro_text
from streams.ship.identity import split_stream_offset
from streams.ship.lines import _text
from streams.ship.run import build_shipper
from streams.ship.settings import ShipSettings
from streams.ship.shipper import Shipper

Written = tuple[int, int, str]  # (generation, byte offset, text)


@pytest.fixture(scope="module")
def corpus_lines() -> list[bytes]:
    corpus = CORPUS_DIR / "training"
    lines: list[bytes] = []
    for path in sorted(corpus.glob("*.log")):
        # Lines longer than the smallest max_line_bytes used here (8 KiB) would arrive cut into pieces
        # (unit-tested in tests/unit/ship); a few ms-swift JSON dumps are.
        lines += [ln for ln in path.read_bytes().split(b"\n") if ln and len(ln) < 8000]
    assert len(lines) > 4000
    return lines


@pytest.fixture
def raw_topic(stack: Settings, new_topic: Callable[..., str]) -> str:
    """A fresh raw topic with the RawBatch contract registered as its value schema."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from streams.contracts import schema_text

    topic = new_topic("ship", partitions=3)
    # As `sluice schemas register` does it: registering with normalize=True makes Apicurio 2.4 store
    # the fields sorted by name, which is another record to Avro (field order is the encoding).
    SchemaRegistryClient({"url": stack.registry.url}).register_schema(
        f"{topic}-value", Schema(schema_text("raw_batch"), "AVRO"))
    return topic


class Writer:
    """Appends corpus lines to a file like a training process, and rotates it like logrotate."""

    def __init__(self, path: Path, lines: list[bytes]) -> None:
        self.path, self.lines = path, lines
        self.fh = path.open("ab", buffering=0)
        self.generation, self.pos, self.next = 0, 0, 0
        self.written: list[Written] = []

    def write(self, n: int) -> None:
        chunk = []
        for _ in range(n):
            raw = self.lines[self.next % len(self.lines)]
            self.next += 1
            self.written.append((self.generation, self.pos, _text(raw)))
            self.pos += len(raw) + 1
            chunk.append(raw + b"\n")
        self.fh.write(b"".join(chunk))

    def rename_rotate(self, late_lines: int) -> None:
        """rename-and-create; the writer keeps writing to the old file for a moment, then reopens."""
        self.path.rename(self.path.with_name(self.path.name + ".1"))
        self.write(late_lines)
        self.fh.close()
        self.fh = self.path.open("ab", buffering=0)
        self.generation, self.pos = self.generation + 1, 0

    def copytruncate(self) -> None:
        """logrotate's copytruncate, with no write between the copy and the truncate (logrotate loses
        such writes for every reader: that window is not the shipper's)."""
        shutil.copyfile(self.path, self.path.with_name(self.path.name + ".2"))
        os.truncate(self.path, 0)
        self.generation, self.pos = self.generation + 1, 0  # O_APPEND: the next write lands at 0


def consume_values(settings: Settings, topic: str, want_lines: int, timeout_s: float) -> list[dict]:
    """Every RawBatch in the topic, decoded, until ``want_lines`` lines or the timeout, then 1 s more."""
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from streams.avro_io import avro_deserializer

    deser = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"t-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list[dict] = []
    lines = 0
    deadline = time.monotonic() + timeout_s
    drain_until = None
    try:
        # Anything after the last expected line (duplicates) arrives in the same flush: drain briefly.
        while time.monotonic() < (drain_until or deadline):
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                got.append(deser(msg.value(), SerializationContext(topic, MessageField.VALUE)))
                lines += len(got[-1]["lines"])
            if drain_until is None and lines >= want_lines:
                drain_until = time.monotonic() + 1.0
    finally:
        consumer.close()
    return got


def consume(settings: Settings, topic: str, want: int, timeout_s: float) -> list[Written]:
    """Every line in the topic as (generation, byte offset, text), until ``want`` lines or the timeout."""
    return [(*split_stream_offset(line["file_offset"]), line["line"])
            for batch in consume_values(settings, topic, want, timeout_s) for line in batch["lines"]]


def fast_settings(tmp_path: Path, topic: str, **extra: object) -> ShipSettings:
    return ShipSettings(
        paths=[str(tmp_path / "logs" / "**" / "*.log")], checkpoint_path=tmp_path / "state" / "checkpoint.json",
        topic=topic, interval_s=0.2, stagger_window_s=0, poll_interval_s=0.05, scan_interval_s=0.2,
        rotate_wait_s=0.5, checkpoint_interval_s=0.1, podinfo_labels_path=tmp_path / "no-podinfo",
        node_name="test-node", labels={"project": "shiptest", "task_id": "t1"}, **extra)  # type: ignore[arg-type]


@contextlib.contextmanager
def running(settings: Settings, ship: ShipSettings) -> Iterator[Shipper]:
    shipper = build_shipper(settings, ship)
    stop = threading.Event()
    thread = threading.Thread(target=shipper.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield shipper
    finally:
        stop.set()
        thread.join(30)


def checkpoint_offsets(path: Path) -> dict[tuple[str, int], int]:
    doc = json.loads(path.read_text())
    return {(e["path"], e["generation"]): e["offset"] for e in doc["files"]}


def assert_exact(got: list[Written], written: list[Written]) -> None:
    missing = set(written) - set(got)
    assert not missing, f"{len(missing)} lines lost, first {_short(missing)}"
    unexpected = set(got) - set(written)
    assert not unexpected, f"{len(unexpected)} lines never written, first {_short(unexpected)}"


def _short(lines: set[Written] | list[Written]) -> list[tuple[int, int, str]]:
    return [(g, o, t[:60]) for g, o, t in sorted(lines)[:3]]


def test_rotation_in_both_styles_loses_and_duplicates_nothing(stack, raw_topic, tmp_path, corpus_lines) -> None:
    (tmp_path / "logs" / "rank0").mkdir(parents=True)
    writer = Writer(tmp_path / "logs" / "rank0" / "train.log", corpus_lines)
    writer.write(500)  # before the shipper starts: shipped from the beginning
    with running(stack, fast_settings(tmp_path, raw_topic)) as shipper:
        for step in range(40):  # ~4 s of writing, 200 lines per 0.1 s
            writer.write(200)
            if step == 12:
                writer.rename_rotate(late_lines=150)
            if step == 26:
                writer.copytruncate()
            time.sleep(0.1)
        writer.write(100)
        got = consume(stack, raw_topic, len(writer.written), timeout_s=20)
        stats = shipper.stats
    assert stats.rotations == 1 and stats.truncations == 1
    assert {g for g, _, _ in writer.written} == {0, 1, 2}
    assert_exact(got, writer.written)
    dups = [k for k, n in Counter(got).items() if n > 1]
    assert not dups, f"{len(dups)} duplicated lines, first {_short(dups)}"


def _ship_process(tmp_path: Path, topic: str, settings: Settings, extra_env: dict[str, str] | None = None,
                  preexec: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SLUICE_KAFKA__BOOTSTRAP_SERVERS": settings.kafka.bootstrap_servers,
           "SLUICE_REGISTRY__URL": settings.registry.url, "SLUICE_SHIP__POLL_INTERVAL_S": "0.05",
           "SLUICE_SHIP__CHECKPOINT_INTERVAL_S": "0.2", "SLUICE_SHIP__SCAN_INTERVAL_S": "0.2",
           "SLUICE_SHIP__PODINFO_LABELS_PATH": str(tmp_path / "no-podinfo"), "SLUICE_SHIP__METRICS_PORT": "0",
           **(extra_env or {})}
    cmd = [sys.executable, "-m", "streams.ship", "--path", str(tmp_path / "logs" / "*.log"),
           "--checkpoint", str(tmp_path / "state" / "checkpoint.json"), "--topic", topic,
           "--interval", "0.3", "--stagger-window", "0", "--node-name", "kill-node", "--label", "project=shiptest"]
    return subprocess.Popen(cmd, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=preexec)  # noqa: PLW1509 - a limit for the child alone


def _wait_for_checkpoint(path: Path, above: int, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError, ValueError):
            offsets = checkpoint_offsets(path)
            if offsets and max(offsets.values()) > above:
                return max(offsets.values())
        time.sleep(0.05)
    raise AssertionError(f"checkpoint {path} never passed {above} bytes")


def test_kill_9_and_restart_resumes_from_checkpoint(stack, raw_topic, tmp_path, corpus_lines) -> None:
    (tmp_path / "logs").mkdir()
    writer = Writer(tmp_path / "logs" / "worker.log", corpus_lines)
    checkpoint = tmp_path / "state" / "checkpoint.json"
    proc = _ship_process(tmp_path, raw_topic, stack)
    try:
        writer.write(300)
        _wait_for_checkpoint(checkpoint, 0, timeout_s=15)  # running and acknowledged something
        for _ in range(15):  # mid-stream: writing while batches are in flight
            writer.write(300)
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        at_kill = max(checkpoint_offsets(checkpoint).values())
        assert 0 < at_kill < writer.pos, "the kill must land mid-stream"
        writer.write(1000)  # written while no shipper runs
        proc = _ship_process(tmp_path, raw_topic, stack)
        for _ in range(10):
            writer.write(300)
            time.sleep(0.1)
        got = consume(stack, raw_topic, len(writer.written), timeout_s=20)
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=20)[0].decode(errors="replace")
    assert_exact(got, writer.written)
    counts = Counter(got)
    dups = sorted(k for k, n in counts.items() if n > 1)
    # Only the unacknowledged tail may come twice, and it carries the same offsets (same ids downstream).
    assert all(off >= at_kill for _, off, _ in dups), f"re-sent below the checkpoint ({at_kill}): {_short(dups)}"
    print(f"\nkill -9: checkpoint at {at_kill} of {writer.pos} bytes written; "
          f"{sum(n - 1 for n in counts.values())} duplicate lines re-sent (offsets >= checkpoint)")
    assert proc.returncode == 0, out


def test_kafka_outage_loses_nothing_and_caps_memory(stack, raw_topic, tmp_path, corpus_lines) -> None:
    (tmp_path / "logs").mkdir()
    writer = Writer(tmp_path / "logs" / "rank3.log", corpus_lines)
    proxy = KafkaProxy("127.0.0.1", int(stack.kafka.bootstrap_servers.rsplit(":", 1)[1])).start()
    via_proxy = stack.model_copy(update={"kafka": stack.kafka.model_copy(
        update={"bootstrap_servers": proxy.bootstrap})})
    cap = 64 * 1024
    ship = fast_settings(tmp_path, raw_topic, max_buffer_bytes=cap, max_batch_bytes=16 * 1024,
                         max_line_bytes=8 * 1024, read_chunk_bytes=4096,
                         producer={"reconnect.backoff.max.ms": 200, "reconnect.backoff.ms": 50})
    checkpoint = ship.checkpoint_path
    try:
        with running(via_proxy, ship) as shipper:
            writer.write(500)
            _wait_for_checkpoint(checkpoint, 0, timeout_s=15)
            proxy.stop()
            time.sleep(0.3)
            acked_at_cut = checkpoint_offsets(checkpoint)
            for _ in range(20):  # 2 s of writing into the outage: far more than the cap
                writer.write(200)
                time.sleep(0.1)
            assert checkpoint_offsets(checkpoint) == acked_at_cut, "offsets advanced while Kafka was away"
            assert writer.pos > 4 * cap
            read = shipper.stats.bytes_read
            assert read - max(acked_at_cut.values()) <= cap, "the shipper read past its memory cap"
            assert shipper.stats.max_held_bytes <= cap
            proxy.start()
            writer.write(300)
            got = consume(stack, raw_topic, len(writer.written), timeout_s=25)
    finally:
        proxy.stop()
    assert_exact(got, writer.written)
    print(f"\noutage: {sum(n - 1 for n in Counter(got).values())} duplicate lines; "
          f"max held {shipper.stats.max_held_bytes} bytes (cap {cap})")


SECRET = b"token=eyJhbGciOiJSUzI1NiJ9.hunter2\n"


def test_poison_file_names_and_planted_symlinks(stack, raw_topic, tmp_path, corpus_lines) -> None:
    """A rank beyond the contract's int, a name that is not UTF-8, and symlinks to a token (to the file,
    to its directory, and swapped in for a file already read): every good line arrives exactly once,
    the poison file's lines arrive flagged, nothing behind a link ever does."""
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    logs.mkdir()
    (outside / "dir").mkdir(parents=True)
    (outside / "token").write_bytes(SECRET)
    (outside / "dir" / "rank9.log").write_bytes(SECRET)
    writers = {name: Writer(logs / name, corpus_lines) for name in
               ("rank0.log", "rank99999999999.log", "rank5.log", os.fsdecode(b"rank\xff.log"))}
    for w in writers.values():
        w.write(150)
    (logs / "rank7.log").symlink_to(outside / "token")
    (logs / "job").symlink_to(outside / "dir")
    ship = fast_settings(tmp_path, raw_topic, path_pattern=r"rank(?P<rank>\d+)\.log$")
    with running(stack, ship) as shipper:
        first = consume_values(stack, raw_topic, 4 * 150, timeout_s=20)
        (logs / "rank5.log").unlink()  # a file already read, replaced by a link to the token
        (logs / "rank5.log").symlink_to(outside / "token")
        with (outside / "token").open("ab") as fh:
            fh.write(SECRET * 50)
        writers["rank0.log"].write(100)
        got = consume_values(stack, raw_topic, 4 * 150 + 100, timeout_s=20)
        refused = dict(shipper.stats.refused)
    assert sum(len(b["lines"]) for b in first) == 600
    assert not [ln for b in got for ln in b["lines"] if "hunter2" in ln["line"]], "a line behind a symlink was shipped"
    for name, w in writers.items():
        sent = [(*split_stream_offset(ln["file_offset"]), ln["line"]) for b in got
                if b["source"]["file"] == avro_text(str(logs / name)) for ln in b["lines"]]
        assert sorted(sent) == sorted(w.written), f"{name}: {len(sent)} lines arrived of {len(w.written)} written"
    poison = [b for b in got if b["source"]["file"].endswith("rank99999999999.log")]
    assert {(b["source"]["rank"], b["labels"]["rank"], b["labels"]["sluice_flags"]) for b in poison} == \
        {(None, "99999999999", "rank_out_of_range")}
    assert refused == {"symlink": 3}


def test_a_checkpoint_at_the_file_size_limit_keeps_shipping_and_says_so(stack, raw_topic, tmp_path,
                                                                          corpus_lines) -> None:
    """The shipper process may write no file beyond 1.5 kB (RLIMIT_FSIZE, a real kernel limit like a full
    disk): once the checkpoint outgrows it, lines keep arriving, /healthz and /metrics say the checkpoint
    is failing, the checkpoint on disk stays whole, and it is written again once the limit is lifted."""
    import resource
    import urllib.request

    from devtools.stack.base import free_port

    (tmp_path / "logs").mkdir()
    checkpoint = tmp_path / "state" / "checkpoint.json"
    port = free_port()
    limit = 1500

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the process at the limit
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    first = Writer(tmp_path / "logs" / "a.log", corpus_lines)
    first.write(200)
    proc = _ship_process(tmp_path, raw_topic, stack, {"SLUICE_SHIP__METRICS_PORT": str(port)}, limited)

    def get(path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    try:
        _wait_for_checkpoint(checkpoint, 0, timeout_s=20)
        before = checkpoint.read_text()
        more = [Writer(tmp_path / "logs" / f"worker-{i}.log", corpus_lines) for i in range(8)]
        for w in more:
            w.write(100)  # eight more entries: the checkpoint no longer fits
        got = consume(stack, raw_topic, 200 + 800, timeout_s=20)
        assert len(got) >= 1000, "lines stopped arriving while the checkpoint could not be written"
        status, health = get("/healthz")
        assert status == 200 and "checkpoint not written" in health and "File too large" in health, health
        assert get("/readyz")[0] == 503
        metrics = get("/metrics")[1]
        assert "sluice_ship_checkpoint_failing 1.0" in metrics
        assert checkpoint.read_text() == before  # whole, and as it was
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        deadline = time.monotonic() + 10
        while "checkpoint not written" in get("/healthz")[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert get("/healthz") == (200, "ok\n")
        offsets = checkpoint_offsets(checkpoint)
        assert len(offsets) == 9 and sum(offsets.values()) == first.pos + sum(w.pos for w in more)
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=20)[0].decode(errors="replace")
    failures = [ln for ln in out.splitlines() if "cannot write checkpoint" in ln]
    assert len(failures) == 1, out  # logged once, not once a second
    assert proc.returncode == 0, out
