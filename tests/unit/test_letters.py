"""A dead letter always fits on the dead-letter topic: its original is cut, flagged and hashed."""

from __future__ import annotations

import hashlib
import io

import fastavro

from streams.contracts import parsed_schema
from streams.letters import ORIGINAL_BYTES, ORIGINAL_SHA256, RECORD_OVERHEAD, TRUNCATED, fit_letter, letter_size


def letter(original: bytes, error: str = "event too large for logs.events.p") -> dict:
    return {"original": original, "key": b"node-7/train.log", "topic": "logs.raw", "partition": 3, "offset": 42,
            "stage": "assemble", "error": error, "error_type": "too_large", "timestamp": 1_764_400_000_000,
            "attempts": 1, "headers": {"sluice-redriven-from": "logs.dlq/0/9"}}


def test_a_letter_that_fits_is_left_alone() -> None:
    small = letter(b"x" * 1000)
    assert fit_letter(small, 1_048_576) is small


def test_a_letter_too_large_is_cut_to_fit_with_its_length_and_hash() -> None:
    original = ("ünïcödé traceback line\n" * 120_000).encode()  # 3.1 MB: over librdkafka's 1,000,000 default
    limit = 1_000_000
    cut = fit_letter(letter(original), limit)
    size = letter_size(cut) + 5  # + the wire header
    assert size + RECORD_OVERHEAD + len(b"node-7/train.log") <= limit
    assert size > limit - RECORD_OVERHEAD - 64, "cut to fit, not to nothing"
    assert original.startswith(cut["original"]) and len(cut["original"]) < len(original)
    h = cut["headers"]
    assert h[TRUNCATED] == "original" and h[ORIGINAL_BYTES] == str(len(original))
    assert h[ORIGINAL_SHA256] == hashlib.sha256(original).hexdigest()
    assert h["sluice-redriven-from"] == "logs.dlq/0/9"  # headers it had are kept
    # Still a valid DeadLetter, where it came from intact.
    fastavro.schemaless_writer(io.BytesIO(), parsed_schema("dead_letter"), cut)
    assert (cut["topic"], cut["partition"], cut["offset"]) == ("logs.raw", 3, 42)


def test_a_huge_error_text_is_cut_too() -> None:
    cut = fit_letter(letter(b"x", error="E" * 100_000), 1_048_576)
    assert len(cut["error"]) < 9000 and cut["error"].endswith("[cut]")
