"""The checkpoint: for each file, its identity, path, generation and acknowledged offset.

The document is JSON, written atomically (tmp file, fsync, rename, fsync of the directory) so that
a crash at any instant leaves either the old or the new checkpoint, never a torn one. Offsets in it
were acknowledged by Kafka: resuming from them loses nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from streams.errors import SluiceError
from streams.ship.identity import Fingerprint

VERSION = 2  # 2 added each file's last seen size; version 1 documents are read as well
READABLE_VERSIONS = (1, 2)


class CheckpointError(SluiceError):
    """The checkpoint file is unreadable or cannot be written."""


@dataclass(frozen=True, slots=True)
class Entry:
    dev: int
    ino: int
    fp_len: int
    fp: str
    path: str  # where the file was found (it may since have been renamed)
    generation: int
    offset: int  # bytes acknowledged by Kafka
    size: int = -1  # the file's size when last seen (-1: unknown, version 1): a file gone at restart lost size - offset

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.fp_len, self.fp)


@dataclass(slots=True)
class Checkpoint:
    entries: list[Entry] = field(default_factory=list)
    # The highest generation ever used per path, kept after its entries are gone, so that a file
    # appearing at the path later never reuses a generation (hence never reuses offsets).
    generations: dict[str, int] = field(default_factory=dict)

    def next_generation(self, path: str) -> int:
        gen = self.generations.get(path, -1) + 1
        self.generations[path] = gen
        return gen

    def to_json(self) -> str:
        doc = {"version": VERSION, "files": [asdict(e) for e in self.entries], "generations": self.generations}
        return json.dumps(doc, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Checkpoint:
        doc: dict[str, Any] = json.loads(text)
        if doc.get("version") not in READABLE_VERSIONS:
            raise CheckpointError(f"checkpoint version {doc.get('version')!r} is not one of {READABLE_VERSIONS}")
        entries = [Entry(**e) for e in doc.get("files", [])]
        return cls(entries, {str(k): int(v) for k, v in doc.get("generations", {}).items()})


class CheckpointStore:
    """Reads and atomically writes the checkpoint file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Checkpoint | None:
        """The saved checkpoint, or None when there is none yet (first start on this node)."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None
        try:
            return Checkpoint.from_json(text)
        except (ValueError, TypeError, KeyError) as exc:
            raise CheckpointError(
                f"checkpoint {self.path} is unreadable ({exc}); move it away to start over "
                "(files are then shipped again from the beginning, with the same offsets)"
            ) from exc

    def save(self, checkpoint: Checkpoint) -> None:
        data = checkpoint.to_json().encode()
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(data)
                while view:  # a filling disk (or a file size limit) writes short before it fails
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            tmp.replace(self.path)
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)  # the rename itself must survive a power cut
            finally:
                os.close(dfd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise CheckpointError(f"cannot write checkpoint {self.path}: {exc}") from exc
