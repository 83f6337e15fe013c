"""A dead letter always fits on the dead-letter topic: its original is cut, flagged and hashed."""

from __future__ import annotations

import hashlib
import io

import fastavro

from streams.contracts import parsed_schema
from streams.letters import (
    ORIGINAL_BYTES,
    ORIGINAL_SHA256,
    PROTECT_RESERVE,
    RECORD_OVERHEAD,
    TRUNCATED,
    fit_letter,
    letter_size,
)


def letter(original: bytes, error: str = "event too large for logs.events.p") -> dict:
    return {"original": original, "key": b"node-7/train.log", "topic": "logs.raw", "partition": 3, "offset": 42,
            "stage": "assemble", "error": error, "error_type": "too_large", "timestamp": 1_764_400_000_000,
            "attempts": 1, "headers": {"sluice-redriven-from": "logs.dlq/0/9"}}


def test_a_letter_that_fits_is_left_alone() -> None:
    small = letter(b"x" * 1000)
    assert fit_letter(small, 1_048_576) is small


def test_a_letter_too_large_is_cut_to_fit_with_its_length_and_hash() -> None:
    from streams.deadletter import LetterSeal, protect_letter

    original = ("ünïcödé traceback line\n" * 120_000).encode()  # 3.1 MB: over librdkafka's 1,000,000 default
    limit = 1_000_000
    cut = fit_letter(letter(original), limit)
    size = letter_size(cut) + 5  # + the wire header
    room = limit - RECORD_OVERHEAD - PROTECT_RESERVE - len(b"node-7/train.log")
    assert room - 64 < size <= room, "cut to fit, not to nothing"
    assert original.startswith(cut["original"]) and len(cut["original"]) < len(original)
    h = cut["headers"]
    assert h[TRUNCATED] == "original" and h[ORIGINAL_BYTES] == str(len(original))
    assert h[ORIGINAL_SHA256] == hashlib.sha256(original).hexdigest()
    assert h["sluice-redriven-from"] == "logs.dlq/0/9"  # headers it had are kept
    assert (cut["topic"], cut["partition"], cut["offset"]) == ("logs.raw", 3, 42)
    # Sealed and given its readable text, as every writer does next, it still fits, and is a valid DeadLetter.
    written = protect_letter(cut, lambda text: text, LetterSeal(b"k" * 32))
    assert letter_size(written) + 5 + RECORD_OVERHEAD <= limit
    fastavro.schemaless_writer(io.BytesIO(), parsed_schema("dead_letter"), written)


def test_a_huge_error_text_is_cut_too() -> None:
    cut = fit_letter(letter(b"x", error="E" * 100_000), 1_048_576)
    assert len(cut["error"]) < 9000 and cut["error"].endswith("[cut]")


def test_event_caps_must_fit_the_record_size() -> None:
    import pytest

    from streams.config import AssembleSettings, KafkaSettings, Settings
    from streams.errors import ConfigError
    from streams.message_size import check_event_caps

    check_event_caps(Settings())  # the defaults agree
    too_big = Settings(assemble=AssembleSettings(max_bytes=1024 * 1024))
    with pytest.raises(ConfigError, match="SLUICE_ASSEMBLE__MAX_BYTES"):
        check_event_caps(too_big)
    check_event_caps(too_big.model_copy(update={"kafka": KafkaSettings(max_message_bytes=4 * 1024 * 1024)}))
