"""Secret redaction in the notations of configs, client dumps and exception printers: auth schemes, auth tuples,
XML attributes, YAML block scalars, validation errors, ``diagnose`` values, percent-escapes, private keys behind
a per-line prefix, and Secrets printed in kubectl's key order; each one also against a hostile megabyte."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.redact import Redactor

SECRET = "Zq9xP2mK7vL4nR8tW3yB"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


def test_any_auth_scheme_word_keeps_its_name_and_loses_its_credential(redact: Redactor) -> None:
    for scheme in ("SSWS", "OAuth", "Bot", "GenieKey"):
        assert redact(f"> Authorization: {scheme} {SECRET}") == f"> Authorization: {scheme} [REDACTED:secret]"
        assert SECRET not in redact(f"headers={{'Authorization': '{scheme} {SECRET}', 'Accept': '*/*'}}")
    assert redact('WWW-Authenticate: Bearer realm="api"') == 'WWW-Authenticate: Bearer realm="api"'


def test_the_password_of_an_auth_tuple_is_redacted(redact: Redactor) -> None:
    for line in (f"requests.get(url, auth=('svc', '{SECRET}'))", f'basic_auth=("elastic", "{SECRET}")',
                 f"http_auth = ('elastic', '{SECRET}')", f"HTTPBasicAuth('svc', '{SECRET}')",
                 f"HTTPDigestAuth(b'svc', b'{SECRET}')"):
        out = redact(line)
        assert SECRET not in out and "[REDACTED:auth_tuple]" in out, out
        assert "svc" in out or "elastic" in out
    for line in ("auth=(user, password)", "auth=('svc', None)", "auth=('svc', '${SVC_PASSWORD}')",
                 "author=('Ann', 'Bob')"):
        assert redact(line) == line


def test_a_name_value_pair_of_raw_headers_or_query_parameters_is_judged_by_its_name(redact: Redactor) -> None:
    assert redact(f"[(b'host', b'api'), (b'authorization', b'Token {SECRET}')]") == (
        "[(b'host', b'api'), (b'authorization', b'Token [REDACTED:secret]')]")
    assert SECRET not in redact(f"params=[('q', 'llama'), ('api_key', '{SECRET}')]")
    for line in ("[(b'host', b'api'), (b'content-type', b'application/json')]", "pairs=[('max_tokens', '512')]"):
        assert redact(line) == line


def test_pairs_as_json_writes_a_list_of_them_are_judged_by_their_name(redact: Redactor) -> None:
    # a parsed repr's list of (bytes, bytes) headers, written back as JSON into an attribute
    line = f'[["b\'host\'","b\'api\'"],["b\'x-api-key\'","b\'{SECRET}\'"]]'
    assert SECRET not in redact(line) and "b\'host\'" in redact(line)
    assert SECRET not in redact(f'[["authorization", "Bearer {SECRET}"]]')
    for kept in ('[["b\'host\'","b\'api\'"]]', '[["max_tokens", "512"]]'):
        assert redact(kept) == kept


def test_toml_triple_quotes_and_odbc_braces_hold_a_value(redact: Redactor) -> None:
    assert redact(f"password = '''{SECRET}'''") == "password = '''[REDACTED:secret]'''"
    assert SECRET not in redact(f'token = """{SECRET}"""')
    odbc = f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:x,1433;Uid=sa;Pwd={{{SECRET}}};Encrypt=yes"
    assert redact(odbc) == odbc.replace(SECRET, "[REDACTED:secret]")
    assert SECRET not in redact(f"pyodbc.connect('DRIVER={{PostgreSQL}};SERVER=db;UID=u;PWD={{{SECRET}}}')")
    for kept in ("password = ''''''", "Driver={ODBC Driver 18 for SQL Server};Pwd={};"):
        assert redact(kept) == kept


def test_poetry_http_basic_credentials(redact: Redactor) -> None:
    out = redact(f"+ poetry config http-basic.private ci {SECRET}")
    assert SECRET not in out and out.startswith("+ poetry config http-basic.private ci ")
    assert redact("poetry config virtualenvs.in-project true") == "poetry config virtualenvs.in-project true"


def test_quoted_parameters_of_digest_and_oauth_headers_are_redacted_to_the_end_of_the_line(redact: Redactor) -> None:
    for scheme in ("Digest", "OAuth"):
        line = f'> Authorization: {scheme} username="u", nonce="abc", response="{SECRET}"'
        assert redact(line) == f"> Authorization: {scheme} [REDACTED:secret]"


def test_a_kubeconfig_key_data_is_a_key(redact: Redactor) -> None:
    assert redact(f"    client-key-data: {SECRET}9fA") == "    client-key-data: [REDACTED:secret]"
    assert redact("    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t") == (
        "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t")


def test_bytes_values_and_backtick_keys_are_read_like_quoted_ones(redact: Redactor) -> None:
    assert redact(f"headers={{'X-Amz-Security-Token': b'{SECRET}'}}") == (
        "headers={'X-Amz-Security-Token': b'[REDACTED:secret]'}")
    assert redact(f"- `hub_token`: {SECRET}") == "- `hub_token`: [REDACTED:secret]"
    assert redact("- `hub_model_id`: org/model") == "- `hub_model_id`: org/model"


def test_keytool_store_and_key_passwords_are_passwords(redact: Redactor) -> None:
    out = redact(f"+ keytool -importkeystore -srcstorepass {SECRET} -destkeypass {SECRET[::-1]}")
    assert SECRET not in out and SECRET[::-1] not in out
    assert redact("bypass: true") == "bypass: true"


def test_a_token_as_a_urls_user_and_a_percent_escaped_user_before_a_password(redact: Redactor) -> None:
    token = "ghp" + SECRET + "4x"
    assert redact(f"https://{token}@github.com/org/x.git") == "https://[REDACTED:url_token_user]@github.com/org/x.git"
    assert SECRET not in redact(f"https://user%40corp:{SECRET}@proxy:3128")
    for line in ("spark://CoarseGrainedScheduler@bd6ddeaa3173:42367", "ssh://git@github.com/org/x.git"):
        assert redact(line) == line


def test_sql_passwords_are_redacted(redact: Redactor) -> None:
    for line in (f"CREATE USER app WITH PASSWORD '{SECRET}';", f"ALTER ROLE app LOGIN PASSWORD '{SECRET}'",
                 f"CREATE USER 'app'@'%' IDENTIFIED BY '{SECRET}';"):
        assert SECRET not in redact(line) and "[REDACTED:sql_password]" in redact(line), line
    for line in ("ALTER ROLE app PASSWORD NULL", "CREATE USER app WITH PASSWORD '${APP_PASSWORD}'"):
        assert redact(line) == line


def test_cli_arguments_documented_as_secrets(redact: Redactor) -> None:
    assert redact(f"+ htpasswd -b -B /etc/nginx/.htpasswd admin {SECRET}") == (
        "+ htpasswd -b -B /etc/nginx/.htpasswd admin [REDACTED:cli_password_flag]")
    assert SECRET not in redact(f"+ gh secret set HF_TOKEN --repo org/x --body {SECRET}")
    assert redact("htpasswd -v .htpasswd admin") == "htpasswd -v .htpasswd admin"


def test_xml_attributes_pair_a_secret_name_with_its_value(redact: Redactor) -> None:
    assert redact(f'<add key="ClearTextPassword" value="{SECRET}" />') == (
        '<add key="ClearTextPassword" value="[REDACTED:secret]" />')
    assert SECRET not in redact(f'<property name="hibernate.connection.password" value="{SECRET}"/>')
    assert redact('<add key="LogLevel" value="Information" />') == '<add key="LogLevel" value="Information" />'


def test_a_yaml_block_scalar_under_a_secret_key_is_redacted_to_its_end(redact: Redactor) -> None:
    text = f"db:\n  password: |\n    {SECRET}\n    second-line-{SECRET[:10]}\n  port: 5432"
    assert redact(text) == "db:\n  password: |\n    [REDACTED:secret]\n\n  port: 5432"
    assert SECRET not in redact(f"hub:\n  token: >-\n    {SECRET}\n  repo: org/model")
    assert redact("script: |\n  python train.py\nname: x") == "script: |\n  python train.py\nname: x"
    # an indicator that does not end its line, or nothing indented below it, is no block
    assert redact("password: |\nport: 1") == "password: [REDACTED:secret]\nport: 1"


def test_a_validation_error_echoing_a_secret_field_is_redacted(redact: Redactor) -> None:
    text = ("1 validation error for Settings\nwandb.api_key\n  String should have at least 40 characters "
            f"[type=string_too_short, input_value='{SECRET}', input_type=str]")
    assert SECRET not in redact(text) and "input_value='[REDACTED:secret]'" in redact(text)
    ordinary = "1 validation error for Config\nlr\n  Input should be a valid number [input_value='abc', input_type=str]"
    assert redact(ordinary) == ordinary


def _diagnosed(source: str, values: list[tuple[str, str]]) -> str:
    cols = sorted((source.index(name), value) for name, value in values)
    lines = [source]
    for i in range(len(cols) - 1, -1, -1):
        row = [" "] * cols[i][0]
        for c, _v in cols[:i]:
            row[c] = "│"
        lines.append("".join(row) + "└ " + cols[i][1])
    return "\n".join(lines)


def test_diagnose_values_under_secret_names_are_redacted(redact: Redactor) -> None:
    text = _diagnosed("    client = connect(host, db_password)",
                      [("connect", "<function connect at 0x7f2a>"), ("host", "'pg.internal'"),
                       ("db_password", f"'{SECRET}'")])
    out = redact(text)
    assert SECRET not in out and "'pg.internal'" in out and "<function connect at 0x7f2a>" in out, out
    # a value under an ordinary name, or under no name's first character, stays
    kept = _diagnosed("    train(model, epochs)", [("model", "<Model>"), ("epochs", f"'{SECRET}'")])
    assert redact(kept) == kept
    shifted = "    f(my_password)\n" + " " * len("    f(my_") + f"└ '{SECRET}'"  # under a name's middle
    assert redact(shifted) == shifted


def test_percent_escaped_separators_hide_no_assignment_or_url_password(redact: Redactor) -> None:
    out = redact(f"GET /cb?next=%2Fx%3Faccess_token%3D{SECRET}%26state%3D1 HTTP/1.1")
    assert out == "GET /cb?next=%2Fx%3Faccess_token%3D[REDACTED:secret]%26state%3D1 HTTP/1.1"
    assert SECRET not in redact(f"redirect_uri=https%3A%2F%2Fci%3A{SECRET}%40nexus%2Fsimple")
    assert redact("GET /search?q=a%3Db%26c%3Dd") == "GET /search?q=a%3Db%26c%3Dd"


def _record(text: str, offset: int) -> RawRecord:
    envelope = {"log": text + "\n", "stream": "stdout", "time": "2026-11-30T10:00:00.000000000Z",
                "kubernetes": {"pod_name": "trainer-0", "namespace_name": "ml", "host": "gpu-1"}}
    return RawRecord("logs.raw", 0, offset, json.dumps(envelope).encode(), b"gpu-1|trainer-0", 1_700_000_000_000)


def _messages(lines: list[str]) -> list[str]:
    asm = Assembler()
    out = [o for n, line in enumerate(lines) for o in asm.feed(_record(line, n))] + asm.flush_all()
    return [o.value["message"] for o in out if o.kind == "event"]


def test_private_key_lines_behind_a_prefix_of_their_own_are_redacted() -> None:
    body = [SECRET * 3, SECRET[::-1] * 3, "T3mELaGRic17/nKoqM9Lg7XF=="]
    for prefix in ("May  1 12:00:00 node-3 cloud-init[812]: ", "[pod/trainer-0/setup] "):
        lines = [f"{prefix}-----BEGIN OPENSSH PRIVATE KEY-----", *(prefix + b for b in body),
                 f"{prefix}-----END OPENSSH PRIVATE KEY-----", f"{prefix}step 5 done"]
        text = "\n".join(_messages(lines))
        assert SECRET not in text and SECRET[::-1] not in text and "T3mELaGRic17" not in text, text
        assert "step 5 done" in text


def test_a_secret_in_kubectls_key_order_has_its_data_redacted_and_a_configmap_keeps_its_own() -> None:
    value = "cG9zdGdyZXM6Ly91OnB3NzdAaC9k"
    secret = ["apiVersion: v1", "data:", f"  conn: {value}", "kind: Secret", "metadata:", "  name: db"]
    config = ["apiVersion: v1", "data:", "  lr: 0.001", "  name: llama", "kind: ConfigMap"]
    data = [m for m in _messages([*secret, "---", *config]) if m.startswith("data:")]
    assert data == ["data:\n  conn: [REDACTED:k8s_secret]", "data:\n  lr: 0.001\n  name: llama"]


MB = 1 << 20


def _fill(piece: str) -> str:
    return (piece * (MB // len(piece) + 1))[:MB]


# One hostile megabyte per notation: each must be read in one pass (no rule may go back over the line for every
# position), and a secret after it must still be found. Each line opens with a real case of its notation, so
# that the fast gate lets the rule run over the whole megabyte.
HOSTILE = {
    "auth_scheme": _fill("Authorization: X "),
    "auth_scheme_spaces": "Authorization: OAuth " + " " * MB,
    "auth_tuple_open": "auth=('u', 'Pw9xQ2mK7v') auth=('" + "a" * MB,
    "auth_tuple_repeated": "auth=('u', 'Pw9xQ2mK7v') " + _fill("auth=('a',"),
    "xml_attributes": '<add key="password" value="Pw9xQ2mK7v"/>' + _fill('<add key="password" '),
    "block_scalar_lines": "password: |\n" + _fill("    x\n"),
    "block_scalar_keys": _fill("password: |\n"),
    "input_value": _fill("db_password\n  input_value="),
    "diagnose_bars": _fill("│ ") + "└ 'x'",
    "diagnose_annotations": "f(password)\n  └ 'Pw9xQ2mK7v'\n" + _fill("└ 'x'\n"),
    "percent_escapes": _fill("token%3D"),
    "cookie_repr": _fill("<Cookie a=b for "),
    "name_value_pairs": "('password', 'Pw9xQ2mK7v')" + _fill("('password', '" + "a" * 300),
    "digest_header": 'Authorization: Digest response="x"' + _fill('Authorization: Digest a="b" '),
    "url_token_user": "https://" + "a1" * 10 + "@x " + _fill("a://" + "a1" * 10),
    "sql_password": "create user a password 'x'" + _fill("create user a password "),
    "htpasswd": _fill("htpasswd -b "),
    "gh_secret": "gh secret set X --body y " + _fill("gh secret set "),
    "bytes_values": _fill("token: b'"),
    "vendor_prefixes": "sha256~" + "a" * 43 + " " + _fill("sha256~pat.4b1dA3-AAAAAA-EZAK"),
    "toml_triple_open": "password = '''Pw9xQ2mK7v''' " + _fill("password = '''a"),
    "odbc_braces_open": "Pwd={Pw9xQ2mK7v};" + _fill("Pwd={a"),
    "json_pairs_open": '["b\'token\'", "b\'Pw9xQ2mK7v\'"]' + _fill('["b\'token\'", "b\''),
    "poetry": _fill("poetry config http-basic.x u "),
    "smtp_challenges": _fill("334 UGFzc3dvcmQ6 "),
    "traced_kubectl": _fill("+ kubectl get secret get secret "),
    "folded_heads": _fill("eyJabcdefghijk\n        "),
    "list_values_open": _fill("password=['a"),
    "list_values_long": "passwords: ['Pw9xQ2mK7v', " + _fill("'Pw9xQ2mK7v', "),
    "pprint_literals_open": _fill("password=('a'\n"),
    "column_headings": _fill("SID  Secret\n"),
    "stated_passwords": _fill("password is "),
    "redis_monitor_auth": '1 [0 a:1] "AUTH" "Pw9xQ2mK7v"\n' + _fill('[0 a:1] "AUTH" "a" '),
    "redis_monitor_open": _fill('] "HELLO" "3" "AUTH" "'),
    "restricted_api_lists": _fill("--http-restricted-api=a,"),
    "restricted_api_keys": _fill("http_restricted_api | a:b"),
    "psql_set": "\\set pw 'Pw9xQ2mK7v'\n" + _fill("\\set pw '"),
    "connection_tokens": _fill("?tkn="),
    "percent_refresh_tokens": _fill("1%2F%2F0"),
    "identified_with": "identified by 'x' " + _fill("identified with a "),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_megabyte_is_read_in_one_pass_and_a_secret_after_it_still_found(redact: Redactor,
                                                                                   name: str) -> None:
    out = redact(HOSTILE[name] + f"\npassword={SECRET}")
    assert SECRET not in out
    assert out.endswith("password=[REDACTED:secret]")


def _event(message: str) -> SimpleNamespace:
    return SimpleNamespace(kind="event", value={"message": message, "source": {"file": "/var/log/x.log"}})


@pytest.mark.timeout(120)
def test_the_events_after_an_open_private_key_or_a_manifest_head_are_read_in_one_pass() -> None:
    redact = Redactor()
    redact.output(_event("node-3 setup: -----BEGIN OPENSSH PRIVATE KEY-----"))
    out = redact.output(_event(_fill("x " + "A" * 50 + " ") + "!")).value["message"]
    assert len(out) > MB // 2  # a line that ends in no base64 word is no key line: kept
    redact.output(_event("apiVersion: v1"))
    data = "data:\n" + _fill("  k: QUFBQUFBQUE=\n")
    assert redact.output(_event(data)).value["message"].count("[REDACTED:k8s_secret]") > 1000


def test_an_attribute_lifted_from_a_repr_is_judged_without_its_quotes(redact: Redactor) -> None:
    # a dict repr's bytes or string value keeps its quotes when lifted as an attribute
    for value in (f"b'{SECRET}'", f"'{SECRET}'", f'b"{SECRET}"'):
        assert redact.mapping({"X-Amz-Security-Token": value}) == {"X-Amz-Security-Token": "[REDACTED:secret]"}
    kept = {"pad_token": "'<pad>'", "eos_token": "b'</s>'"}
    assert redact.mapping(kept) == kept


WANDB_KEY = "59047709f1a4422a9bfd7e9d3c4cf5b68ff6da72"  # 40 hex, as wandb's api keys are


@pytest.mark.parametrize("text", [
    # OmegaConf.to_yaml printed: a section's keys two blanks under its name
    f"wandb:\n  project: llm-pretrain\n  entity: ml-team\n  key: {WANDB_KEY}\n  mode: online",
    # yaml.dump(cfg, default_flow_style=False): sections and keys sorted
    f"trainer:\n  max_steps: 1000\nwandb:\n  entity: ml-team\n  key: {WANDB_KEY}\n  project: llm",
    # two sections deep, the value quoted by the dumper
    f"logger:\n  wandb:\n    key: '{WANDB_KEY}'\n    project: llm",
    # a launcher's prefix on every line (torchrun --tee)
    f"[rank0]: wandb:\n[rank0]:   project: llm\n[rank0]:   key: {WANDB_KEY}",
    # the key's line alone (each line shipped as its own record), bare or behind Ray's prefix
    f"  key: {WANDB_KEY}",
    f"(TorchTrainer pid=41003, ip=10.0.0.5)     key: {WANDB_KEY}",
])
def test_a_yaml_sections_bare_key_is_judged_under_its_section(redact: Redactor, text: str) -> None:
    out = redact(text)
    assert WANDB_KEY not in out and "key: [REDACTED:secret]" in out.replace("'", "")


@pytest.mark.parametrize("text", [
    f"cache:\n  dir: /tmp/cache\n  key: {WANDB_KEY}",  # a cache's key names no secret
    f"dataset:\n  name: c4\n  key: {WANDB_KEY[:6]}-train",  # not machine-made
    f"key: {WANDB_KEY}",  # at column 0 and alone: no section it belongs to
    f"Failed to decode the record:\n  key: {WANDB_KEY}",  # under prose, not under a mapping's key
])
def test_a_bare_key_outside_a_secrets_section_stays(redact: Redactor, text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("value", ["1a256e1e827e1f887301bd1c88c728ca", "a4c123b1612dd272d1371c17149d439536b3216f"])
def test_a_long_hex_key_is_machine_made_under_the_hex_entropy_floor(redact: Redactor, value: str) -> None:
    # random hex of 32 characters falls under gitleaks' 3.5-bit floor about one time in five (Kaggle's and
    # Datadog's keys are hex)
    assert redact(f"ACME_ADMIN_KEY={value}") == "ACME_ADMIN_KEY=[REDACTED:secret]"
    assert redact(f"kaggle:\n  key: {value}") == "kaggle:\n  key: [REDACTED:secret]"


@pytest.mark.parametrize("value", ["deadbeefdeadbeefdeadbeefdeadbeef", "ab12ab12ab12ab12ab12ab12ab12ab12"])
def test_a_hex_run_of_few_symbols_is_no_key(redact: Redactor, value: str) -> None:
    assert redact(f"ACME_ADMIN_KEY={value}") == f"ACME_ADMIN_KEY={value}"


@pytest.mark.parametrize(("text", "kept"), [
    # a config printed whole on a line: a dict repr (print(cfg)), json.dumps
    (f"config: {{'wandb': {{'project': 'llm', 'key': '{WANDB_KEY}'}}, 'seed': 42}}", False),
    (f'run config {{"tracker": {{"url": "https://t.example.com", "key": "{WANDB_KEY}"}}, "epochs": 3}}', False),
    # an object before the key inside the same section is a sibling, not what holds the key
    ("config: {'tracker': {'cache': {'dir': '/tmp/w'}, 'key': '7Hq2LmP9xKz4Wn8Rt3Vb6Yc1'}}", False),
    (f"config: {{'cache': {{'dir': '/tmp/c', 'key': '{WANDB_KEY}'}}}}", True),  # a cache's key: no secret
    (f"lookup {{'key': '{WANDB_KEY}'}}", True),  # held under no key: nothing says what it is
])
def test_a_bare_key_in_an_object_printed_on_a_line_is_judged_by_the_key_holding_it(
        redact: Redactor, text: str, kept: bool) -> None:
    assert (redact(text) == text) is kept
