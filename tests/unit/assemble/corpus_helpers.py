"""Helpers for the assemble tests: the real-log corpus lives in the repository, in ``corpus/``."""

from __future__ import annotations

from pathlib import Path

from devtools import CORPUS_DIR
from streams.assemble.pipeline import parse_files

CORPUS = CORPUS_DIR
TRAINING = CORPUS / "training"
LOGHUB = CORPUS / "loghub"
TS_2023 = 1_690_000_000_000  # 2023-07-22: the "producer time" used where a line has none


def lines(name: str, first: int, last: int) -> list[str]:
    """Lines ``first``..``last`` (1-based, inclusive) of a training corpus file, without newlines."""
    text = (TRAINING / name).read_bytes().decode("utf-8")
    return text.split("\n")[first - 1:last]


def events(name: str, ts: int = TS_2023, include_metrics: bool = True) -> list[dict]:
    return list(parse_files([TRAINING / name], default_ts_ms=ts, include_metrics=include_metrics))


def only_events(evs: list[dict]) -> list[dict]:
    return [e for e in evs if "message" in e]


def only_metrics(evs: list[dict]) -> list[dict]:
    return [e for e in evs if "message" not in e]


def block_at(evs: list[dict], first_line: int) -> dict:
    """The event whose first line is file line ``first_line`` (offline mode: offset = line number)."""
    hits = [e for e in evs if e["raw"]["first_offset"] == first_line]
    assert len(hits) == 1, f"no single event starts at line {first_line}: {len(hits)}"
    return hits[0]



def parsed_lines(tmp_path: Path, lines: tuple[str, ...], read_ms: int) -> list[dict]:
    """The events and metric points ``sluice parse`` makes of ``lines`` written to a file and read at
    ``read_ms``; dead letters left out."""
    path = tmp_path / "x.log"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return [o for o in parse_files([path], default_ts_ms=read_ms) if o.get("kind") != "dead_letter"]
