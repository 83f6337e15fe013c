"""What a dead letter keeps, and how: the original bytes sealed, a redacted text beside them.

Re-drive needs a letter's original bytes exactly, and those bytes are whatever a job printed, secrets
included. So every writer of ``logs.dlq`` passes its letter through :func:`protect_letter`:

- ``text``: the original decoded for reading, secrets redacted, control characters escaped, cut to a
  length (redacted before it is cut, so a cut never leaves half a token for no rule to match);
- ``error``: redacted (an error may quote the record);
- ``original``: sealed with AES-256-GCM under the configured key (``sealed`` names the scheme and key
  id) so that reading the topic is not reading the secrets; only a holder of the key opens it, which
  ``sluice dlq redrive`` and ``sluice dlq show --raw`` do. Without a key it stays as read (``sealed``
  null) and the workers say so when they start.

Sealed layout: ``b"SLD1" + key id (4 bytes) + nonce (12) + ciphertext and tag``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from streams.errors import ConfigError, SluiceError

log = logging.getLogger(__name__)

SCHEME = "aes-256-gcm"
_MAGIC = b"SLD1"
_AAD = b"sluice.dead_letter.original.v1"
TEXT_MAX_CHARS = 16_384
# Redacted this far past the cut: a secret that starts before the cut is whole when the rules see it.
_REDACT_MARGIN = 16_384

# C0 and C1 controls but newline and tab, DEL, and the bidi overrides that reorder what a terminal shows.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """Control characters as visible escapes (``\\x1b``): no terminal escape sequence survives."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else
                       f"\\u{ord(m.group()):04x}", text)


def readable_text(original: bytes, redact: Callable[[str], str], limit: int = TEXT_MAX_CHARS) -> str:
    """The original bytes as text a person can read safely: redacted, then cut, then escaped."""
    window = original[: 4 * (limit + _REDACT_MARGIN)].decode("utf-8", "backslashreplace")
    text = redact(window[: limit + _REDACT_MARGIN])
    cut = len(text) > limit or len(window) > limit + _REDACT_MARGIN or len(original) > 4 * (limit + _REDACT_MARGIN)
    text = escape_controls(text[:limit])
    return text + f" … [{len(original)} bytes in all]" if cut else text


class LetterSeal:
    """AES-256-GCM over original bytes. ``key`` seals and opens; ``previous`` keys only open (rotation)."""

    def __init__(self, key: bytes, previous: Iterable[bytes] = ()) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._keys: dict[bytes, Any] = {}
        for k in (key, *previous):
            if len(k) != 32:
                raise ConfigError(f"a dead-letter key must be 32 bytes (base64 of them), not {len(k)}; "
                                  "make one with `sluice dlq keygen`")
            self._keys.setdefault(key_id(k), AESGCM(k))
        self.key_id = key_id(key)
        self.scheme = f"{SCHEME}:{self.key_id.hex()}"

    def seal(self, data: bytes) -> bytes:
        nonce = os.urandom(12)
        return _MAGIC + self.key_id + nonce + self._keys[self.key_id].encrypt(nonce, data, _AAD)

    def open(self, sealed: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        if not sealed.startswith(_MAGIC) or len(sealed) < 4 + 4 + 12 + 16:
            raise SluiceError("not a sealed dead-letter original (no SLD1 header)")
        kid, nonce, body = sealed[4:8], sealed[8:20], sealed[20:]
        aead = self._keys.get(kid)
        if aead is None:
            raise SluiceError(f"sealed with key {kid.hex()}, which is not configured (dead_letters.key or "
                              "dead_letters.previous_keys); ask whoever holds it")
        try:
            return bytes(aead.decrypt(nonce, body, _AAD))
        except InvalidTag:
            raise SluiceError(f"sealed original failed authentication under key {kid.hex()}: "
                              "corrupted or altered") from None


def key_id(key: bytes) -> bytes:
    return hashlib.sha256(b"sluice.dlq.key-id" + key).digest()[:4]


def decode_key(text: str) -> bytes:
    """A key as configured: base64 (standard or URL-safe) of 32 bytes."""
    text = text.strip()
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_" if ("-" in text or "_" in text) else None,
                                validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError("the dead-letter key is not base64; make one with `sluice dlq keygen`") from None


def new_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def protect_letter(letter: dict[str, Any], redact: Callable[[str], str], seal: LetterSeal | None) -> dict[str, Any]:
    """The one treatment every dead letter gets before it is written (see the module's docstring)."""
    letter["error"] = redact(letter.get("error") or "")
    original = letter.get("original") or b""
    if letter.get("sealed"):
        text = letter.get("text")
        letter["text"] = redact(text) if text else text
        return letter
    letter["text"] = redact(letter["text"]) if letter.get("text") else readable_text(original, redact)
    if seal is not None:
        letter["original"] = seal.seal(original)
        letter["sealed"] = seal.scheme
    else:
        letter["sealed"] = None
    return letter


def open_original(letter: dict[str, Any], seal: LetterSeal | None) -> bytes:
    """A letter's original bytes, opened when sealed (``SluiceError`` without the key)."""
    original = letter.get("original") or b""
    if not letter.get("sealed"):
        return bytes(original)
    if seal is None:
        raise SluiceError(f"the original is sealed ({letter['sealed']}); set dead_letters.key or "
                          "dead_letters.key_file to the key it was sealed with")
    return seal.open(original)


_warned = False


def letter_seal(conf: Any, writer: bool = False) -> LetterSeal | None:
    """The seal a ``DeadLetterSettings`` describes; None without a key (a ``writer`` says so, once)."""
    global _warned  # noqa: PLW0603 - one warning per process, however many writers it builds
    if conf.key is None or not conf.key.get_secret_value().strip():
        if writer and not _warned:
            _warned = True
            log.warning("dead_letters.key is not set: dead letters keep their original bytes unsealed, readable "
                        "by anyone who can read the dead-letter topic; make a key with `sluice dlq keygen`")
        return None
    return LetterSeal(decode_key(conf.key.get_secret_value()),
                      [decode_key(k.get_secret_value()) for k in conf.previous_keys])
