"""The marks a re-driven record carries, so that a letter that fails again is known as one.

`sluice dlq redrive` sends a letter's original bytes back with two Kafka headers: where the letter
was (``sluice-redriven-from``: ``<dlq topic>/<partition>@<offset>``) and how many times these bytes
have been re-driven (``sluice-redrives``). A stage that dead-letters such a record again copies both
into the new letter's ``headers``; the next re-drive reads the count there and stops at its limit
instead of sending the same failure round for ever.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

REDRIVEN_FROM = "sluice-redriven-from"
REDRIVES = "sluice-redrives"
MARKS = (REDRIVEN_FROM, REDRIVES)


def marks_of(headers: Iterable[tuple[str, Any]] | Mapping[str, Any] | None) -> dict[str, str]:
    """Our marks among a Kafka record's headers (a list of (name, bytes) pairs, or a mapping)."""
    if not headers:
        return {}
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out = {}
    for name, value in pairs:
        if name in MARKS and value is not None:
            out[name] = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return out


def redrives_of(letter_headers: Mapping[str, str] | None) -> int:
    """How many times a letter's original bytes have been re-driven already (0: never)."""
    try:
        return max(0, int((letter_headers or {}).get(REDRIVES, "0")))
    except ValueError:
        return 0


def marks_for(dlq_topic: str, partition: int, offset: int,
              redrives_before: int) -> list[tuple[str, str | bytes | None]]:
    """The headers of a record re-driven from the letter at ``partition``/``offset``."""
    return [(REDRIVEN_FROM, coordinates(dlq_topic, partition, offset).encode()),
            (REDRIVES, str(redrives_before + 1).encode())]


def coordinates(dlq_topic: str, partition: int, offset: int) -> str:
    return f"{dlq_topic}/{partition}@{offset}"


def carry_marks(letters: Iterable[dict[str, Any]], marks: Mapping[str, str]) -> None:
    """Copy a re-driven record's marks into the dead letters made from it (their ``headers``)."""
    if not marks:
        return
    for letter in letters:
        letter["headers"] = {**(letter.get("headers") or {}), **marks}
