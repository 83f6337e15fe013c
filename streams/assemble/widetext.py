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

__all__ = ["wide_text"]

# (UTF-32BE's mark, 00 00 FE FF, is also Avro's magic byte and a schema id: its NULs must tell it too)
BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
# (codec, code unit width, the byte of each unit that holds an ASCII character, whether the newline's
# stray bytes precede the line, as in little-endian, or follow it)
PATTERNS = (("utf-32-le", 4, 0, True), ("utf-32-be", 4, 3, False),
            ("utf-16-le", 2, 0, True), ("utf-16-be", 2, 1, False))
SHARE = 0.9  # of the units that must read as ASCII: NUL high bytes, a low byte of ASCII but NUL
HEAD = 64  # bytes judged first: an Avro record or a UTF-8 line fails here, before the whole is read


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
