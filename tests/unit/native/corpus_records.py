"""The inputs of the differential tests: every corpus file and agent record, as raw records."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import fastavro

from devtools import CORPUS_DIR
from devtools.agents.records import load
from streams.assemble.outputs import _plain
from streams.assemble.pipeline import RawRecord
from streams.contracts import parsed_schema, schema_text

REPO = Path(__file__).resolve().parents[3]
AGENTS = REPO / "tests" / "fixtures" / "agents"
# The corpus but its held-out parts (corpus/wild/test and the holdouts are never read here).
CORPUS_PARTS = ("training", "loghub", "printers", "wild/dev")
TS = 1_700_000_000_000
PLAIN_ID, LOGICAL_ID = 11, 12


@cache
def plain_raw_batch() -> dict:
    import json

    return fastavro.parse_schema(_plain(json.loads(schema_text("raw_batch"))))


def lookup(schema_id: int):  # type: ignore[no-untyped-def]
    """The registry of the tests: the RawBatch contract as the worker reads it (times as longs), and
    with its logical types (as fastavro reads it by default)."""
    if schema_id == PLAIN_ID:
        return plain_raw_batch()
    if schema_id == LOGICAL_ID:
        return parsed_schema("raw_batch")
    raise KeyError(schema_id)


def corpus_files() -> list[Path]:
    files: list[Path] = []
    for part in CORPUS_PARTS:
        files += sorted((CORPUS_DIR / part).rglob("*.log"))
    files += sorted((AGENTS / "inputs").glob("*.log"))
    return files


def corpus_sample(share: int, slot: int) -> list[Path]:
    """The corpus files whose path (relative to the repository) hashes to ``slot`` of ``share``: a fixed
    sample, the same on every run and machine, that changes only as files come and go. The tests that
    run the whole stage take one each (the corpus is too big to run through it several times in CI);
    the decoders are compared on every record of every file."""
    files = [p for p in corpus_files() if zlib.crc32(str(p.relative_to(REPO)).encode()) % share == slot]
    assert len(files) >= 5, (share, slot, files)
    return files


def raw_batch(schema_id: int, source: dict, labels: dict, lines: list[tuple[str, int | None, int | None]]) -> bytes:
    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, schema_id))
    fastavro.schemaless_writer(buf, plain_raw_batch(), {
        "source": source, "labels": labels, "sent_ts": TS,
        "lines": [{"line": t, "file_offset": o, "ts": ts} for t, o, ts in lines]})
    return buf.getvalue()


def line_records(path: Path) -> list[RawRecord]:
    """One record per line, as Filebeat-style producers send them (the line's newline kept)."""
    key = path.name.encode()
    return [RawRecord("logs.raw", 0, i, line + b"\n", key, TS + i)
            for i, line in enumerate(path.read_bytes().split(b"\n"))]


def batch_records(path: Path, per_record: int = 200) -> list[RawRecord]:
    """RawBatch records of ``per_record`` lines (sluice ship), alternately with either schema id."""
    text = path.read_bytes().decode("utf-8", "replace").split("\n")
    out = []
    source = {"host": "node-1", "file": path.name, "stream": "stdout", "node_role": "trainer", "rank": 3}
    offset = 0
    for n, start in enumerate(range(0, len(text), per_record)):
        chunk = text[start:start + per_record]
        lines = [(t.removesuffix("\r"), offset + i, TS + start + i) for i, t in enumerate(chunk)]
        offset += sum(len(t) + 1 for t in chunk)
        value = raw_batch(LOGICAL_ID if n % 2 else PLAIN_ID, source, {"project": "p", "team": "x"}, lines)
        out.append(RawRecord("logs.raw", 0, n, value, f"node-1/{path.name}".encode(), TS + n))
    return out


def agent_cases() -> list[str]:
    return sorted(p.name for p in AGENTS.iterdir() if (p / "records.jsonl").exists())


def agent_records(case: str) -> Iterator[tuple[int, list[RawRecord]]]:
    """Per partition, the records one agent really produced (tests/fixtures/agents)."""
    by_partition: dict[int, list[RawRecord]] = {}
    for r in load(AGENTS / case / "records.jsonl"):
        by_partition.setdefault(r.partition, []).append(
            RawRecord("logs.raw", r.partition, r.offset, r.value, r.key, r.timestamp_ms or TS))
    yield from sorted(by_partition.items())
