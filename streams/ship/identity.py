"""File identity and rotation detection (pure: callers pass what ``stat`` and a head read returned).

A file is identified by ``(st_dev, st_ino)`` plus a fingerprint of its first bytes. The inode alone
is not enough: after a delete, the filesystem hands the same inode to the next new file, and a
copytruncate keeps the inode while replacing the content. The fingerprint covers the first
``FINGERPRINT_BYTES`` (fewer while the file is shorter; it is extended as the file grows).
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass

FINGERPRINT_BYTES = 256


@dataclass(frozen=True, slots=True)
class Fingerprint:
    length: int  # how many head bytes the digest covers (0 for an empty file)
    digest: str

    @classmethod
    def of(cls, head: bytes) -> Fingerprint:
        head = head[:FINGERPRINT_BYTES]
        return cls(len(head), hashlib.blake2b(head, digest_size=8).hexdigest())

    def matches(self, head: bytes) -> bool:
        """Does a file whose first bytes are ``head`` start with the bytes this print was taken of?"""
        if len(head) < self.length:
            return False
        return hashlib.blake2b(head[: self.length], digest_size=8).hexdigest() == self.digest

    def complete(self) -> bool:
        return self.length >= FINGERPRINT_BYTES


@dataclass(frozen=True, slots=True)
class Observation:
    """What the filesystem says about a file now: ``stat`` plus its first bytes."""

    dev: int
    ino: int
    size: int
    head: bytes  # the first min(size, FINGERPRINT_BYTES) bytes


class Change(enum.Enum):
    SAME = "same"  # nothing new
    GREW = "grew"  # new bytes after the read position
    TRUNCATED = "truncated"  # same inode, content restarted: copytruncate, or truncate and rewrite
    REPLACED = "replaced"  # the path now names another file: rename-and-create, or delete and create


def classify(dev: int, ino: int, fingerprint: Fingerprint, read_pos: int, now: Observation) -> Change:
    """How a tracked file (identity, bytes read so far) relates to what is on disk now."""
    if (now.dev, now.ino) != (dev, ino):
        return Change.REPLACED
    # Shorter than what we read, or different first bytes (truncated and already rewritten past our
    # position, or the inode reused by a new file): new content under the same inode.
    if now.size < read_pos or not fingerprint.matches(now.head):
        return Change.TRUNCATED
    return Change.GREW if now.size > read_pos else Change.SAME


def is_same_file(dev: int, ino: int, fingerprint: Fingerprint, now: Observation) -> bool:
    return (now.dev, now.ino) == (dev, ino) and fingerprint.matches(now.head)


def is_copy_of(fingerprint: Fingerprint, min_size: int, now: Observation) -> bool:
    """Could ``now`` be a copytruncate copy of a file we had read ``min_size`` bytes of?"""
    return fingerprint.length > 0 and now.size >= min_size and fingerprint.matches(now.head)


# Offsets sent downstream: the byte offset in the file plus the file's generation at its path.
# Every new file at a path (rotation, copytruncate) gets the next generation, so offsets of one
# source never repeat: event ids derived from (source, file_offset) stay unique across rotations.
# Generation 0, the first file ever seen at a path, sends plain byte offsets.
GENERATION_SHIFT = 40  # 1 TiB per file; 2^23 generations fit in Avro's signed long
MAX_GENERATION = (2**63 - 1) >> GENERATION_SHIFT


def stream_offset(generation: int, byte_offset: int) -> int:
    return (generation << GENERATION_SHIFT) | byte_offset


def generation_base(generation: int) -> int | None:
    """What a file's byte offsets are added to; None past the last generation a long can carry
    (its lines are then sent without file offsets rather than with another file's)."""
    return stream_offset(generation, 0) if 0 <= generation <= MAX_GENERATION else None


def split_stream_offset(file_offset: int) -> tuple[int, int]:
    """(generation, byte offset) of a ``file_offset`` sent by the shipper."""
    return file_offset >> GENERATION_SHIFT, file_offset & ((1 << GENERATION_SHIFT) - 1)
