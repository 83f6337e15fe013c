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


def groups(texts: list[str]) -> list[list[int]]:
    """The events the merger makes of one source's ``texts``, as lists of 0-based line numbers in file order
    (an event's lines are consecutive lines of ``texts``, or interleaved with another event's)."""
    m = MultilineMerger()
    blocks = []
    for i, t in enumerate(texts):
        blocks += m.push("src", RawLine(t), i, 1000 + i)
    blocks += m.flush_all()
    out = []
    for b in sorted(blocks, key=lambda b: b.first_offset):
        nums: list[int] = []
        for text in b.texts:
            nums.append(texts.index(text, b.first_offset if not nums else nums[-1] + 1))
        out.append(nums)
    return out
