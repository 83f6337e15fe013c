"""Credentials of the seventeenth probe round (dev16, inside JSON log records) that the rules missed, one test per
rule: an Azure SAS signature under a ``sig`` key, a token pair's bare ``refresh`` and ``access`` keys
(djangorestframework-simplejwt), a one-time code under ``otp``; and what must stay: a signature algorithm's name, a
refresh interval, an access mode, an Erlang/OTP release."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from streams.assemble.redact import Redactor

SIG = "sh81fL_nU4z5BXHqxlc9XAyaeW4pNFV92yOC1KsLOF8"
TOKEN = "bypV6YBPlmdVclEdoHY_TbAu32C8_Vy8m8_8qs3w_AnBIdNALHtigc5MXAoQH7Lg"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


def test_a_sig_field_of_a_json_record_is_a_secret(redact: Redactor) -> None:
    """structlog's JSONRenderer prints a SAS token's fields as keys of their own: ``sig`` is its signature."""
    out = redact.mapping({"sig": SIG, "alg": "hmac-sha256"})
    assert out["sig"] != SIG and out["alg"] == "hmac-sha256"
    assert SIG not in redact(json.dumps({"event": "webhook verified", "sig": SIG, "level": "debug"}))


@pytest.mark.parametrize("key", ["refresh", "access"])
def test_a_token_pair_s_bare_keys_hold_tokens(redact: Redactor, key: str) -> None:
    """simplejwt's TokenObtainPairView answers ``{"refresh": ..., "access": ...}``."""
    assert redact.mapping({key: TOKEN, "expires_in": "3600"})[key] != TOKEN
    assert TOKEN not in redact(json.dumps({"message": "tokens refreshed", key: TOKEN}))


@pytest.mark.parametrize("key", ["otp", "totp", "mfaCode"])
def test_a_one_time_code_is_a_secret(redact: Redactor, key: str) -> None:
    assert "48213977" not in json.dumps(redact.mapping({"msg": "sent code", key: "48213977"}))


@pytest.mark.parametrize(("key", "value"), [("sig", "RS256"), ("refresh", "30s"), ("access", "read-only"),
                                            ("otp", "26"), ("otp", "enabled"), ("sig", "hmac-sha256")])
def test_settings_under_the_same_keys_stay(redact: Redactor, key: str, value: str) -> None:
    assert redact.mapping({key: value})[key] == value
    text = json.dumps({"event": "config", key: value})
    assert redact(text) == text


def test_a_one_time_code_in_a_json_line_is_a_secret(redact: Redactor) -> None:
    assert "48213977" not in redact('{"name":"mfa","level":20,"otp":"48213977","msg":"sent code"}')


def test_a_sig_key_escaped_inside_docker_s_log_field(redact: Redactor) -> None:
    """docker's json-file driver escapes the app's JSON line once more in its ``log`` field."""
    line = json.dumps({"log": json.dumps({"level": "info", "sig": SIG}) + "\n", "stream": "stdout"})
    assert SIG not in redact(line)


def _event(redact: Redactor, message: str, attributes: dict[str, str]) -> dict[str, str]:
    out = SimpleNamespace(kind="event", value={"message": message, "attributes": dict(attributes),
                                               "source": {"file": "app.log"}})
    return redact.output(out).value["attributes"]


def test_a_value_field_named_by_its_record_s_message(redact: Redactor) -> None:
    """python-json-logger prints extra's keys beside the message: the message names what ``value`` holds."""
    attrs = _event(redact, "using deploy token", {"value": TOKEN, "expires": "2026-06-01"})
    assert attrs["value"] != TOKEN and attrs["expires"] == "2026-06-01"


@pytest.mark.parametrize(("message", "value"), [("gauge updated", TOKEN), ("using deploy token", "42"),
                                                ("tokens per second", "18000")])
def test_a_value_field_whose_message_names_no_secret_stays(redact: Redactor, message: str, value: str) -> None:
    assert _event(redact, message, {"value": value})["value"] == value
