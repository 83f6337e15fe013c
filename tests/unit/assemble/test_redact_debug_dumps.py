"""Credentials as debug dumps and admin tools print them (the tenth probe round, dev9): Go's http.Header map, Erlang
terms, protobuf text format's wrapper messages, JSON name/value records with fields between, tables with a source
column, Honeycomb's header, ECR's registry password, aws configure's prompts, Secret Manager's payload, Redis ACL
rules and the positional passwords of grafana, nextflow and mc admin; and what those printers write besides a secret,
which must stay as written: a cookie header whose cookies hold no credential among them."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7mZp2vR4xTL9wd"
KEY = "hZEjxKiTcZdQYYYxAEWUhf1d5ErTWQFy"
ECR = "eyJwYXlsb2FkIjoi" + "oYk4ZXhVZxfZhGIwaqBo/L8RywQbTIuuOXct4nBOuj7xA7br29AD/ATktnjRxcfDuFxjoW7I2" * 3


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("text", "secret"), [
    (f"+ grafana cli --homepath /usr/share/grafana admin reset-admin-password {PW}", PW),
    (f"+ grafana-cli admin reset-admin-password '{PW}'", PW),
    (f"+ nextflow secrets set WANDB_KEY {PW}", PW),
    (f"+ mc admin user add myminio trainer {PW}", PW),
    (f'1714557123.114155 [0 10.0.3.7:51234] "ACL" "SETUSER" "trainer" "on" ">{PW}" "~jobs:*" "+@all"', PW),
    (f"+ redis-cli -h redis.internal ACL SETUSER worker on '>{PW}' '~queue:*' +@list", PW),
    (f"127.0.0.1:6379> ACL SETUSER alice on <{PW} ~* +@all", PW),  # '<' removes a password: still the password
    (f"+ aws ecr get-login-password --region us-east-1\n{ECR}", ECR),
    ("QVdTOmV5SndZWGxzYjJGa0lqb2" + ECR[16:], ECR[16:]),  # get-authorization-token: base64 of 'AWS:' and that
    (f"headers={{'User-Agent': 'OTel-OTLP-Exporter-Python/1.24.0', 'X-Honeycomb-Team': '{KEY}'}}", KEY),
    (f"OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team={KEY},x-honeycomb-dataset=training", KEY),
    (f"AWS Access Key ID [****************7QXA]: \nAWS Secret Access Key [****************m9Zb]: {KEY}", KEY),
    (f'{{\n  "name": "projects/1/secrets/db/versions/3",\n  "payload": {{\n    "data": "{KEY}",\n'
     f'    "dataCrc32c": "2796612201"\n  }}\n}}', KEY),
    (f'payload {{\n  data: "{KEY}"\n}}', KEY),  # the client's printed proto
    (f'{{"msg": "fetched", "body": "{{\\"payload\\": {{\\"data\\": \\"{KEY}\\"}}}}"}}', KEY),  # a JSON string
    (f'level=debug msg="sending" headers="map[Accept:[application/json] X-Api-Key:[{KEY}]]"', KEY),
    (f"url.Values: map[api_key:[{KEY}] page:[2]]", KEY),
    (f'connecting with [{{host,"db"}},{{port,5432}},{{username,<<"ejabberd">>}},{{password,<<"{PW}">>}}]', PW),
    (f'[{{rabbit, [{{default_user, <<"guest">>}}, {{default_pass, <<"{PW}">>}}]}}].', PW),  # rabbitmq.config
    (f'{{\n  "managed": null,\n  "name": "hf-token",\n  "tags": {{}},\n  "value": "{KEY}"\n}}', KEY),  # az keyvault
    (f"| apikey      | {KEY} | user settings |\n| format_type | ascii | user settings |", KEY),  # ngc config current
    (f'api_key {{\n  value: "{KEY}"\n}}\nbase_url {{\n  value: "https://api.wandb.ai"\n}}', KEY),
    (f'settings: api_key {{ value: "{KEY}" }} _offline {{ value: false }}', KEY),
])
def test_credentials_in_debug_dumps_are_redacted(redact: Redactor, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "1714557123.114155 [0 10.0.3.7:51234] \"ACL\" \"SETUSER\" \"ro\" \"on\" "
    "\"#e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\" \"~*\" \"+@read\"",
    "127.0.0.1:6379> ACL SETUSER alice on nopass ~cached:* +get",
    "AWS Secret Access Key [****************m9Zb]: ",
    "\tssl.keystore.password = [hidden]",
    "headers=map[Accept:[application/json] User-Agent:[Go-http-client/1.1]]",
    "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-dataset=training",
    'connecting with [{host,"db.internal"},{port,5432},{database,"chat"}]',
    "| format_type | ascii                         | user settings |",
    'base_url {\n  value: "https://api.wandb.ai"\n}',
    'usage {\n  prompt_tokens: 1532\n  completion_tokens: 211\n}',
    '{\n  "name": "hf-token",\n  "tags": {},\n  "value": null\n}',
    "+ nextflow run main.nf -profile slurm",
    "+ grafana cli plugins install grafana-clock-panel",
])
def test_what_those_printers_write_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


SESSION = "k8Hq2LmZ9xVb4NcT7wYpR3sD"


@pytest.mark.parametrize("text", [
    f"< Set-Cookie: _gitlab_session={SESSION}; path=/; secure; HttpOnly",
    f"> Cookie: _ga=GA1.2.1234567890.1714557123; sessionid={SESSION}",
    f"set-cookie: connect.sid=s%3A{SESSION}.{SESSION}; Path=/; HttpOnly",  # express-session's signed cookie
    f"{{'Cookie': 'csrftoken=a1; session={SESSION}'}}",
    f"Cookie: {SESSION}",  # a bare value, no name=
])
def test_a_cookie_header_with_a_credential_is_redacted_whole(redact: Redactor, text: str) -> None:
    out = redact(text)
    assert SESSION not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(("text", "value"), [
    ("> Cookie: sessionid=kq3n5x8w2b", "kq3n5x8w2b"),
    ("Cookie: JSESSIONID=node0abc12; lang=en", "node0abc12"),
    ("< Set-Cookie: XSRF-TOKEN=ab12cd34; Path=/", "ab12cd34"),
    ("> Cookie: remember_user=Qz81xx", "Qz81xx"),
])
def test_a_short_session_or_login_cookie_is_a_credential_too(redact: Redactor, text: str, value: str) -> None:
    assert value not in redact(text)


@pytest.mark.parametrize("line", [
    "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
    "> Cookie: _ga=GA1.2.1234567890.1714557123",
    "header: Set-Cookie: lang=en-US; Expires=Fri, 01 May 2026 12:12:03 GMT; Path=/",
])
def test_a_cookie_header_whose_cookies_hold_no_credential_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_a_cookie_attribute_is_judged_by_its_cookies(redact: Redactor) -> None:
    assert redact.mapping({"Cookie": "theme=dark"}) == {"Cookie": "theme=dark"}
    assert redact.mapping({"Cookie": f"sid={SESSION}"}) == {"Cookie": "[REDACTED:secret]"}


def test_secret_managers_payload_lifted_from_a_json_record_is_redacted(redact: Redactor) -> None:
    # a response logged as JSON is flattened into attributes: the key names no secret, the object's shape does
    lifted = redact.mapping({"name": "projects/1/secrets/db/versions/3", "payload.data": KEY,
                             "payload.dataCrc32c": "2796612201"})
    assert KEY not in str(lifted) and lifted["payload.dataCrc32c"] == "2796612201"
    assert redact.mapping({"request.payload.data": KEY})["request.payload.data"] == "[REDACTED:gcp_secret_payload]"
    assert redact.mapping({"mypayload.data": "x1"}) == {"mypayload.data": "x1"}
