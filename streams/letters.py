"""A dead letter always fits on the dead-letter topic: its original bytes are cut, never the worker.

A record can be dead-lettered because it is too large (an event over the topic's limit, a raw record
a producer sent with a larger limit than ours): its letter would then be too large as well, and a
producer refusing it (``MSG_SIZE_TOO_LARGE``) would stop the stage on every restart. So a letter
whose Avro body would pass ``kafka.max_message_bytes`` keeps the first bytes of its original that fit,
and says so in its headers: ``sluice.truncated`` (what was cut), ``sluice.original_bytes`` (the whole
length) and ``sluice.original_sha256`` (of the whole original), so the full record can be found and
recognised in the source topic (topic, partition and offset are in the letter). Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from typing import Any

from streams.avro_writer import body_writer
from streams.deadletter import TEXT_MAX_CHARS

# Room left for the Kafka record around the value: record and batch headers, the key, Sluice's headers.
RECORD_OVERHEAD = 1024
# Room for what protect_letter adds after the cut: the readable text (at most TEXT_MAX_CHARS characters,
# escaped, and a note) and the seal's header and tag.
PROTECT_RESERVE = 4 * TEXT_MAX_CHARS + 1024
MAX_ERROR_CHARS = 8 * 1024  # an error text past this says nothing more an operator can use
TRUNCATED = "sluice.truncated"
ORIGINAL_BYTES = "sluice.original_bytes"
ORIGINAL_SHA256 = "sluice.original_sha256"


def letter_size(letter: dict[str, Any]) -> int:
    """The Avro body's length (the wire header adds 5 bytes)."""
    return len(body_writer("dead_letter")({"sealed": None, "text": None, **letter}))


def fit_letter(letter: dict[str, Any], max_message_bytes: int) -> dict[str, Any]:
    """``letter`` itself when it fits in a Kafka record of ``max_message_bytes``, else a copy cut to fit.

    Called before :func:`~streams.deadletter.protect_letter`, which seals the (cut) original and adds
    a readable text: room for both is kept."""
    key = letter.get("key") or b""
    limit = max_message_bytes - RECORD_OVERHEAD - PROTECT_RESERVE - len(key) - 5
    error = letter["error"]
    if len(error) > MAX_ERROR_CHARS:
        letter = {**letter, "error": error[:MAX_ERROR_CHARS] + " [cut]"}
    size = letter_size(letter)
    if size <= limit:
        return letter
    original: bytes = bytes(letter["original"])
    headers = dict(letter.get("headers") or {})
    headers.update({TRUNCATED: "original", ORIGINAL_BYTES: str(len(original)),
                    ORIGINAL_SHA256: hashlib.sha256(original).hexdigest()})
    cut = {**letter, "original": b"", "headers": headers}
    # What the letter weighs without its original (the length prefix of the cut one is at most 5 bytes).
    room = limit - letter_size(cut) - 5
    if room < 0:
        raise ValueError(f"a dead letter cannot fit in {max_message_bytes} bytes even without its original "
                         "(key and headers too large); raise kafka.max_message_bytes")
    cut["original"] = original[:room]
    return cut
