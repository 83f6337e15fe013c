"""A node shipper in the fault run: ``sluice ship`` tails a directory holding a corpus file under an
ordinary name and another under a poison one (``rank99999999999.log``: a rank no Avro int holds), and
everything it ships must come out like the rest: every event once, whole, nothing dead-lettered.

The shipper picks its own batches and source fields, so the events of a shipped file are checked by
their messages in file order (from the same assembler run offline over the file), not by their ids.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.faults.burst import BurstBuilder, corpus_files
from devtools.faults.check import SHIPPED_HOST, Figures, cold_events, es_documents
from streams.config import Settings

SHIP_HOST = SHIPPED_HOST
NAMES = ("rank0.log", "rank99999999999.log")  # an ordinary file, and one whose rank overflows an Avro int


@dataclass
class ShippedFiles:
    directory: Path
    files: dict[str, Path] = field(default_factory=dict)  # shipped path -> the corpus file it copies
    expected: dict[str, list[str]] = field(default_factory=dict)  # shipped path -> messages in file order

    def write(self, builder: BurstBuilder) -> ShippedFiles:
        self.directory.mkdir(parents=True, exist_ok=True)
        sources = corpus_files(kinds=("training",))[-len(NAMES):]
        for name, source in zip(NAMES, sources, strict=True):
            shipped = self.directory / name
            shutil.copyfile(source, shipped)
            self.files[str(shipped)] = source
            self.expected[str(shipped)] = builder.messages_in_file_order(shipped, SHIP_HOST)
        return self

    def env(self, settings: Settings) -> dict[str, str]:
        project = settings.routing.default_project
        return {
            "SLUICE_SHIP__PATHS": json.dumps([str(self.directory / "*.log")]),
            "SLUICE_SHIP__CHECKPOINT_PATH": str(self.directory.parent / "ship-checkpoint.json"),
            "SLUICE_SHIP__NODE_NAME": SHIP_HOST,
            "SLUICE_SHIP__LABELS": json.dumps({"project": project, "task_id": "shipped", "task_type": "pretrain"}),
            "SLUICE_SHIP__INTERVAL_S": "1", "SLUICE_SHIP__STAGGER_WINDOW_S": "0", "SLUICE_SHIP__METRICS_PORT": "0",
        }

    def lines(self) -> int:
        return sum(len(Path(p).read_bytes().splitlines()) for p in self.files)


def check_shipped(settings: Settings, shipped: ShippedFiles, fig: Figures) -> None:
    """Each shipped file's events, in Elasticsearch and in cold objects, against the expected messages."""
    project = settings.routing.default_project
    docs = es_documents(settings, f"sluice-logs-{project}-*", ["message", "source.host", "source.file", "raw"])
    _, records = cold_events(settings, project)
    for path, expected in shipped.expected.items():
        fig.events_checked += len(expected)
        stored = [d for d in docs.values() if (d.get("source") or {}).get("file") == path]
        _compare(fig, path, "Elasticsearch", expected, _in_file_order(stored), lost="lost_es")
        cold = [r for r in records if r.get("host") == SHIP_HOST and r.get("file") == path]
        _compare(fig, path, "cold", expected, _in_file_order(cold), lost="lost_cold")


def _in_file_order(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in sorted(events, key=lambda e: (e.get("raw") or {}).get("first_file_offset") or 0)]


def _compare(fig: Figures, path: str, where: str, expected: list[str], got: list[str], lost: str) -> None:
    want, have = Counter(expected), Counter(got)
    missing, extra = want - have, have - want
    setattr(fig, lost, getattr(fig, lost) + sum(missing.values()))
    if where == "cold":
        fig.duplicated_cold += sum(n for m, n in extra.items() if m in want)
    fig.split += sum(n for m, n in extra.items() if m not in want)
    for message in list(missing)[:2]:
        fig.example(f"shipped {Path(path).name}: not in {where}: {message[:100]!r}", first=True)
    for message in list(extra)[:2]:
        fig.example(f"shipped {Path(path).name}: {where} holds {message[:100]!r} once too often or cut", first=True)
