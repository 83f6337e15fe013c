"""Credentials of the fifteenth probe round (dev14, structured and encoded data) that the rules missed: a JWT that a
terminal or fold(1) wrapped at its width, its lines left as events of their own (kubectl describe secret's token,
curl -v's Authorization header, a bare token in prose); and what must stay: a line after a whole JWT, a word after a
cut one, narrow lines, and nsswitch.conf's ``passwd:`` line (the services that look the database up)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from streams.assemble.pipeline import parse_files
from streams.assemble.redact import Redactor

SIGNATURE = "Qm9xT2Z3cE1hY2hpbmVfbWFkZS1zaWduYXR1cmUtYnl0ZXM" * 7


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = (_b64url({"alg": "RS256", "typ": "JWT", "kid": "k7Zp2vR4xTL9"}) + "."
       + _b64url({"sub": "system:serviceaccount:ml:trainer", "iss": "https://kubernetes.default.svc"}) + "."
       + SIGNATURE)


def _fold(line: str, width: int) -> list[str]:
    return [line[i:i + width] for i in range(0, len(line), width)]


def _messages(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "wrapped.log"
    log.write_text("\n".join(lines) + "\n")
    return [o.get("message", "") for o in parse_files([log], default_ts_ms=0)]


def _pieces(text: str) -> list[str]:
    """Every 8-character run of the token's claims and signature (its head is no secret)."""
    rest = text.split(".", 1)[1]
    return [rest[i:i + 8] for i in range(0, len(rest) - 8, 4)]


def _leaks(messages: list[str]) -> list[str]:
    seen = "\n".join(messages)
    return [p for p in _pieces(JWT) if p in seen]


def test_a_token_kubectl_describe_wrapped_at_80_columns_is_redacted_on_every_line(tmp_path: Path) -> None:
    lines = ["Data", "====", "ca.crt:     1099 bytes", *_fold("token:      " + JWT, 80)]
    messages = _messages(tmp_path, lines)
    assert _leaks(messages) == []
    assert "ca.crt:     1099 bytes" in messages


def test_a_bearer_header_folded_at_120_columns_is_redacted_on_every_line(tmp_path: Path) -> None:
    lines = ["> GET /api/v1/namespaces HTTP/1.1", *_fold("> Authorization: Bearer " + JWT, 120),
             "> User-Agent: curl/8.5.0"]
    messages = _messages(tmp_path, lines)
    assert _leaks(messages) == []
    assert "> User-Agent: curl/8.5.0" in messages


def test_a_bare_token_wrapped_in_prose_is_redacted_from_its_claims_on(tmp_path: Path) -> None:
    head = "2026-05-01 10:14:22,481 INFO auth: issued "
    cut = len(JWT.split(".")[0]) + 30  # inside the claims: no whole token on any line
    lines = [head + JWT[:cut], *_fold(JWT[cut:], len(head) + cut)]
    assert _leaks(_messages(tmp_path, lines)) == []


def test_lines_after_a_whole_token_and_words_after_a_cut_one_stay(tmp_path: Path) -> None:
    lines = [
        "token:      " + JWT, "c0d3f5a8b1e94d7f",  # a whole token with its signature: the next line is its own
        "2026-05-01 10:14:22,481 INFO auth: header " + JWT.split(".")[0], "Mounts",  # a plain word
        "jwt: " + JWT.split(".")[0][:20], "k7Zp2vR4xTL9wdQm",  # a narrow line is no terminal's width
    ]
    messages = _messages(tmp_path, lines)
    assert "c0d3f5a8b1e94d7f" in messages
    assert "Mounts" in messages
    assert "k7Zp2vR4xTL9wdQm" in messages


@pytest.mark.parametrize("line", [
    "passwd:         files systemd",
    "passwd:     compat",
    "passwd:         files [NOTFOUND=return] sss",
])
def test_nsswitch_conf_passwd_line_names_services_not_a_password(line: str) -> None:
    assert Redactor()(line) == line


@pytest.mark.parametrize(("line", "secret"), [
    ("passwd: Xy7kP2mQ9wLd", "Xy7kP2mQ9wLd"),
    ("db_passwd: files", "files"),  # not nsswitch's database name: a password that is a word
])
def test_a_password_under_passwd_is_still_redacted(line: str, secret: str) -> None:
    assert secret not in Redactor()(line)
