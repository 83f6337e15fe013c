"""Credentials as tools print them in transcripts, CLI output and dumps (the eighth probe round, dev7); and what those
printers write in a secret's place, which must stay as written (httpx's '[secure]', git's 'Basic <redacted>',
Ansible's no_log mark, kubectl describe's sizes, MySQL's 'using password: YES', public Mapbox and Stripe keys)."""

from __future__ import annotations

import base64
from types import SimpleNamespace

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7%mZp2vR4x^L"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


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


@pytest.mark.parametrize("line", [
    f"+ skopeo copy --src-creds ci:{PW} docker://registry.internal/ml/trainer:1.4 docker://mirror/trainer:1.4",
    f'    npmAuthIdent: "ci:{PW}"',  # yarn berry's .yarnrc.yml
    f'    psk="{PW}"',  # wpa_supplicant.conf
    f"userPassword:: {'S3EzJW1acDJ2UjR4Xkw='}",  # LDIF: a double colon means base64 (RFC 2849)
    f'        passwd = 0x5555555592e0 "{PW}"',  # gdb's info locals: a char * and its string
    f"params={{'grant_type': ['client_credentials'], 'client_secret': ['{PW}']}}",  # parse_qs: lists of values
    f"flower --port=5555 --basic_auth=admin:{PW}",  # an auth key's user:password pair
    f'10.0.0.7 - - "POST /api/login HTTP/1.1" 200 "{{\\x22user\\x22:\\x22ci\\x22,\\x22password\\x22:\\x22{PW}\\x22}}"',
    "Your new secret key is: 2MCE322RUAI7OLOMTTH3TAEVWL",  # google-authenticator: a label that ends in "is"
    "secret_key_base: fb0b6e83a04aba2c624b61fa9f2ec76327ce1679569a238e850c0117b0728f12db07fbcd455bef04",
    "APP_KEY=base64:v6qapNEd378N5KhIcj/KD/+yK1kv9uWHnqYHFPJztFc=",  # Laravel: the key's base64 judged
    "json={'routing_key': 'c266384c8612fc0ccfd6e057c66a64ea', 'event_action': 'trigger'}",  # PagerDuty Events v2
])
def test_values_of_keys_in_tool_notations_are_redacted(redact: Redactor, line: str) -> None:
    out = redact(line)
    assert "[REDACTED:" in out and PW not in out and "Kq7%mZp2" not in out, out
    assert not any(w in out for w in ("S3EzJW1a", "2MCE322R", "fb0b6e83", "v6qapNEd", "c266384c")), out


def test_a_long_string_pprint_splits_over_lines_is_redacted_whole(redact: Redactor) -> None:
    parts = ["eyk36StAYviHnBL1dVf_Gkd-ntERJpVcuf6JD4EX8U7Wa", "UxsvIE6iJQL564JAny5XMZBbyszJE2MxS-PMBaVsfM", "TvT0DHcG"]
    text = ("{'refresh_token': ('" + parts[0] + "'\n                   '" + parts[1] + "'\n                   '"
            + parts[2] + "'),\n 'token_type': 'Bearer'}")
    out = redact(text)
    assert not any(p in out for p in parts) and "'token_type': 'Bearer'" in out and out.count("\n") == 3, out
    assert redact("{'labels': ('a'\n 'b'), 'refresh_token': None}") == "{'labels': ('a'\n 'b'), 'refresh_token': None}"


B64_PW = "S3E3JW1acDJ2UjR4Xkw="  # base64 of PW
JWT = ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJqb2ItODEyIiwiZXhwIjoxNzE0NTY4NDAwfQ."
       "Zq9xP2mK7vL4nR8tW3yBc6dFZq9xP2mK7vL4nR8tW3yBc6dF")


@pytest.mark.parametrize(("text", "secret"), [
    (f"<-  334 VXNlcm5hbWU6\n -> Y2k=\n<-  334 UGFzc3dvcmQ6\n -> {B64_PW}\n<-  235 2.7.0 ok", B64_PW),  # swaks
    (f"*cmd* 'USER alerts'\n*cmd* 'PASS {PW}'", PW),  # poplib
    (f"> PASS {PW}\n< 230 Login successful.", PW),  # curl -v ftp://
    (f"  12:00.03 > b'KJAB2 LOGIN alerts \"{PW}\"'", PW),  # imaplib debug
    (f"[zk: zk-0:2181(CONNECTED) 0] addauth digest sluice:{PW}", PW),
    (f"10.0.0.1 203.0.113.7 : PSK \"{PW}\"", PW),  # ipsec.secrets
    (f"2024-05-01T12:00:00Z\t   12 Query\tSET PASSWORD FOR 'runs'@'%' = '{PW}'", PW),  # MySQL general log
    (f"SET PASSWORD = PASSWORD('{PW}')", PW),
    ("||  SecretAccessKey |  MvDZZdXQGHbgCXgqzWSO9KngCRAnbS01opybySnB    ||",  # aws --output table
     "MvDZZdXQGHbgCXgqzWSO9KngCRAnbS01opybySnB"),
    (base64.b64encode(JWT.encode()).decode(), base64.b64encode(JWT.encode()).decode()),  # a token Secret's data
    ("-----BEGIN USER NKEY SEED-----\nSUMOC4AMUCVKDDWPMQBTPEDKTSJI4XKFLQ53XIJZBD77X4ODM3MMROEGIF\n"
     "------END USER NKEY SEED------", "SUMOC4AMUCVKDDWPMQBTPEDKTSJI4XKFLQ53XIJZBD77X4ODM3MMROEGIF"),
    ("untrusted comment: minisign encrypted secret key\nRWRTY0Iy" + "O57PXY7A8MwjO6Jpt" * 6,
     "RWRTY0Iy" + "O57PXY7A8MwjO6Jpt" * 6),
    ("FlyV1 fm2_" + "lJPECAAAAAAAA9x" * 8 + ",fm2_" + "jcRhBShBjWz5oiN0" * 4, "lJPECAAAAAAAA9x" * 8),
    ('"GET /oauth2/callback?state=M51IjWSbrYBy8A&code=4/0A4poMte6D_9C0s_Q2qBU7C_mj6_Fc4QX HTTP/1.1" 302',
     "4/0A4poMte6D_9C0s_Q2qBU7C_mj6_Fc4QX"),
    ('{"type": "random_password", "name": "db", "instances": [{"attributes": {"length": 24, '
     f'"result": "{PW}", "special": true}}}}]}}', PW),
    ("Please use the following password to proceed to installation:\n\n4fa95d914d4d049091953941acacc9cf\n",
     "4fa95d914d4d049091953941acacc9cf"),
    (f"generated random password is '{PW}'", PW),  # gitea admin user create --random-password
])
def test_credentials_in_transcripts_and_tool_output_are_redacted(redact: Redactor, text: str, secret: str) -> None:
    out = redact(text)
    assert secret[:12] not in out and secret[-12:] not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "*cmd* 'PASS ***************'",  # ftplib masks the password itself
    " PASS  src/app.test.js (1.2 s)",  # jest's result line
    "--- PASS: TestShardByRank (0.00s)",  # go test
    "GET /errors?code=404&lang=en HTTP/1.1",
    "the password is incorrect; token is expired",
    "| Name            | trainer-token |",
])
def test_words_around_those_shapes_stay(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(("text", "secret"), [
    ("+ printenv WANDB_API_KEY\ne1f035f68b69e04bd758956fcce9dcbc636b2b1e\n+ wandb login", "e1f035f68b69e04bd758"),
    (f"+ kubectl -n ml get secret runs-db -o 'jsonpath={{.data.password}}'\n+ base64 -d\n{PW}\n+ echo", PW),
    ("+ argocd admin initial-password -n argocd\nTiFWaGu1DkBoaG9f\n\n This password must be only used ...",
     "TiFWaGu1DkBoaG9f"),
    ("$NEPTUNE_API_TOKEN[1]: |7QgUqR84aSuUQyQuH7Xh|\n"
     "$NEPTUNE_API_TOKEN: originally inherited as |7QgUqR84aSuUQyQuH7Xh|", "7QgUqR84aSuUQyQuH7Xh"),  # fish set --show
    ('{\n    "gitlab-token": {\n        "gitlab.internal": "1ljknb1YIU7dXtiv3yxZ"\n    }\n}', "1ljknb1YIU7dXtiv3yxZ"),
    ("proc.stdout='Created service token for ci:\\nLLZPRaEtznqIvihg4RqKdYcE4EUZCqyTbbYqVDrA\\nStore it now.\\n'",
     "LLZPRaEtznqIvihg4RqKdYcE4EUZCqyTbbYqVDrA"),
])
def test_a_secret_a_command_or_heading_puts_on_its_own_line_is_redacted(redact: Redactor, text: str,
                                                                        secret: str) -> None:
    out = redact(text)
    assert secret[:10] not in out and secret[-10:] not in out, out


def test_a_jwt_rich_folds_onto_continuation_lines_is_redacted_and_the_path_column_stays(redact: Redactor) -> None:
    jwt = JWT + "AbCdEfGh12"
    lines = [jwt[i:i + 46] for i in range(0, len(jwt), 46)]
    text = (f"[05/01/24 12:00:00] INFO     issued job token {lines[0]}" + " " * 8 + "auth.py:88\n"
            + "\n".join(" " * 29 + part for part in lines[1:]))
    out = redact(text)
    assert not any(part[:8] in out for part in lines) and "auth.py:88" in out and out.count("\n") == len(lines) - 1
    folded_words = "[05/01/24 12:00:00] INFO     loading eyJhbGciOiJSUzI1NiJ9 from\n" + " " * 29 + "cache.json"
    assert redact(folded_words) == folded_words


def test_a_traced_commands_output_is_redacted_in_the_next_event_of_its_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    assert event("+ kubectl -n ml get secret runs-db -o 'jsonpath={.data.password}'").startswith("+ kubectl")
    assert event("+ base64 -d") == "+ base64 -d"  # the pipeline's other traced command
    assert event(PW, file="b.log") == PW  # another source
    assert event(PW) == "[REDACTED:secret]"
    assert event(PW) == PW  # one line only
    assert event("+ printenv WANDB_PROJECT") == "+ printenv WANDB_PROJECT"
    assert event("llm-7b-run") == "llm-7b-run"  # a variable that names no secret


TWILIO_HEADING = "SID                                 Friendly Name  Date Created                   Secret"
TWILIO_ROW = ("SK0123456789abcdef0123456789abcdef  ci-notify      May 01 2024 12:00:00 GMT+0000  "
              "IQsGWd04TrikzKDpK9qo8POxCLFyyGSt")


def test_the_machine_made_cell_under_a_secret_naming_column_heading_is_redacted(redact: Redactor) -> None:
    out = redact(f"{TWILIO_HEADING}\n{TWILIO_ROW}")  # twilio api:core:keys:create
    assert "IQsGWd04" not in out and "ci-notify" in out and "May 01 2024" in out, out
    accounts = "NAME      SECRETS   AGE\ndefault   1         5d\ntrainer   1         2d"  # kubectl get sa: a count
    assert redact(accounts) == accounts


def test_a_column_tables_rows_are_read_under_the_heading_event_of_their_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    assert event(TWILIO_HEADING) == TWILIO_HEADING
    out = event(TWILIO_ROW)
    assert "IQsGWd04" not in out and out.endswith("GMT+0000  [REDACTED:secret]"), out


def test_a_heading_whose_first_column_names_the_secret_is_read_too() -> None:
    redact = Redactor()  # (nothing open: the heading alone must be noticed)

    def event(message: str) -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": "b.log"}})
        return str(redact.output(out).value["message"])

    heading = "TOKEN                     TTL         EXPIRES                USAGES"  # kubeadm token list
    assert event(heading) == heading
    out = event("q7rk2m.8bw3v0c9x1zt4hpl   23h         2024-05-02T10:00:00Z   authentication,signing")
    assert "8bw3v0c9" not in out and out.startswith("[REDACTED:secret]   23h"), out


def test_json_records_lifted_into_attributes_keep_composer_tokens_and_a_random_password_out() -> None:
    redact = Redactor()
    auth = redact.mapping({"gitlab-token.gitlab.internal": "1ljknb1YIU7dXtiv3yxZ", "http-basic.x.username": "ci"})
    assert auth == {"gitlab-token.gitlab.internal": "[REDACTED:secret]", "http-basic.x.username": "ci"}
    state = redact.mapping({"type": "random_password", "name": "db",
                            "instances": '[{"attributes":{"result":"TrPmAg0WZevSD5CDwUO8iF"}}]'})
    assert "TrPmAg0W" not in str(state) and state["name"] == "db"
    other = {"type": "random_string", "instances": '[{"attributes":{"result":"web-7"}}]'}
    assert redact.mapping(other) == other


def test_a_seed_or_a_first_start_password_on_the_line_after_its_announcement_is_redacted_per_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    seed = "SUW3FBJXDGVQ36YNDBLKRDZFRLWJUX67ZPWTWQ72U4VCCNGRSDL32N6L6R"
    assert event("-----BEGIN USER NKEY SEED-----") == "-----BEGIN USER NKEY SEED-----"
    assert event(seed) == "[REDACTED:secret]"
    assert event("Please use the following password to proceed to installation:").startswith("Please use")
    assert event("") == ""  # a blank line between
    assert event("b306f42f0d45a3428fdebda78c3a9346") == "[REDACTED:secret]"
    assert event("b306f42f0d45a3428fdebda78c3a9346") == "b306f42f0d45a3428fdebda78c3a9346"  # one line only


@pytest.mark.parametrize(("line", "redacted"), [
    (f"passwords: ['{PW}', 'Winter2024!', 'x9Kq2mZp7v']", "passwords: ['[REDACTED:secret]', '[REDACTED:secret]', "
                                                          "'[REDACTED:secret]']"),
    (f'DB_PASSWORDS=["{PW}", "Summer2023!"] rest', 'DB_PASSWORDS=["[REDACTED:secret]", "[REDACTED:secret]"] rest'),
    (f"{{'client_secret': ['{PW}', 'a8Fq2mZp7vK4'], 'scope': ['read', 'write']}}",  # parse_qs of a repeated parameter
     "{'client_secret': ['[REDACTED:secret]', '[REDACTED:secret]'], 'scope': ['read', 'write']}"),
    ("tokens: ['the', 'cat', 'sat']", "tokens: ['the', 'cat', 'sat']"),  # a tokenizer's output names no secret
])
def test_every_string_of_a_list_under_a_secret_key_is_redacted(redact: Redactor, line: str, redacted: str) -> None:
    assert redact(line) == redacted
