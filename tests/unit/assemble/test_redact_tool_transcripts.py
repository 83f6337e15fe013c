"""Credentials as tools print them in transcripts, CLI output and dumps (the eighth probe round, dev7); and what those
printers write in a secret's place, which must stay as written (httpx's '[secure]', git's 'Basic <redacted>',
Ansible's no_log mark, kubectl describe's sizes, MySQL's 'using password: YES', public Mapbox and Stripe keys)."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7%mZp2vR4x^L"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("line", [
    "request headers=Headers({'host': 'api.internal', 'authorization': '[secure]', 'accept': '*/*'})",  # httpx
    "12:00:00.123462 http.c:756  => Send header: Authorization: Basic <redacted>",  # GIT_TRACE_CURL
    '            "login_password": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER",',  # ansible -vvv invocation
    "password:  24 bytes",  # kubectl describe secret
    "java.sql.SQLException: Access denied for user 'runs'@'10.0.3.11' (using password: YES)",
    '{"accessToken": "pk.eyJ1IjoibGFiIiwiYSI6ImNrMXgifQ.Zq9xP2mK7vL4nR8tW3yBc6"}',
    "STRIPE_PUBLISHABLE_KEY=pk_live_51Hq9xP2mK7vL4nR8tW3yBc6dF",
])
def test_printers_masks_sizes_and_public_keys_stay(redact: Redactor, line: str) -> None:
    assert redact(line) == line
