"""Credentials of the nineteenth probe round (dev18: maps of secrets under a secret-named parent, password keys in
other languages, the newest vendors' shapes) and the values beside them that must stay, one test per rule."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from streams.assemble.pipeline import parse_files
from streams.assemble.redact import Redactor

PASSWORD = "Qm3x!T9vLp2Wz"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "python_gate"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize("word", ["wachtwoord", "senha", "contraseña", "contrasena", "parola", "hasło", "haslo",
                                  "пароль", "Пароль", "密码", "mima", "パスワード", "kennwort", "clave", "db_senha",
                                  "lösenord", "ПАРОЛЬ"])
@pytest.mark.parametrize("shape", [
    '{{"usuario": "etl", "{k}": "{v}", "host": "db"}}',
    "database:\n  user: etl\n  {k}: {v}\n  port: 5432\n",
    "connect host=db user=etl {k}={v} port=5432",
    "DBConfig(user='etl', {k}='{v}', port=5432)",
])
def test_a_password_key_in_another_language_holds_a_password(redact: Redactor, word: str, shape: str) -> None:
    """The password's word of Dutch, Portuguese, Spanish, Polish, Russian, Chinese, Japanese, German, Swedish ... is
    a password's key, as ``password`` is, also when json.dumps escapes its letters (``\\u043f...``)."""
    line = shape.format(k=word, v=PASSWORD)
    assert PASSWORD not in redact(line)
    escaped = json.dumps({word: PASSWORD, "user": "etl"})
    assert PASSWORD not in redact(escaped) and '"user": "etl"' in redact(escaped)


@pytest.mark.parametrize("line", ["enclave: Qm3xT9vLp2Wz", "autoclave_cycle: B7c9x2k4q", "parolaccia: x9Y2k7Qp3",
                                  "senhas_minimas: 8", "politica:\n  senha_minima: 8\n"])
def test_a_longer_word_that_ends_in_a_foreign_password_word_is_no_password_key(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(("text", "value"), [
    ("job:\n  name: llama-ft\n  secrets:\n    hf: Xk9pQ2mN4vL8wR7t\n    region: us-east-1\n", "Xk9pQ2mN4vL8wR7t"),
    (f"secrets:\n  db: {PASSWORD}\n  queue: default\n", PASSWORD),
    (f"credentials:\n  primary: '{PASSWORD}'\n  user: etl\n", PASSWORD),
    (f"auth:\n  type: basic\n  prod: {PASSWORD}\n  ttl: 3600\n", PASSWORD),
    (f"passwords:\n  admin: {PASSWORD}\n", PASSWORD),
    ("{'credentials': {'db': '" + PASSWORD + "',\n                 'user': 'etl'},\n 'model': 'llama-3-8b'}", PASSWORD),
    ('{\n  "service": "embedder",\n  "auth": {\n    "primary": "' + PASSWORD + '",\n    "region": "eu"\n  }\n}',
     PASSWORD),
    ("config: {'secrets': {'svc': 'a1b2c3d4e5f60718293a4b5c6d7e8f90', 'n': 2}}", "a1b2c3d4e5f60718293a4b5c6d7e8f90"),
    (f'[secrets]\nprimary = "{PASSWORD}"\nowner = "ml-platform"\n', PASSWORD),
])
def test_a_value_under_a_key_that_names_secrets_is_one_whatever_its_own_key(redact: Redactor, text: str,
                                                                             value: str) -> None:
    """A map of secrets (a job spec's, a Helm chart's, a config's dict or JSON over lines, a TOML table) holds one
    under each of its keys, ``hf:`` and ``db:`` as much as ``password:``; the harmless values beside it stay."""
    out = redact(text)
    assert value not in out
    for plain in ("region: us-east-1", "queue: default", "user: etl", "type: basic", "ttl: 3600", "'user': 'etl'",
                  '"region": "eu"', 'owner = "ml-platform"', "'n': 2"):
        if plain in text:
            assert plain in out


@pytest.mark.parametrize("text", [
    "auth:\n  type: oauth2\n  enabled: true\n",
    "credentials:\n  provider: vault\n  mount: kv\n",
    "credentials:\n  db: ${DB_PASSWORD}\n",
    "secrets:\n  hf: '****'\n",
    "secrets:\n  file: /run/secrets/db_password_2024\n",
    "auth:\n  issuer: https://login.internal/realms/ml2\n  audience: train-api\n",
    "{'auth': {'type': 'oauth2', 'scopes': 'read write'}}",
    "tokens:\n  max: 4096\n  pad: <pad>\n",
    "auth:\n  provider: github\n  client: ml-bot-2024\n",
    "credentials:\n  service: svc-train-01\n  image: acme/train:2.3.1\n",
])
def test_a_map_of_secrets_plain_values_stay(redact: Redactor, text: str) -> None:
    assert redact(text) == text


def _messages(tmp_path: Path, text: str) -> str:
    path = tmp_path / "case.log"
    path.write_text(text + "\n")
    return "\n".join(str(o.get("message", "")) for o in parse_files([path], default_ts_ms=1714564800000))


_CLAIMS = base64.urlsafe_b64encode(json.dumps({"iss": "https://login.internal", "aud": "train",
                                              "nonce": "Zq8" * 60}).encode()).decode().rstrip("=")
_JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + _CLAIMS + "." + "Sg4_k9Xw-2" * 30


def test_a_jwt_folded_on_its_own_and_then_labelled_is_redacted_on_every_line(tmp_path: Path) -> None:
    """A token folded at 76 columns (fold -w 76) and its first piece put after a label: the next lines are as wide as
    the token's piece, not as the labelled line."""
    folded = "\n".join(_JWT[i:i + 76] for i in range(0, len(_JWT), 76))
    out = _messages(tmp_path, "id_token: " + folded)
    assert not any(_JWT[i:i + 76] in out for i in range(76, len(_JWT) - 8, 76))


def test_a_private_key_in_an_env_dump_is_redacted_on_its_lines(tmp_path: Path) -> None:
    """env(1) prints a multi-line value as it is: the key's BEGIN line is an assignment whose value is redacted, and
    the base64 lines that follow it are the key's body."""
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + f"{n:012d}" for n in range(4)]
    text = ("HOSTNAME=train-0\nSSH_PRIVATE_KEY=-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body)
            + "\n-----END OPENSSH PRIVATE KEY-----\nHOME=/root")
    out = _messages(tmp_path, text)
    assert not any(line in out for line in body) and "HOME=/root" in out and "HOSTNAME=train-0" in out


@pytest.mark.parametrize("text", [
    "auth:\n  password_min_length: 12\n  password_hash_scheme: argon2id\n  token_ttl_seconds: 3600\n",
    "auth:\n  scheme: argon2id\n",
])
def test_a_key_of_several_words_under_a_map_of_secrets_says_what_its_value_is(redact: Redactor, text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("line", [
    "loaded credentials: 3 (ok)",
    "secrets: 12",
    "PASSWORDS=2",
])
def test_a_small_number_under_a_key_naming_secrets_in_the_plural_is_a_count(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_a_number_under_a_password_key_is_still_one(redact: Redactor) -> None:
    assert "1234" not in redact("password: 1234")


@pytest.mark.parametrize("line", [
    '{"kind":"SealedSecret","spec":{"encryptedData":{"password":"AgBy3i4OJSWK+PiTySYZZA+xCZq81Lm0vR2"}}}',
    "{'spec': {'encryptedData': {'password': 'AgBy3i4OJSWK+PiTySYZZA+xCZq81Lm0vR2'}}}",
])
def test_a_sealed_secret_s_ciphertext_in_json_stays(redact: Redactor, line: str) -> None:
    """Bitnami's SealedSecret holds ciphertext made to be committed, in JSON as in YAML."""
    assert redact(line) == line


def test_a_password_in_a_json_object_under_another_key_is_still_one(redact: Redactor) -> None:
    assert PASSWORD not in redact('{"kind":"Secret","stringData":{"password":"' + PASSWORD + '"}}')
    assert PASSWORD not in redact('{"db": {"password": "' + PASSWORD + '"}}')


@pytest.mark.parametrize("line", [
    "export HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "token ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "see hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the README",
])
def test_a_vendor_shaped_placeholder_stays(redact: Redactor, line: str) -> None:
    """A token's shape filled with a placeholder's character."""
    assert redact(line) == line


@pytest.mark.parametrize("secret", [
    "ghp_" + "A" * 36,  # a test's or a redacted copy's secret: filled, but not with a placeholder's character
    "ghp_" + "0" * 36,
    "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example key: redacted unless redaction.allow lists it
])
def test_a_token_filled_with_another_character_or_a_documented_example_is_redacted(redact: Redactor,
                                                                                    secret: str) -> None:
    assert secret not in redact(f"token {secret}") and secret not in redact(f"aws_access_key_id = {secret}")


def test_a_vendor_token_that_merely_holds_a_repeated_run_is_still_one(redact: Redactor) -> None:
    token = "hf_aaaaaaaaaaaa" + "Q7zK2mX9pL4vB8nR3tY6wE1"
    assert token not in redact(f"token {token}") and "AKIAQ3EGRXK2LLD5WZ4T" not in redact("key AKIAQ3EGRXK2LLD5WZ4T")


def test_a_toml_secrets_table_left_as_events_of_their_own_is_read_row_by_row(tmp_path: Path) -> None:
    """A TOML ``[secrets]`` table whose lines the merger left as events of their own: each row's value of letters
    and digits under a one-word key; a user, a plain word and the lines after the table stay."""
    text = ('[secrets]\nprimary = "Xk9pQ2mN4vL8wR7t"\nuser = "svc2024ml"\nowner = "ml-platform"\n'
            'backup = \'' + PASSWORD + '\'\n[server]\nport = 8080\nbuild = "abc12345def"\n')
    out = _messages(tmp_path, text)
    assert "Xk9pQ2mN4vL8wR7t" not in out and PASSWORD not in out
    for plain in ('user = "svc2024ml"', 'owner = "ml-platform"', "[server]", "port = 8080", 'build = "abc12345def"'):
        assert plain in out
