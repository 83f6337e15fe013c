"""Credentials of the twentieth probe round (dev19: secrets as other programs print them into a cluster's logs) and
the values beside them that must stay, one test per rule."""

from __future__ import annotations

import json

import pytest

from streams.assemble.redact import Redactor
from streams.assemble.secret_keys import key_strength

PASSWORD = "Qm3x!T9vLp2Wz"
TOKEN = "Zq9xP2mK7vL4nR8tW3yB"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "python_gate"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("word", "value"), [
    ("секрет", PASSWORD), ("密钥", PASSWORD), ("口令", PASSWORD), ("암호", PASSWORD), ("シークレット", PASSWORD),
    ("数据库密码", PASSWORD), ("管理员口令", PASSWORD), ("데이터베이스비밀번호", PASSWORD),
    ("токен", TOKEN), ("令牌", TOKEN), ("访问令牌", TOKEN), ("アクセストークン", TOKEN), ("토큰", TOKEN),
])
@pytest.mark.parametrize("shape", ["settings:\n  host: db\n  {k}: {v}\n", '{{"host": "db", "{k}": "{v}"}}',
                                   "{k}={v} host=db"])
def test_a_secret_or_token_key_in_another_script_holds_one(redact: Redactor, word: str, value: str,
                                                            shape: str) -> None:
    """A secret key's and a token's word in Russian, Chinese, Japanese and Korean names a secret, also at the end of a
    compound written without spaces (数据库密码: the database's password) and with json.dumps' escapes."""
    assert value not in redact(shape.format(k=word, v=value))
    escaped = json.dumps({"host": "db", word: value})
    assert value not in redact(escaped) and '"host": "db"' in redact(escaped)


@pytest.mark.parametrize("key", ["токены", "令牌数", "密码长度", "secret_name", "max_tokens"])
def test_words_beside_a_foreign_secret_word_are_no_key_of_one(key: str) -> None:
    """A plural, a count or a length after the word (令牌数: the number of tokens) names no secret, and the English
    keys keep their judgement."""
    assert key_strength(key) is None


def test_a_token_word_in_another_script_is_weak_as_token_is(redact: Redactor) -> None:
    """``токен`` is judged as ``token``: a count or a pad token under it stays."""
    assert redact("токен: 512") == "токен: 512" and redact("토큰: <pad>") == "토큰: <pad>"


@pytest.mark.parametrize("line", ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                  "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
                                  '{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}'])
def test_aws_documented_example_keys_are_redacted_under_a_secret_key(redact: Redactor, line: str) -> None:
    """AWS's documented example keys are what a test or a tutorial plants as a secret: redacted like any other
    (an operator who wants them kept lists them in ``redaction.allow``)."""
    assert "K7MDENG" not in redact(line) and "IOSFODNN7" not in redact(line)


def test_a_secret_key_s_real_value_is_still_redacted(redact: Redactor) -> None:
    assert "K7MDENG" not in redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzXAMPLEKEY")


TOKEN_HF = "hf_2VNls451GVgKnEvACxS8EQgHzPqrJ52hbk"


@pytest.mark.parametrize("frame", ["│", "┃", "║"])
def test_a_value_rich_cut_at_its_panel_edge_is_redacted_on_both_lines(redact: Redactor, frame: str) -> None:
    """rich's show_locals table cuts a long repr at the panel's inner edge and carries it on the next framed line:
    read unframed and joined, both halves of the token are found, and the frames and the other locals stay."""
    v = frame
    text = (f"{v} {v}    kwargs = {{                              {v} {v}\n"
            f"{v} {v}       'repo_id': 'acme/lm-7b',             {v} {v}\n"
            f"{v} {v}       'token': '{TOKEN_HF[:20]}   {v} {v}\n"
            f"{v} {v} {TOKEN_HF[20:]}',                           {v} {v}\n"
            f"{v} {v}    }}                                         {v} {v}")
    out = redact(text)
    assert TOKEN_HF[:12] not in out and TOKEN_HF[20:28] not in out
    assert "'repo_id': 'acme/lm-7b'," in out and out.count("\n") == 4 and out.count(v) == 20


def test_a_password_rich_cut_at_its_panel_edge_loses_its_tail_too(redact: Redactor) -> None:
    out = redact("│ │ password = 'Qm3x!T9vLp2Wz                 │ │\n│ │ abcdEFGH1234'         │ │\n"
                 "│ │     user = 'etl'                           │ │")
    assert "Qm3x!T9v" not in out and "abcdEFGH" not in out and "user = 'etl'" in out


def test_a_panel_whose_lines_close_their_quotes_is_left_as_it_was(redact: Redactor) -> None:
    text = "│ │ ckpt_dir = '/mnt/ckpt/run-3f9k2x7q' │ │\n│ │     step = 1000                      │ │"
    assert redact(text) == text


@pytest.mark.parametrize(("key", "value"), [("пароль_бд", PASSWORD), ("Пароль_БД", PASSWORD),
                                            ("секрет_клиента", PASSWORD), ("токен_доступа", TOKEN),
                                            ("ключ_api", PASSWORD), ("ключ_доступа", TOKEN)])
def test_a_russian_key_headed_by_the_secret_word_holds_one(redact: Redactor, key: str, value: str) -> None:
    """Russian names the noun first (пароль_бд: the database's password): the word heading a two-word key names
    its value."""
    assert value not in redact(f"настройки:\n  хост: db\n  {key}: {value}\n")
    assert value not in redact(json.dumps({"host": "db", key: value}))


@pytest.mark.parametrize("key", ["длина_пароля", "токены_всего", "пароль_мин_длина", "ключ_cache", "ключ"])
def test_a_russian_key_where_the_secret_word_does_not_head_names_none(key: str) -> None:
    """The word inflected after another (длина_пароля: the password's length), a plural, or a longer key is not
    taken for a secret's name."""
    assert key_strength(key) is None


def test_a_russian_cache_key_holds_a_secret_only_when_machine_made(redact: Redactor) -> None:
    """ключ_кэша (the cache's key) is judged as a cache key is: a step name stays."""
    assert redact("ключ_кэша: step-1000") == "ключ_кэша: step-1000"
