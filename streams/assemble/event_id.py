"""Deterministic event ids: the same lines always get the same id, so a replay overwrites.

With the agent's file offset: a hash of the source identity and the first line's file offset
(stable even if the raw topic is re-partitioned). Without it: ``topic/partition/offset`` of the
first line, plus ``:index`` when the line was not the first of a batched record.
"""

from __future__ import annotations

import hashlib


def event_id(source_id: str, first_file_offset: int | None, topic: str, partition: int, first_offset: int,
             *, first_index: int = 0) -> str:
    if first_file_offset is not None:
        return hashlib.blake2b(f"{source_id}\x00{first_file_offset}".encode(), digest_size=16).hexdigest()
    if first_index:
        return f"{topic}/{partition}/{first_offset}:{first_index}"
    return f"{topic}/{partition}/{first_offset}"
