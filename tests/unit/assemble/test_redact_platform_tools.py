"""Credentials as ML platform and SRE tools print them (the ninth probe round, dev8): a form body's percent-encoded
refresh token, a VS Code server's ?tkn=, Triton's restricted-API key, redis MONITOR's AUTH and HELLO, psql's \\set,
MySQL's IDENTIFIED WITH plugin BY; and what those printers write that must stay as written (azcopy's sig=REDACTED,
MONITOR's other commands, psql variables naming no secret, a key read from the environment)."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7%mZp2vR4x^L"
TOKEN = "G5HtfvTgyt6mWo40EyaE0WL6QjSv42aMzn8hZiWC"
REFRESH = "0SISNR97SVn0bg_3zAPpe-jtClVLeFxY_OI0WbM0ZKRzNK2F8X1FrlvlJrCxpDjOilohCEN96nPl0H5BpYI"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("text", "secret"), [
    # gcloud --log-http's token request body: the form encoding writes the refresh token's '//' as %2F%2F
    (f"client_id=32555940559.apps.googleusercontent.com&grant_type=refresh_token&refresh_token=1%2F%2F{REFRESH}",
     REFRESH),
    (f"Web UI available at http://localhost:8000?tkn={TOKEN}", TOKEN),  # openvscode-server --connection-token
    (f"http://127.0.0.1:3000/?folder=/home/coder&tkn={TOKEN}", TOKEN),
    (f"+ tritonserver --model-repository=/models --http-restricted-api=model-repository,shared-memory:admin-key={PW}",
     PW),
    (f"| http_restricted_api              | model-repository:admin-key={PW}            |", PW),  # its options table
    (f"--grpc-restricted-protocol=health:x-health-key={PW}", PW),
    (f'1714557600.123456 [0 10.0.0.5:51234] "AUTH" "{PW}"', PW),  # redis MONITOR
    (f'1714557600.223456 [0 10.0.0.6:40022] "AUTH" "trainer" "{PW}"', PW),  # Redis 6 ACL login
    (f'1714557600.323456 [0 10.0.0.7:40100] "HELLO" "3" "AUTH" "default" "{PW}" "SETNAME" "ray-gcs"', PW),
    (f"\\set pw '{PW}'\nALTER USER airflow PASSWORD :'pw';", PW),  # psql -a echoing a script
    (f"\\set db_password '{PW}'", PW),
    (f"2024-05-01T10:00:00Z\t   12 Query\tALTER USER 'optuna'@'%' IDENTIFIED WITH caching_sha2_password BY '{PW}'",
     PW),  # MySQL's general log
    (f"CREATE USER 'ci'@'%' IDENTIFIED WITH mysql_native_password BY '{PW}'", PW),
])
def test_credentials_in_platform_tools_output_are_redacted(redact: Redactor, text: str, secret: str) -> None:
    out = redact(text)
    assert "[REDACTED:" in out and secret[:8] not in out and secret[-8:] not in out, out


@pytest.mark.parametrize("line", [
    "INFO: Source: https://acct.blob.core.windows.net/ckpt?se=2024-06-01&sig=REDACTED&sp=rl&sv=2022-11-02",  # azcopy
    '1714557600.5 [0 10.0.0.5:51234] "GET" "emb:96bc21a07baba1473f9533d60e4b344fb8026949"',
    '1714557600.6 [0 10.0.0.5:51234] "CLIENT" "SETNAME" "auth-worker"',
    "\\set ON_ERROR_STOP 'on'",
    "\\set pw ''",
    "--http-restricted-api=model-repository:admin-key=${TRITON_ADMIN_KEY}",
    "http://localhost:8000?tkn=short",
    "CREATE USER 'ci'@'%' IDENTIFIED WITH auth_socket",
    "llama_print_timings:        eval time =    1967.31 ms /   128 tokens (   15.37 ms per token,    65.06 tokens "
    "per second)",
])
def test_what_those_printers_write_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line
