"""Helpers for tests of the multiline merger."""

from __future__ import annotations

from streams.assemble.lines import RawLine
from streams.assemble.merger import MultilineMerger


def spans(texts: list[str]) -> list[tuple[int, int]]:
    """The (first, last) line index of each event one source's ``texts`` become, in order."""
    m = MultilineMerger()
    blocks = []
    for i, t in enumerate(texts):
        blocks += m.push("src", RawLine(t), i, 0)
    blocks += m.flush_all()
    return sorted((b.first_offset, b.last_offset) for b in blocks)
