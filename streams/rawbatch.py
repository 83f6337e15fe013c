"""Build ``sluice.v1.RawBatch`` records from files: the pure half of `sluice produce` and `sluice ship`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

RawBatch = dict[str, Any]


def source_key(source: dict[str, Any]) -> bytes:
    """The Kafka key of logs.raw: one source's lines share a key, hence a partition and an order."""
    parts = [source.get(k) or "" for k in ("host", "namespace", "pod", "container", "file", "stream")]
    return "/".join(str(p) for p in parts).encode()


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(byte offset, line) for every line, newline and CR stripped, invalid UTF-8 replaced."""
    offset = 0
    with path.open("rb") as fh:
        for raw in fh:
            text = raw.rstrip(b"\n")
            if text.endswith(b"\r"):
                text = text[:-1]
            yield offset, text.decode("utf-8", errors="replace")
            offset += len(raw)


def batches_from_file(
    path: Path,
    source: dict[str, Any],
    labels: dict[str, str],
    batch_lines: int,
    now_ms: int,
) -> Iterator[RawBatch]:
    lines: list[dict[str, Any]] = []
    for offset, text in read_lines(path):
        lines.append({"line": text, "file_offset": offset, "ts": now_ms})
        if len(lines) >= batch_lines:
            yield {"source": source, "labels": labels, "lines": lines, "sent_ts": now_ms}
            lines = []
    if lines:
        yield {"source": source, "labels": labels, "lines": lines, "sent_ts": now_ms}


def default_source(path: Path, host: str = "demo-node-0") -> dict[str, Any]:
    return {
        "host": host, "namespace": None, "pod": None, "container": None,
        "file": str(path.name), "stream": "stdout", "node_role": "trainer", "rank": None,
    }
