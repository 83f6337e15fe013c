"""Small value types shared by the assemble stage: one decoded line, one merged block."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

SOURCE_FIELDS = ("host", "namespace", "pod", "container", "file", "stream", "node_role", "rank")


def empty_source() -> dict:
    """A ``sluice.v1.Source`` dict with every field null."""
    return dict.fromkeys(SOURCE_FIELDS)


def saved(line: RawLine | Block) -> dict:
    """A line's or block's fields as the saved state holds them. The envelope's level and figures are written only
    where an agent gave them: the native state reader knows the other fields and leaves a state that holds these to
    the Python core, so the common state keeps its fast path and an event open over a restart keeps them."""
    d = dataclasses.asdict(line)
    if d["level"] is None:
        del d["level"]
    if d["fields"] is None:
        del d["fields"]
    return d


@dataclass(frozen=True, slots=True)
class RawLine:
    """One line as decoded from a raw record, before merging.

    ``partial`` marks a CRI ``P`` / docker json-file fragment that must be joined with the next
    line of the same source; ``index`` is the line's position inside its Kafka record (a batch
    can carry many lines), which keeps event ids unique and stable. ``level``: the one an agent's
    envelope says the line was written at (journald's ``PRIORITY``), for a line whose text names none;
    ``fields``: training figures the envelope carries beside the line (GELF's additional fields).
    """

    text: str
    file_offset: int | None = None
    ts_ms: int | None = None
    source: dict = field(default_factory=empty_source)
    labels: dict = field(default_factory=dict)
    partial: bool = False
    index: int = 0
    level: str | None = None
    fields: dict | None = None


def utf8_len(text: str) -> int:
    """Bytes of ``text`` in UTF-8, what Kafka and the stores count (``isascii`` is O(1) in CPython)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def utf8_prefix(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 fits in ``limit`` bytes (never half a character)."""
    if text.isascii():
        return text[:limit]
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


@dataclass(slots=True)
class Block:
    """Lines of one source merged into one event (still unparsed).

    Offsets are Kafka offsets of the raw topic; file offsets come from the agent when it sends them.
    """

    source_id: str
    texts: list[str]
    first_offset: int
    last_offset: int
    first_index: int
    first_file_offset: int | None
    last_file_offset: int | None
    first_ts_ms: int
    last_ts_ms: int
    source: dict
    labels: dict
    kind: str | None = None
    truncated: bool = False
    nbytes: int = 0  # UTF-8 bytes of the texts and the newlines between them (about)
    prefix: str = ""
    level: str | None = None  # the first line's envelope's (RawLine.level)
    fields: dict | None = None  # ... and its figures (RawLine.fields)

    @property
    def message(self) -> str:
        return "\n".join(self.texts)


@dataclass(frozen=True, slots=True)
class Output:
    """One output of the stage: ``kind`` is "event" | "metric" | "dead_letter", ``value`` its contract's dict."""

    kind: str
    topic: str
    key: bytes | None
    value: dict
    body: bytes | None = None  # the value's Avro body, when the Assembler was given its encoder
