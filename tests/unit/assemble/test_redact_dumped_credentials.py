"""Credentials as dumps and wire traces print them: PHP's print_r and var_dump, a pass/pwd key's punctuated password,
sssd's and nslcd's bind passwords, Consul's and Nomad's SecretID, Vault's legacy tokens, a JWK's private members,
SMTP AUTH (PLAIN in one line, LOGIN's answer after the challenge), postfix's sasl_passwd, botocore's Signature line,
anaconda.org token channels, PuTTY's private lines, a token behind a \\n escape or in \\/-escaped JSON; and the
printers' masks and public halves that must stay (SecretStr, *** in a URL, Sec-WebSocket-Key, accessors, public
JWKs)."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace

import pytest

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter

PW = "Kq7%mZp2vR4x^L"
UUID = "9f1c2e7a-3b4d-4c8e-a1f2-6d5e4c3b2a19"
ACCESSOR = "1f67ae33-7e52-4704-a19a-7b928c23b758"
TOKEN = "Zq9xP2mK7vL4nR8tW3yBc6dF"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("line", [
    f"    [password] => {PW}",  # PHP print_r
    f'  ["pass"]=>\n  string(14) "{PW}"',  # PHP var_dump: the value under its key
    f"settings=Settings(smtp_host='smtp.internal', smtp_pass='{PW}')",  # a pass key, any punctuation
    f"          'pass' => '{PW}'",  # Perl Data::Dumper
    "conn_str='DRIVER={ODBC Driver 18};SERVER=db;UID=loader;PWD={Kq7mZp2;vR4x};Encrypt=yes'",
    f"ldap_default_authtok = {PW}",  # sssd-ldap(5)
    f"bindpw {PW}",  # nslcd.conf(5)
])
def test_passwords_in_dumps_and_config_lines_are_redacted(redact: Redactor, line: str) -> None:
    out = redact(line)
    assert PW not in out and "Kq7mZp2" not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    f"SecretID:         {UUID}",  # consul acl token read
    f"Secret ID    = {UUID}",  # nomad acl token self
    f'  "SecretID": "{UUID}",',  # the ACL bootstrap API's JSON
    f"secret_id             {UUID}",  # vault write auth/approle/role/NAME/secret-id
])
def test_an_acl_tokens_secret_id_is_redacted(redact: Redactor, line: str) -> None:
    assert UUID[9:] not in redact(line)


@pytest.mark.parametrize("line", [
    f"AccessorID:       {ACCESSOR}", f"Accessor ID  = {ACCESSOR}", f"secret_id_accessor    {ACCESSOR}",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",  # RFC 6455's handshake nonce
    "settings=Settings(db_user='trainer', db_password=SecretStr('**********'))",  # pydantic's mask
    "Engine(postgresql+psycopg2://trainer:***@db.internal:5432/runs)",  # SQLAlchemy's masked URL
    "- ** ---------- .> transport:   amqp://celery:**@rabbit:5672//",  # celery's banner (kombu)
    "Looking in indexes: https://ci:****@nexus.internal/repository/pypi/simple",  # pip
    '{"keys":[{"kty":"RSA","kid":"k1","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPF'
    'FxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v","e":"AQAB"}]}',
    "at s.AbstractAutowireCapableBeanFactory.doCreateBean(AbstractAutowireCapableBeanFactory.java:542)",
    "  - https://conda.anaconda.org/t/<TOKEN>/ml-team",  # conda's own mask
])
def test_masks_accessors_nonces_and_public_keys_stay(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_vaults_legacy_token_alone_in_a_table_row_is_redacted(redact: Redactor) -> None:
    assert redact(f"id                  s.{TOKEN}") == "id                  s.[REDACTED:hashicorp_vault_legacy_token]"
    assert redact("at s.Abcdefghijklmnopqrstuvwx") == "at s.Abcdefghijklmnopqrstuvwx"  # no digits: a name


def test_a_jwks_private_members_are_redacted_and_its_public_ones_stay(redact: Redactor) -> None:
    d, x = "cbQtDEMFE_dcIo6XS7c_QG5n1LvAKAgA6O1ZhOz-aV1", "BYOCAeYUIkEy63iI0EP6ihZyA1lyFIiAmZtkczSfZh9"
    out = redact(f'{{\n  "kty": "EC",\n  "crv": "P-256",\n  "x": "{x}",\n  "d": "{d}"\n}}')
    assert d not in out and x in out, out
    assert redact(f'{{"crv": "P-256", "d": "{d}"}}') == f'{{"crv": "P-256", "d": "{d}"}}'  # no kty: no JWK


def test_smtp_auth_plain_and_a_postfix_sasl_passwd_line_are_redacted(redact: Redactor) -> None:
    plain = base64.b64encode(f"\0alerts@lab.internal\0{PW}".encode()).decode()
    assert redact(f"send: 'AUTH PLAIN {plain}\\r\\n'") == "send: 'AUTH PLAIN [REDACTED:smtp_auth]\\r\\n'"
    assert redact(f"[smtp.internal]:587 alerts@lab.internal:{PW}") == (
        "[smtp.internal]:587 alerts@lab.internal:[REDACTED:postfix_sasl_passwd]")


def test_botocores_signature_line_and_a_conda_token_channel_are_redacted(redact: Redactor) -> None:
    sig = "89a27fc889fba74eb4ee6483e197f25389bfe8c629c1d93a55936a603288b1b0"
    assert sig not in redact(f"2024-05-01 12:00:00,123 botocore.auth [DEBUG] Signature:\n{sig}")
    tok = "ml-HUnpntv2cmhDM6vZw-fGpo5zew7SEg"
    assert tok not in redact(f"  - https://conda.anaconda.org/t/{tok}/ml-team")


def test_a_token_behind_an_escaped_newline_or_in_escaped_slashes_is_redacted(redact: Redactor) -> None:
    ghp = "ghp_Pybjw2nogu0C1AYSQFflidy7QC1ekl4JzLwm"
    out = redact(f"captured stdout: 'Logging in with token:\\n{ghp}\\nLogin Succeeded\\n'")
    assert ghp[4:] not in out and out.endswith("\\nLogin Succeeded\\n'"), out
    hook = "a6cUUhi20uF2tS3827r4Orb0"
    out = redact('{"webhook_url":"https:\\/\\/hooks.slack.com\\/services\\/T01NEY7AW5\\/B0GJFQUH6O\\/' + hook + '"}')
    assert hook not in out, out
    assert redact("line one\\nline_two_of_the_message_here") == "line one\\nline_two_of_the_message_here"


def test_a_putty_key_files_private_lines_are_redacted_and_its_public_lines_stay(redact: Redactor) -> None:
    public, private = "AAAAC3NzaC1lZDI1NTE5AAAAIHk2mZ5Lq0XbR1vTQwE8pN3sYc7dJf4uGh9aKo6lBxCz", "AAAAIGq2r1tYwQ0Fk3ZJ8x"
    out = redact(f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\n{public}\n"
                 f"Private-Lines: 1\n{private}\nPrivate-MAC: {'ab' * 32}")
    assert private not in out and public in out and out.count("\n") == 6, out


def test_secret_lines_after_the_line_that_announces_them_are_redacted_per_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    answer = base64.b64encode(PW.encode()).decode()
    assert event("reply: b'334 UGFzc3dvcmQ6\\r\\n'") == "reply: b'334 UGFzc3dvcmQ6\\r\\n'"
    assert event("reply: retcode (334); Msg: b'UGFzc3dvcmQ6'") == "reply: retcode (334); Msg: b'UGFzc3dvcmQ6'"
    assert event(f"send: '{answer}\\r\\n'", file="b.log") == f"send: '{answer}\\r\\n'"  # another source
    assert event(f"send: '{answer}\\r\\n'") == "send: '[REDACTED:secret]\\r\\n'"
    assert event(f"send: '{answer}\\r\\n'") == f"send: '{answer}\\r\\n'"  # only the answer to the challenge
    blob = ["AAAAIHk2mZ5Lq0XbR1vTQwE8pN3sYc7dJf4uGh9aKo6lBxCz", "AAAAQ0Fq2r1tYw=="]
    assert event("Private-Lines: 2") == "Private-Lines: 2"
    assert [event(line) for line in blob] == ["[REDACTED:secret]", "[REDACTED:secret]"]
    assert event("Private-MAC: " + "ab" * 32) == "Private-MAC: " + "ab" * 32


def test_a_json_web_key_logged_as_a_json_record_keeps_its_private_members_out_of_the_attributes() -> None:
    """A JWK printed alone on a line is a JSON record: its members are lifted as attributes, where the text rule
    does not see them; the private ones (d, and RSA's primes) are redacted there too, the public ones kept."""
    secret = "Jq3vX9kLm2Pz8RtY6wBn4CsD7fGh1JkLq5WeRt0UyIo"
    line = '{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","d":"' + secret + '"}'
    nested = '{"msg":"loaded key","jwk":{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZpt","e":"AQAB","p":"' + secret + '"}}'
    for text in (line, nested):
        asm = Assembler(None, ProjectRouter("p"))
        out = [o.value for o in [*asm.feed(RawRecord("t", 0, 0, text.encode())), *asm.flush_all()]]
        assert any(o.get("attributes") for o in out), "lifted as a JSON record"
        assert secret not in json.dumps(out), text
    kept = Redactor().mapping({"kty": "EC", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "kid": "k1"})
    assert kept == {"kty": "EC", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "kid": "k1"}
