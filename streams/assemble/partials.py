"""Joining CRI ``P`` / docker partial fragments per source into whole lines.

A runtime splits a long line into fragments (CRI ``P`` records, docker json-file ``log`` values without
their newline) and the last fragment ends it. The last fragment of a container that died never comes:
:meth:`PartialJoiner.due` releases a line whose source has been quiet for the idle timeout, as it
stands, like the merger's idle flush does for an open block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from streams.assemble.lines import RawLine

# The bytes of a character a runtime cut between two fragments, as the decoder keeps them
# (``decode.split_char_edges``): one surrogate escape a byte.
_ESCAPED = re.compile("[\udc80-\udcff]+")


def starts_cut(text: str) -> bool:
    """Whether ``text`` starts with the escaped end of a character cut from the fragment before it."""
    return "\udc80" <= text[:1] <= "\udcbf"


def _cut(text: str) -> bool:
    return "\udc80" <= text[:1] <= "\udcbf" or "\udc80" <= text[-1:] <= "\udcff"


def _decoded(m: re.Match[str]) -> str:
    return bytes(ord(c) - 0xDC00 for c in m.group()).decode("utf-8", "replace")


def whole_text(text: str) -> str:
    """``text`` with its escaped bytes decoded: a character cut between fragments joined again, a byte
    that has no character to join U+FFFD."""
    return _ESCAPED.sub(_decoded, text)


@dataclass(slots=True)
class HeldLine:
    """The fragments of one source's line so far."""

    parts: list[str]
    first: RawLine  # the first fragment: its file offset, time, source and labels are the line's
    offset: int  # Kafka offset of the first fragment
    size: int  # characters held
    seen_ms: int = 0  # arrival time of the newest fragment (stream time)

    def line(self) -> RawLine:
        f = self.first
        text = "".join(self.parts)
        if any(_cut(p) for p in self.parts):
            text = whole_text(text)
        return RawLine(text, f.file_offset, f.ts_ms, f.source, f.labels, False, f.index, f.level, f.fields)


class PartialJoiner:
    """Joins fragments per source, bounded in characters.

    ``push`` returns the completed line, or None while the line is still partial. A line longer than
    ``max_bytes`` is released as it is rather than growing without bound. A line that starts with the
    end of a cut character (:func:`starts_cut`) goes through ``push`` even with no fragment held.
    """

    def __init__(self, max_bytes: int = 1 << 20) -> None:
        self.max_bytes = max_bytes
        self.held: dict[str, HeldLine] = {}

    def __bool__(self) -> bool:
        return bool(self.held)

    def push(self, sid: str, line: RawLine, offset: int, arrival_ms: int = 0) -> tuple[RawLine, int] | None:
        held = self.held.get(sid)
        if held is None:
            if not line.partial:
                return (replace(line, text=whole_text(line.text)) if starts_cut(line.text) else line), offset
            held = HeldLine([], line, offset, 0)
        held.parts.append(line.text)
        held.size += len(line.text)
        held.seen_ms = arrival_ms
        if line.partial and held.size < self.max_bytes:
            self.held[sid] = held
            return None
        self.held.pop(sid, None)
        return held.line(), held.offset

    def due(self, now_ms: int, idle_ms: int) -> list[tuple[str, RawLine, int, int]]:
        """Release the lines whose newest fragment arrived ``idle_ms`` or more before ``now_ms``:
        (source, line, offset of its first fragment, arrival of its newest), oldest first."""
        ready = sorted((h.offset, sid) for sid, h in self.held.items() if h.seen_ms + idle_ms <= now_ms)
        out = []
        for _offset, sid in ready:
            h = self.held.pop(sid)
            out.append((sid, h.line(), h.offset, h.seen_ms))
        return out

    def drain(self) -> list[tuple[str, RawLine, int]]:
        """Release every held line (end of input)."""
        return [(sid, line, off) for sid, line, off, _seen in self.due(1 << 62, 0)]

    def drop(self, sid: str) -> tuple[RawLine, int] | None:
        """Forget the source's held line; returns it (and its first offset) if there was one."""
        held = self.held.pop(sid, None)
        return None if held is None else (held.line(), held.offset)

    def oldest_offset(self) -> int | None:
        return min((h.offset for h in self.held.values()), default=None)
