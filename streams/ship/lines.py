"""Bytes read from a file into complete lines with their byte offsets (pure).

A line is complete at its newline. The bytes after the last newline are held as a partial line
until the rest arrives, or until the caller decides it has waited long enough (``flush``): then it
is sent as is, and whatever is appended to it later starts a new line with its own offset.
Lines longer than ``max_line_bytes`` are cut into pieces, each a line with its own offset.
"""

from __future__ import annotations

from streams.widetext import wide_text

# (byte offset of the line, byte offset just past it including its newline, text).
# Text has its newline and one trailing CR removed; invalid UTF-8 is replaced by U+FFFD; a line of UTF-16 or
# UTF-32 is decoded as such.
Line = tuple[int, int, str]


class LineSplitter:
    """``codec``: a file that starts with a byte-order mark (:func:`streams.widetext.marked_codec`) is cut at its
    newline's code unit only, at a whole unit's offset: in UTF-16 and UTF-32 a character's own bytes can hold 0x0A
    (上 is U+4E0A), and a cut there would ship both halves garbled."""

    def __init__(self, offset: int, max_line_bytes: int, codec: str | None = None) -> None:
        self.partial = b""
        self.partial_start = offset  # offset of the first byte not yet returned as a line
        self.codec = codec
        self.newline = "\n".encode(codec) if codec else b"\n"
        self.width = len(self.newline)
        # (pieces of a long line end on whole code units)
        self.max_line_bytes = max(self.width, max_line_bytes - max_line_bytes % self.width)

    @property
    def next_offset(self) -> int:
        """Offset just past the bytes fed so far."""
        return self.partial_start + len(self.partial)

    def feed(self, chunk: bytes) -> list[Line]:
        data = self.partial + chunk if self.partial else chunk
        pieces = data.split(b"\n") if self.codec is None else self._wide_pieces(data)
        tail = pieces.pop()
        off = self.partial_start
        out: list[Line] = []
        limit = self.max_line_bytes
        for raw in pieces:
            end = off + len(raw) + self.width
            if len(raw) > limit:
                out += self._cut(raw, off, end)
            else:
                out.append((off, end, self._text(raw, off)))
            off = end
        if len(tail) > limit:
            keep = len(tail) % limit or limit
            whole = tail[: len(tail) - keep]
            out += self._cut(whole, off, off + len(whole))
            off += len(whole)
            tail = tail[len(whole):]
        self.partial = tail
        self.partial_start = off
        return out

    def flush(self) -> list[Line]:
        """The partial line as a line of its own (called when it has waited long enough)."""
        if not self.partial:
            return []
        raw, start = self.partial, self.partial_start
        self.partial = b""
        self.partial_start = start + len(raw)
        return [(start, start + len(raw), self._text(raw, start))]

    def reset(self, offset: int) -> None:
        self.partial = b""
        self.partial_start = offset

    def _cut(self, raw: bytes, off: int, end: int) -> list[Line]:
        limit = self.max_line_bytes
        out: list[Line] = []
        for i in range(0, len(raw), limit):
            piece = raw[i: i + limit]
            start = off + i
            last = i + limit >= len(raw)
            out.append((start, end if last else start + len(piece), self._text(piece, start)))
        return out

    def _wide_pieces(self, data: bytes) -> list[bytes]:
        """``data`` split at the newlines that are whole code units (``partial_start`` is a unit's offset)."""
        nl, width, base = self.newline, self.width, self.partial_start
        pieces: list[bytes] = []
        start = 0
        at = data.find(nl)
        while at >= 0:
            if (base + at) % width:
                at = data.find(nl, at + 1)
                continue
            pieces.append(data[start:at])
            start = at + width
            at = data.find(nl, start)
        pieces.append(data[start:])
        return pieces

    def _text(self, raw: bytes, offset: int) -> str:
        if self.codec is None:
            return _text(raw)
        if offset == 0:
            raw = raw[self.width:] if raw.startswith("\ufeff".encode(self.codec)) else raw
        text = raw.decode(self.codec, errors="replace")
        return text[:-1] if text.endswith("\r") else text


def _text(raw: bytes) -> str:
    # A line of a UTF-16 or UTF-32 file (Windows' services, PowerShell's ">"), cut at its 0x0A byte with the
    # newline's NULs beside it, is decoded in its own encoding: read as UTF-8 its mark and every character past
    # ASCII would turn to U+FFFD before the worker could tell (streams/widetext.py).
    wide = wide_text(raw)
    if wide is not None:
        return wide[:-1] if wide.endswith("\r") else wide
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")
