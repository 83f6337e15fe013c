"""Credentials of the nineteenth probe round (dev18: maps of secrets under a secret-named parent, password keys in
other languages, the newest vendors' shapes) and the values beside them that must stay, one test per rule."""

from __future__ import annotations

import json

import pytest

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
