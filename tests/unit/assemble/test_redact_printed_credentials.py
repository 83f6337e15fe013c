"""Credentials in the shapes their printers and formats give them: STS session tokens and Elasticsearch enrollment
tokens by their fixed base64 heads, Kubernetes bootstrap tokens next to the word token, ``::add-mask::``, a
``netloc`` with a password, a heading that names a password above its value, two-column tables, Rust's and Java's
optional values, secret stores' CLIs, Confluent's ``basic.auth.user.info``, Elasticsearch's encoded API key; and
the look-alikes that must stay (references to the environment, a commit in wandb's run summary)."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace

import pytest

from streams.assemble.redact import Redactor

SECRET = "Zq9xP2mK7vL4nR8tW3yB"
PW = "Wq7#mZp2!xR4vK"
B64 = "Qm9vdHN0cmFwL2RhdGErYmFzZTY0L3RoYXQrbG9va3MrcmFuZG9tK0FCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFla"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


def test_an_sts_session_token_is_redacted_by_its_fixed_head_bare_and_percent_escaped(redact: Redactor) -> None:
    for head in ("IQoJb3JpZ2luX2VjE", "FwoGZXIvYXdzE"):
        token = head + B64 + "="
        out = redact(f"RuntimeError: upload failed with credentials {token}: AccessDenied")
        assert B64[:30] not in out and "[REDACTED:aws_session_token]" in out, out
        escaped = token.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        assert B64[:8] not in redact(f"GET /x?a=1&token={escaped} HTTP/1.1")
    assert redact("IQoJb3JpZ2luX2Vj") == "IQoJb3JpZ2luX2Vj"  # the head alone is no token


def test_an_elasticsearch_enrollment_token_is_redacted_by_its_json_head(redact: Redactor) -> None:
    token = base64.b64encode(json.dumps({"ver": "8.13.2", "adr": ["172.18.0.2:9200"], "fgr": "ab" * 32,
                                         "key": f"kx1:{SECRET}"}, separators=(",", ":")).encode()).decode()
    out = redact(f"enrollment: {token}")
    assert token[20:60] not in out and "[REDACTED:elasticsearch_enrollment_token]" in out


@pytest.mark.parametrize("line", [
    "kubeadm join 10.0.0.10:6443 --token pz0149.ubpmtvtzr0ajenfv \\",
    "[bootstrap-token] Using token: k3x9qa.vacqjotw81cr4f51",
    "qdqzc6.vacqjotw81cr4f51   23h   2024-05-02T12:00:00Z   authentication,signing   <none>   "
    "system:bootstrappers:kubeadm:default-node-token",
])
def test_a_bootstrap_token_next_to_the_word_token_is_redacted(redact: Redactor, line: str) -> None:
    out = redact(line)
    token = next(w for w in line.split() if len(w) == 23 and w[6] == ".")
    assert token[7:] not in out and "[REDACTED:bootstrap_token]" in out, out


@pytest.mark.parametrize("line", [
    "kubeadm join 10.0.0.10:6443 --token <token> --discovery-token-ca-cert-hash sha256:" + "7f" * 32,
    "loading torch.nn.functional from module.attentionlayers",  # no word token
    "tokenizer: config.abcdefghijklmnop saved",  # no digit in the 16 characters
])
def test_look_alikes_of_a_bootstrap_token_stay(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_the_value_of_an_add_mask_workflow_command_is_redacted(redact: Redactor) -> None:
    assert redact(f"+ echo '::add-mask::{SECRET}'") == "+ echo '::add-mask::[REDACTED:masked_value]'"
    assert redact("echo ::add-mask::***") == "echo ::add-mask::***"


def test_the_password_in_a_split_results_netloc_is_redacted(redact: Redactor) -> None:
    line = f"SplitResult(scheme='https', netloc='ci:{PW}@nexus.internal', path='/simple', query='', fragment='')"
    assert redact(line) == line.replace(PW, "[REDACTED:url_credentials]")
    plain = "SplitResult(scheme='https', netloc='nexus.internal:8443', path='/simple', query='', fragment='')"
    assert redact(plain) == plain


def test_a_value_printed_under_a_heading_that_names_a_password_is_redacted(redact: Redactor) -> None:
    pw = "eY35kMN6t9A-W_3Fm*20"
    text = f"ℹ️  Password for the elastic user (reset with `bin/elasticsearch-reset-password -u elastic`):\n  {pw}\n"
    assert pw not in redact(text)
    for kept in ("Password file:\n  /run/secrets/db-password", "Secret name:\n  hf-token",
                 "Number of tokens:\n  409600", "HTTP CA certificate SHA-256 fingerprint:\n  " + "ab12" * 16,
                 "Token endpoint:\n  https://auth.internal/oauth/token"):
        assert redact(kept) == kept


@pytest.mark.parametrize("table", [
    f"| API Key    | HRYMU9C1O8SZEORR |\n| API Secret | {SECRET} |",
    f"+--------+----------+\n| Field  | Value    |\n| secret | {SECRET} |\n+--------+----------+",
    f"| password | {PW} |",
])
def test_the_value_cell_of_a_table_row_that_names_a_secret_is_redacted(redact: Redactor, table: str) -> None:
    secret = SECRET if SECRET in table else PW
    out = redact(table)
    assert secret not in out and "[REDACTED:secret]" in out, out
    plain = "| name   | trainer-ci |\n| token_count | 409600 |\n| secret_name | hf-token |"
    assert redact(plain) == plain


def test_rust_and_java_optional_values_are_judged_inside_their_wrapper(redact: Redactor) -> None:
    one_line = f'Args {{ model_id: "meta-llama/x", num_shard: Some(2), api_key: Some("{SECRET}"), port: 80 }}'
    assert redact(one_line) == one_line.replace(SECRET, "[REDACTED:secret]")
    pretty = f'Args {{\n    api_key: Some(\n        "{SECRET}",\n    ),\n    port: 80,\n}}'
    assert redact(pretty) == pretty.replace(SECRET, "[REDACTED:secret]")
    java = f"Config(user=svc, password=Optional[{PW}], port=5432)"
    assert PW not in redact(java)
    assert redact('Args { api_key: None, hf_token: None }') == 'Args { api_key: None, hf_token: None }'


@pytest.mark.parametrize(("line", "secret"), [
    (f"+ dvc remote modify --local storage secret_access_key {SECRET}", SECRET),
    (f"+ dvc remote modify --local nas password '{PW}'", PW),
    (f"+ rclone config create ckpt s3 provider AWS secret_access_key {SECRET} region us-east-1", SECRET),
    (f"+ ngrok config add-authtoken 2{SECRET}_x7Kq", SECRET),
    (f"+ ngrok authtoken 2{SECRET}_x7Kq", SECRET),
    (f"+ az keyvault secret set --vault-name kv --name db-password --value '{PW}'", PW),
    (f"+ aws ssm put-parameter --name /train/db --type SecureString --value '{PW}' --overwrite", PW),
    (f"+ kubectl create secret generic runs-db --from-literal=user=trainer --from-literal=db='{PW}'", PW),
    (f"+ sudo cloudflared service install eyJhIjoi{SECRET}", SECRET),
    (f"+ vastai set api-key 4f2a9c1e{SECRET}", SECRET),
])
def test_secret_stores_and_tools_clis_lose_the_value_they_are_given(redact: Redactor, line: str, secret: str) -> None:
    out = redact(line)
    assert secret not in out and "[REDACTED:cli_password_flag]" in out, out


@pytest.mark.parametrize("line", [
    "+ dvc remote modify storage url s3://ckpts/llm",
    "+ rclone config create ckpt s3 provider AWS region us-east-1 env_auth true",
    "+ aws s3 cp --recursive ckpt/ s3://ckpts/ --region us-east-1",
    "+ kubectl create configmap runs --from-literal=user=trainer",
])
def test_the_same_tools_other_arguments_stay(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_confluents_basic_auth_user_info_is_a_secret(redact: Redactor) -> None:
    for line in (f"schema.registry.basic.auth.user.info=SRKEY01:{SECRET}",
                 f"conf {{'url': 'https://sr:8081', 'basic.auth.user.info': 'SRKEY01:{SECRET}'}}"):
        assert SECRET not in redact(line)
    attributes = redact.mapping({"basic.auth.user.info": f"SRKEY01:{SECRET}", "url": "https://sr:8081"})
    assert attributes == {"basic.auth.user.info": "[REDACTED:secret]", "url": "https://sr:8081"}


def test_elasticsearchs_encoded_api_key_is_redacted_with_the_key(redact: Redactor) -> None:
    encoded = base64.b64encode(f"JkCklc4WoFKvj7003G9O:{SECRET}".encode()).decode()
    record = {"id": "JkCklc4WoFKvj7003G9O", "name": "sluice-hot", "api_key": SECRET, "encoded": encoded}
    assert encoded not in redact(json.dumps(record))
    assert redact.mapping(record)["encoded"] == "[REDACTED:secret]"
    plain = {"name": "thumbnail", "encoded": encoded}  # no api_key beside it: some other encoding
    assert redact.mapping(plain) == plain


@pytest.mark.parametrize("text", [
    "      api_key: os.environ/AZURE_API_KEY",
    "wandb:\n  project: llm\n  api_key: ${oc.env:WANDB_API_KEY}",
    "password: ${DB_PASSWORD}",
    "wandb: Run summary:\nwandb:   git_commit 607a30d783dfa663caf39e06633721c8d4cfcd7e",
])
def test_references_to_the_environment_and_a_commit_in_wandbs_summary_stay(redact: Redactor, text: str) -> None:
    assert redact(text) == text
    assert "[REDACTED" in redact("wandb login 607a30d783dfa663caf39e06633721c8d4cfcd7e")


def test_a_password_printed_in_the_event_after_its_announcement_is_redacted_per_source() -> None:
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    pw = "yujpQfLX9NgK8+txDVJd"
    assert event("Password for the [elastic] user successfully reset.") == (
        "Password for the [elastic] user successfully reset.")
    assert event("New value: 42", file="b.log") == "New value: 42"  # another source
    assert event(f"New value: {pw}") == "New value: [REDACTED:secret]"
    assert event(f"New value: {pw}") == f"New value: {pw}"  # only the event right after the announcement
    assert event("Token rotated.") == "Token rotated."
    assert event("Status: healthy") == "Status: healthy"  # a label and a word that is no generated value


def test_vaults_numbered_unseal_keys_and_legacy_tokens_are_redacted(redact: Redactor) -> None:
    """vault operator init prints "Unseal Key 1: <base64>" and "Initial Root Token: <token>" (s.<24> before 1.10)."""
    key = "4jYbl2CBIv6SpkKj6Hos9iD32k5RfGkLzlosrrq/JgOm"
    assert redact(f"Unseal Key 1: {key}") == "Unseal Key 1: [REDACTED:secret]"
    assert redact("Initial Root Token: s.KkNJYWF5g0pomcCLEmDdOVCW") == "Initial Root Token: [REDACTED:secret]"
    for line in ("Step 1: load the tokenizer", "Unseal Key Shares: 5", "Key 1: value", "token: android.os.BinderProxy",
                 "token = torch.nn.Module"):
        assert redact(line) == line


def test_a_k3s_token_loses_its_password_part(redact: Redactor) -> None:
    token = "K10" + "a1b2c3d4" * 8 + "::server:" + SECRET
    assert redact(token) == "K10" + "a1b2c3d4" * 8 + "::server:[REDACTED:k3s_token]"
