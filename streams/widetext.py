"""Records in UTF-16 or UTF-32, told by a byte-order mark or by the NULs of their ASCII characters (pure).

Windows programs and PowerShell's ``>`` write UTF-16LE with a mark; Java and .NET can be told to
write the others. An agent that cuts such a file at each 0x0A byte, as most do unless told the
encoding, sends every line with its newline's other bytes stuck to it: one NUL before the line in
UTF-16LE, one after it in UTF-16BE, three in UTF-32. Read as UTF-8, the first byte of such a line is
Avro's magic byte, and the record would be a dead letter, or an event full of NULs. Such a record is
decoded in its own encoding instead; a wide text with few ASCII characters and no mark cannot be told
from other bytes and is read as UTF-8, as before.
"""

from __future__ import annotations

import codecs

__all__ = ["WideNewlines", "wide_text"]

# (UTF-32BE's mark, 00 00 FE FF, is also Avro's magic byte and a schema id: its NULs must tell it too)
BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
# (codec, code unit width, the byte of each unit that holds an ASCII character, whether the newline's
# stray bytes precede the line, as in little-endian, or follow it)
PATTERNS = (("utf-32-le", 4, 0, True), ("utf-32-be", 4, 3, False),
            ("utf-16-le", 2, 0, True), ("utf-16-be", 2, 1, False))
SHARE = 0.9  # of the units that must read as ASCII: NUL high bytes, a low byte of ASCII but NUL
HEAD = 64  # bytes judged first: an Avro record or a UTF-8 line fails here, before the whole is read


def marked_codec(head: bytes) -> str | None:
    """The codec of a file whose first bytes are a UTF-16 or UTF-32 byte-order mark, else None (a file of UTF-32BE
    starts with its mark too, which a record cannot be told by)."""
    for bom, codec in (*BOMS, (b"\x00\x00\xfe\xff", "utf-32-be")):
        if head.startswith(bom):
            return codec
    return None


def wide_text(value: bytes) -> str | None:
    """The text of a UTF-16 or UTF-32 record (NULs dropped, as from any text), or None when it is none."""
    if not value or (value[0] not in (0, 0xFE, 0xFF) and 0 not in value[1:4]):
        return None  # the common case, in one look
    for bom, codec in BOMS:
        if value.startswith(bom):
            width = 4 if codec.startswith("utf-32") else 2
            body = value[len(bom):]
            whole = _units(body, width, not codec.endswith("be")) or (0, len(body) - len(body) % width)
            return body[whole[0]:whole[1]].decode(codec, "replace").replace("\x00", "")
    if len(value) < 4 and not value.strip(b"\x00"):
        return ""  # the rest of a wide newline: the last line of a UTF-16LE file cut at 0x0A
    # (ASCII reads alike as little-endian after its newline's NULs and as big-endian before them: a mark says which)
    for codec, width, low, leads in PATTERNS[1:2] + PATTERNS if value.startswith(b"\x00\x00\xfe\xff") else PATTERNS:
        span = _units(value, width, leads)
        if span is None or not _looks_wide(value[span[0]:min(span[0] + HEAD, span[1])], width, low):
            continue
        body = value[span[0]:span[1]]
        if _looks_wide(body, width, low):
            text = body.decode(codec, "replace").replace("\x00", "")
            return text[1:] if text.startswith("\ufeff") else text
    return None


def _units(value: bytes, width: int, leads: bool) -> tuple[int, int] | None:
    """Where ``value``'s whole code units are, without the newline's stray NULs; None when the bytes left
    over are no NULs."""
    extra = len(value) % width
    stray = value[:extra] if leads else value[len(value) - extra:]
    if stray.strip(b"\x00"):
        return None
    return (extra, len(value)) if leads else (0, len(value) - extra)


_ASCII = bytes(range(1, 0x80))


def _looks_wide(body: bytes, width: int, low: int) -> bool:
    units = len(body) // width
    if not units:
        return False
    need = SHARE * units
    if units - len(body[low::width].translate(None, _ASCII)) < need:  # the low bytes: mostly ASCII, no NUL
        return False
    return all(body[k::width].count(0) >= need for k in range(width) if k != low)


class WideNewlines:
    """A UTF-16 or UTF-32 file's lines. A file read a line at a time is cut at each 0x0A byte, as a UTF-8 file is;
    in a wide file a character may hold one (U+4E0A, U+010A ...), and the line would end inside it, the rest of it
    misaligned; and a line's ASCII reads alike in UTF-16LE after its newline's NUL and in UTF-16BE before it, so
    only the file tells its other characters' byte order. The file's encoding is told by its head (a mark, or the
    NULs of ASCII characters); a piece that reads as wide text in it goes on past a 0x0A that is no whole newline
    unit, and the line is decoded in the file's encoding. A piece that does not (a UTF-8 line appended, a line of
    few ASCII characters) ends at its 0x0A and stays bytes, decoded on its own (:func:`wide_text`), as before."""

    def __init__(self, head: bytes) -> None:
        self.width, self.little, self.codec = 0, False, ""
        marked = marked_codec(head)
        if marked is not None:
            self.width, self.little, self.codec = (4 if "32" in marked else 2), marked.endswith("le"), marked
        else:
            for codec, width, low, leads in PATTERNS:
                unit_head = head[:len(head) - len(head) % width]
                if len(unit_head) >= 2 * width and _looks_wide(unit_head, width, low):
                    self.width, self.little, self.codec = width, leads, codec
                    break
        self.lead = 0  # the NULs the next piece starts with that are the last newline's (little-endian)

    def _body(self, piece: bytes) -> bytes | None:
        """The piece without the last newline's NULs, when it reads as wide text in the file's encoding."""
        lead = self.lead if not piece[:self.lead].strip(b"\x00") else 0
        body = piece[lead:]
        return body if _has_wide_ascii(body, self.width, 0 if self.little else self.width - 1) else None

    def goes_on(self, head: bytes, length: int, tail: bytes, after: bytes) -> bool:
        """Whether the 0x0A that ends a line read so far (its first bytes ``head``, ``length`` bytes in all, its
        last bytes ``tail``) is inside a character: the line goes on in ``after``, the next piece."""
        body = self._body(head) if self.width and tail.endswith(b"\n") else None
        if body is None:
            return False
        width = self.width
        at = length - (len(head) - len(body)) - 1  # where the 0x0A is in the line's units
        # Where a 0x0A is in its unit tells a character for sure: not the first byte of a little-endian unit (U+0AXX),
        # the last of a big-endian one whose others are not NUL (U+XX0A). A whole newline unit ends the line.
        if self.little:
            if at % width:
                return True
            if not after[:width - 1].strip(b"\x00"):
                return False
        elif at % width == width - 1:
            return bool(tail[-width:-1].strip(b"\x00"))
        if after.startswith((b"\xff\xfe", b"\xfe\xff")):
            return False
        # Else (U+XX0A little-endian, or a 0x0A between units) the line goes on into wide text (its ASCII, or its own
        # newline, written wide), not into a line of UTF-8 or one with its own mark: a writer may end wide text with a
        # byte 0x0A. It goes on too where the rest, with no ASCII, reads as no line of its own (wide from its first
        # byte, or UTF-8): Chinese after U+4E0A '上' ('文件上传失败' broke into misread pieces, one event each).
        low = 0 if self.little else width - 1
        return _has_wide_ascii(after[(width - (at + 1) % width) % width:], width, low, 1) or not (
            _has_wide_ascii(after, width, low, 1) or _utf8(after[:HEAD_BYTES]))

    def line(self, raw: bytes, ended: bool, whole: bool = True) -> bytes:
        """The line ``raw`` (its newline's 0x0A taken off; ``ended``: it had one; ``whole``: not cut) as UTF-8
        when it reads as wide text in the file's encoding, else as it is."""
        body = self._body(raw) if self.width else None
        self.lead = self.width - 1 if self.width and self.little and ended else 0
        if body is None:
            return raw
        stray = self.width - 1
        if ended and whole and not self.little and not body[len(body) - stray:].strip(b"\x00"):
            body = body[:len(body) - stray]  # the newline unit's NULs, before its 0x0A
        body = body[:len(body) - len(body) % self.width]
        text = body.decode(self.codec, "replace")
        return (text[1:] if text.startswith("\ufeff") else text).replace("\x00", "").encode("utf-8", "surrogatepass")


JOIN_UNITS = 256  # units of a line's head judged
HEAD_BYTES = 4 * JOIN_UNITS + 3  # the bytes of a line's head that hold them, after a newline's NULs
JOIN_SHARE = 0.25  # of a piece's units that must be ASCII characters in the wide form to go on past a 0x0A


def _utf8(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a piece, maybe cut inside a character) reads as UTF-8 text: no NUL,
    no invalid sequence."""
    if 0 in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head)
    except UnicodeDecodeError:
        return False
    return True


def _has_wide_ascii(body: bytes, width: int, low: int, least: int = 2) -> bool:
    """Whether a quarter of the units of ``body``'s head are ASCII characters written wide (the character's
    byte, NULs): UTF-8 text has no NULs; a wide line with a time or a level has them, whatever else it holds."""
    units = min(len(body) // width, JOIN_UNITS)
    if units < least:
        return False
    others = [k for k in range(width) if k != low]
    ascii_units = sum(1 for i in range(0, units * width, width)
                      if 0 < body[i + low] < 0x80 and not any(body[i + k] for k in others))
    return ascii_units >= JOIN_SHARE * units
