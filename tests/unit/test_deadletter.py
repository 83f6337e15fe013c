"""Dead letters: the original sealed and opened, the readable text redacted, cut and escaped."""

from __future__ import annotations

import pytest

from devtools.testing.secret_samples import SAMPLES
from streams.assemble.redact import Redactor
from streams.config import DeadLetterSettings
from streams.deadletter import (
    LetterSeal,
    decode_key,
    escape_controls,
    letter_seal,
    new_key,
    open_original,
    protect_letter,
    readable_text,
)
from streams.errors import ConfigError, SluiceError


def letter(original: bytes, error: str = "cannot decode") -> dict:
    return {"original": original, "key": b"k", "topic": "logs.raw", "partition": 0, "offset": 7, "stage": "assemble",
            "error": error, "error_type": "undecodable", "timestamp": 0, "attempts": 1, "headers": {}}


def test_a_sealed_original_opens_to_the_same_bytes_and_hides_them() -> None:
    secret = SAMPLES["huggingface_token"][0]
    raw = f"HF_TOKEN={secret}\x00\xff".encode("utf-8", "surrogateescape")
    seal = LetterSeal(decode_key(new_key()))
    out = protect_letter(letter(raw, f"bad record near {secret}"), Redactor(), seal)
    assert out["sealed"] == seal.scheme and out["sealed"].startswith("aes-256-gcm:")
    assert secret.encode() not in out["original"] and secret not in out["error"] and secret not in out["text"]
    assert open_original(out, seal) == raw


def test_opening_needs_the_key_and_detects_tampering() -> None:
    seal, other = LetterSeal(decode_key(new_key())), LetterSeal(decode_key(new_key()))
    out = protect_letter(letter(b"payload"), Redactor(), seal)
    with pytest.raises(SluiceError, match="not configured"):
        open_original(out, other)
    with pytest.raises(SluiceError, match=r"dead_letters\.key"):
        open_original(out, None)
    tampered = {**out, "original": out["original"][:-1] + bytes([out["original"][-1] ^ 1])}
    with pytest.raises(SluiceError, match="authentication"):
        open_original(tampered, seal)


def test_a_rotated_key_still_opens_old_letters() -> None:
    old, new = new_key(), new_key()
    sealed_before = protect_letter(letter(b"before"), Redactor(), letter_seal(DeadLetterSettings(key=old)))
    rotated = letter_seal(DeadLetterSettings(key=new, previous_keys=[old]))
    assert rotated is not None and open_original(sealed_before, rotated) == b"before"
    assert rotated.open(rotated.seal(b"after")) == b"after"


def test_without_a_key_the_original_stays_as_read_and_says_so() -> None:
    out = protect_letter(letter(b"x"), Redactor(), letter_seal(DeadLetterSettings()))
    assert out["original"] == b"x" and out["sealed"] is None


def test_a_key_must_be_32_bytes_of_base64() -> None:
    with pytest.raises(ConfigError, match="32 bytes"):
        LetterSeal(b"short")
    with pytest.raises(ConfigError, match="base64"):
        decode_key("not base64 at all!")


def test_readable_text_escapes_terminal_sequences_and_redacts_before_cutting() -> None:
    hf = SAMPLES["huggingface_token"][0]
    raw = ("\x1b]0;owned\x07" + "a " * 40 + hf + "\r\u202eevil\x1b[2J").encode()
    text = readable_text(raw, Redactor(), limit=100)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b]0;owned\\x07" in text
    assert hf[:6] not in text, "redacted before the cut at 100 characters"
    assert text.endswith(f"[{len(raw)} bytes in all]")
    assert escape_controls("line one\n\tline two") == "line one\n\tline two"
