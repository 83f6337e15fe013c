"""Small value types shared by the assemble stage: one decoded line, one merged block."""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCE_FIELDS = ("host", "namespace", "pod", "container", "file", "stream", "node_role", "rank")


def empty_source() -> dict:
    """A ``sluice.v1.Source`` dict with every field null."""
    return dict.fromkeys(SOURCE_FIELDS)


@dataclass(frozen=True, slots=True)
class RawLine:
    """One line as decoded from a raw record, before merging.

    ``partial`` marks a CRI ``P`` / docker json-file fragment that must be joined with the next
    line of the same source; ``index`` is the line's position inside its Kafka record (a batch
    can carry many lines), which keeps event ids unique and stable.
    """

    text: str
    file_offset: int | None = None
    ts_ms: int | None = None
    source: dict = field(default_factory=empty_source)
    labels: dict = field(default_factory=dict)
    partial: bool = False
    index: int = 0


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
    nbytes: int = 0
    prefix: str = ""

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
