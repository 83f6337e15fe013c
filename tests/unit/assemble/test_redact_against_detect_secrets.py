"""Held to a maintained scanner: whatever detect-secrets finds in the sample lines, the redactor removes.

detect-secrets' detectors (one per kind of key, with their own tests upstream) are run on every
sample line; each value they report must be gone from the redacted line. Its entropy detectors are
left out: on a single line they report every word. The PEM detector reports the BEGIN line itself,
which is a marker, not the key (the key's body is what goes).
"""

from __future__ import annotations

from collections import Counter

from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings

from devtools.testing.secret_samples import NOT_SECRETS, SAMPLES
from streams.assemble.redact import Redactor

MARKERS = {"BEGIN RSA PRIVATE KEY", "BEGIN PRIVATE KEY"}


def findings(line: str) -> list[tuple[str, str]]:
    return [(s.type, s.secret_value) for s in scan_line(line)
            if s.secret_value and "High Entropy" not in s.type and s.secret_value not in MARKERS]


def test_every_secret_detect_secrets_finds_in_the_samples_is_redacted() -> None:
    redact = Redactor()
    kinds: Counter[str] = Counter()
    missed = []
    with default_settings():
        for _secret, lines in SAMPLES.values():
            for line in lines:
                out = redact(line)
                for kind, value in findings(line):
                    kinds[kind] += 1
                    if value in out:
                        missed.append((kind, value, out))
    assert missed == []
    assert len(kinds) >= 15, kinds  # the samples exercise most of its detectors


def test_detect_secrets_finds_nothing_in_the_lines_we_keep() -> None:
    """The false-positive guard list is not hiding real secrets."""
    with default_settings():
        assert [(line, findings(line)) for line in NOT_SECRETS if findings(line)] == []
