"""Test helpers for the shipper: a recording sender, and a Kafka proxy on loopback that a test can
cut and restore.

``RecordingSender`` stands in for the Kafka producer: it encodes with the real RawBatch contract
(fastavro, no registry) and holds each record until the test delivers or fails it.

A plain TCP proxy is not enough: the broker's metadata names its advertised listener, and the
client would connect there directly, around the proxy. This one rewrites the broker port in
Metadata responses to its own, so every connection of the client goes through it; ``stop()`` then
cuts the client off from Kafka completely and ``start()`` lets it back in on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from pathlib import Path
from typing import Any

from streams.ship.checkpoint import CheckpointStore
from streams.ship.encoding import RawBatchContract
from streams.ship.labels import Origin, SourceBuilder
from streams.ship.sender import DeliveryCallback, DeliveryError, SendError
from streams.ship.settings import ShipSettings
from streams.ship.shipper import Shipper


class FakeClock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def make_shipper(tmp_path: Path, sources: SourceBuilder | None = None, store: CheckpointStore | None = None,
                 **settings: Any) -> tuple[Shipper, RecordingSender, FakeClock]:
    """A shipper of ``tmp_path/*.log`` on a fake clock, sending every second, checkpointing at every tick."""
    conf: dict[str, Any] = {"paths": [str(tmp_path / "*.log")], "checkpoint_path": tmp_path / "ck.json",
                            "interval_s": 1.0, "stagger_window_s": 0, "checkpoint_interval_s": 0,
                            "retry_backoff_s": 0.5, **settings}
    ship = ShipSettings(**conf)
    sender, clock = RecordingSender(), FakeClock()
    sources = sources or SourceBuilder(Origin("node-1", None, None, None, {"project": "p"}), ship.path_pattern)
    shipper = Shipper(ship, sender, store or CheckpointStore(ship.checkpoint_path), sources, clock)
    return shipper, sender, clock


class RecordingSender:
    """A ``Sender`` that encodes for real and delivers when told."""

    def __init__(self) -> None:
        self.contract = RawBatchContract()
        self.pending: list[tuple[bytes, bytes, DeliveryCallback]] = []
        self.delivered: list[dict[str, Any]] = []  # decoded values, in delivery order
        self.registry_down = False  # encode raises SendError, as KafkaSender does when the registry is away
        self.refuse_over: int | None = None  # deliver() fails records bigger than this as too large

    def encode(self, value: dict[str, Any]) -> bytes:
        if self.registry_down:
            raise SendError("cannot serialise a RawBatch (registry: connection refused)")
        return self.contract.encode(value)

    def produce(self, key: bytes, payload: bytes, on_delivery: DeliveryCallback) -> None:
        self.pending.append((key, payload, on_delivery))

    def poll(self, timeout_s: float) -> None:
        pass

    def flush(self, timeout_s: float) -> int:
        return len(self.pending)

    def deliver(self, fail: bool = False) -> None:
        pending, self.pending = self.pending, []
        for _key, payload, callback in pending:
            if fail:
                callback(DeliveryError("broker away"))
            elif self.refuse_over is not None and len(payload) > self.refuse_over:
                callback(DeliveryError("Broker: Message size too large", too_large=True))
            else:
                self.delivered.append(self.contract.decode(payload))
                callback(None)

    def lines(self) -> list[dict[str, Any]]:
        return [ln for v in self.delivered for ln in v["lines"]]

    def offsets(self) -> list[int]:
        return [ln["file_offset"] for ln in self.lines()]

METADATA = 3
FIRST_FLEXIBLE_METADATA = 9


def _uvarint(buf: bytes | bytearray, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _skip_tags(buf: bytes | bytearray, pos: int) -> int:
    count, pos = _uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        pos += size
    return pos


def rewrite_metadata_ports(frame: bytearray, version: int, old_port: int, new_port: int) -> None:
    """In a Metadata response frame (without its size prefix), replace the brokers' port in place."""
    flexible = version >= FIRST_FLEXIBLE_METADATA
    pos = 4  # correlation id
    if flexible:
        pos = _skip_tags(frame, pos)
    if version >= 3:
        pos += 4  # throttle_time_ms
    if flexible:
        n, pos = _uvarint(frame, pos)
        n -= 1
    else:
        (n,), pos = struct.unpack_from(">i", frame, pos), pos + 4
    for _ in range(max(n, 0)):
        pos += 4  # node_id
        if flexible:
            length, pos = _uvarint(frame, pos)
            pos += length - 1
        else:
            (length,) = struct.unpack_from(">h", frame, pos)
            pos += 2 + length
        (port,) = struct.unpack_from(">i", frame, pos)
        if port == old_port:
            struct.pack_into(">i", frame, pos, new_port)
        pos += 4
        if version >= 1:  # rack, nullable
            if flexible:
                length, pos = _uvarint(frame, pos)
                pos += max(length - 1, 0)
            else:
                (length,) = struct.unpack_from(">h", frame, pos)
                pos += 2 + max(length, 0)
        if flexible:
            pos = _skip_tags(frame, pos)


def _read_frame(sock: socket.socket) -> bytearray | None:
    head = _read_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    return _read_exact(sock, size)


def _read_exact(sock: socket.socket, n: int) -> bytearray | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class KafkaProxy:
    def __init__(self, upstream_host: str, upstream_port: int, port: int = 0) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = port
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> KafkaProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Close the port and every connection: Kafka is unreachable until ``start()``."""
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets |= {client, server}
            pending: dict[int, int] = {}  # correlation id -> Metadata version
            threading.Thread(target=self._requests, args=(client, server, pending), daemon=True).start()
            threading.Thread(target=self._responses, args=(server, client, pending), daemon=True).start()

    def _requests(self, src: socket.socket, dst: socket.socket, pending: dict[int, int]) -> None:
        with contextlib.suppress(OSError):
            while (frame := _read_frame(src)) is not None:
                api_key, version, correlation = struct.unpack_from(">hhi", frame, 0)
                if api_key == METADATA:
                    pending[correlation] = version
                dst.sendall(struct.pack(">i", len(frame)) + frame)
        self._close(src, dst)

    def _responses(self, src: socket.socket, dst: socket.socket, pending: dict[int, int]) -> None:
        with contextlib.suppress(OSError):
            while (frame := _read_frame(src)) is not None:
                (correlation,) = struct.unpack_from(">i", frame, 0)
                version = pending.pop(correlation, None)
                if version is not None:
                    rewrite_metadata_ports(frame, version, self.upstream[1], self.port)
                dst.sendall(struct.pack(">i", len(frame)) + frame)
        self._close(src, dst)

    def _close(self, *socks: socket.socket) -> None:
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
            with self._lock:
                self._sockets.discard(s)
