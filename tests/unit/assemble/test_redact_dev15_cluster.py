"""Credentials of the sixteenth probe round (dev15, as GPU-cluster jobs print them) that the rules missed, one test
per rule: a passphrase with spaces in an env dump, a ``*_PASSCODE`` variable, a ``--password`` flag and its value as
the items of a JSON argv list, curl's ``-u`` behind other short options, a presigned URL's signature encoded twice
inside another URL's query; and what must stay: Comet's experiment key, a sanitizer's ``***REDACTED***`` mask and the
``EMPTY`` key an OpenAI-compatible client is given."""

from __future__ import annotations

import base64

import pytest

from streams.assemble.redact import Redactor

PASSPHRASE = "orchestra29 lighthouse18 velocity66 porcupine41"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("name", ["SMTP_PASSWORD", "GPG_PASSPHRASE", "REGISTRY_SECRET"])
def test_an_env_dump_line_s_value_runs_to_the_end_of_its_line(redact: Redactor, name: str) -> None:
    """env(1) prints ``NAME=value`` with the value as it is: every word of a passphrase is the secret."""
    out = redact(f"SMTP_USER=alerts@acme.io\n{name}={PASSPHRASE}\nSMTP_PORT=587")
    assert not any(w in out for w in PASSPHRASE.split())
    assert out.splitlines()[0] == "SMTP_USER=alerts@acme.io" and out.splitlines()[2] == "SMTP_PORT=587"


def test_a_lower_case_setting_in_prose_keeps_its_next_words(redact: Redactor) -> None:
    assert redact("password=Xk9aaZZ77qq and then retried").endswith(" and then retried")


def test_a_passcode_variable_holds_a_secret(redact: Redactor) -> None:
    assert "CQJVbxSPM1TitNSwGc" not in redact("VPN_USER=ml-bot\nVPN_PASSCODE=CQJVbxSPM1TitNSwGc\nVPN_GATEWAY=vpn")


def test_a_password_flag_in_a_json_argv_list_without_blanks(redact: Redactor) -> None:
    """JSON.stringify (and json.dumps with compact separators) writes a launcher's argv list with no blank after
    its commas: the item after ``--db-password`` is the password."""
    out = redact('SM_USER_ARGS=["--db-password","$=*NO?m$@XoX4=7m!5","--epochs","3"]')
    assert "XoX4=7m" not in out and '"--epochs","3"' in out


@pytest.mark.parametrize("flags", ["-fsSLu", "-su", "-vu"])
def test_curl_user_behind_other_short_options(redact: Redactor, flags: str) -> None:
    out = redact(f"+ curl {flags} ml-bot:2kXYFLgB4bx2vG2Re23V -o model.tar https://artifacts.acme.io/m.tar")
    assert "2kXYFLgB4bx2vG2Re23V" not in out and "-o model.tar" in out


def test_curl_options_without_a_user_stay(redact: Redactor) -> None:
    text = "+ curl -fsSL https://artifacts.acme.io/m.tar -o out:tar"
    assert redact(text) == text


def test_a_signature_encoded_twice_in_a_redirect(redact: Redactor) -> None:
    sig = "2cf5c6bd3b778d9cf39966946bccbecdf2ccece0f15a64cac15019cef67d5757"
    out = redact('"GET /dl?next=https%253A%252F%252Fckpt.s3.amazonaws.com%252Fstep.pt%253FX-Amz-Expires%253D3600'
                 f'%2526X-Amz-SignedHeaders%253Dhost%2526X-Amz-Signature%253D{sig} HTTP/1.1" 302 0')
    assert sig[:8] not in out and "X-Amz-SignedHeaders%253Dhost" in out


@pytest.mark.parametrize("text", [
    "COMET INFO: Experiment(project='llm', workspace='acme', experiment_key='5d41402abc4b2a76b9719d911017c592')",
    "wandb_login.py:_login():68] setting login settings: {'api_key': '***REDACTED***'}",
    "client = OpenAI(base_url='http://localhost:8000/v1', api_key='EMPTY')",
])
def test_ids_and_masks_stay(redact: Redactor, text: str) -> None:
    assert redact(text) == text


def test_an_auth_tuple_in_a_kwargs_repr(redact: Redactor) -> None:
    """requests' auth=(user, password) in a logged kwargs dict: the second string is the password, in the text and
    in the attributes a dict repr is lifted into."""
    out = redact("DEBUG upload: request kwargs {'url': 'https://artifacts.acme.io/upload', "
                 "'auth': ('ml-bot', 'Tr0ub4dor&3x'), 'timeout': 30}")
    assert "Tr0ub4dor" not in out and "'ml-bot'" in out and "'timeout': 30" in out
    assert "Tr0ub4dor" not in str(redact.mapping({"auth": "('ml-bot', 'Tr0ub4dor&3x')", "timeout": "30"}))


def test_a_pair_under_another_name_or_without_a_password_stays(redact: Redactor) -> None:
    for text in ("x = dict(pair=('ml-bot', 'Tr0ub4dor&3x'))", "request kwargs {'auth': ('ml-bot', None)}"):
        assert redact(text) == text
    assert redact.mapping({"auth": "('ml-bot', '')"}) == {"auth": "('ml-bot', '')"}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


KUBECONFIG = ("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://k8s.acme.io:6443\n  name: ml\n"
              "users:\n- name: ci\n  user:\n    token: 9Rbk7NjZkwhzBjEWrqldEQjbtt5YsiFujfvmxqQfaqsrjmXy\n")


@pytest.mark.parametrize("text", [
    f"KUBE_CONFIG_DATA={_b64(KUBECONFIG)}\nKUBE_NAMESPACE=ml",
    f"+ echo {_b64('HF_TOKEN=hf_BtRRm3Utf9iBRPRNTSLH0T4Fs6lXowmwaP' + chr(10))}\n+ base64 -d",
    # the word at each of base64's three byte offsets
    f"ENV_B64={_b64('x=1' + chr(10) + 'DB_PASSWORD=Tr0ub4dor3xQ9' + chr(10))}",
    f"ENV_B64={_b64('xy=1' + chr(10) + 'DB_PASSWORD=Tr0ub4dor3xQ9' + chr(10))}",
])
def test_base64_of_a_text_that_holds_a_secret(redact: Redactor, text: str) -> None:
    """A kubeconfig or an env file shipped base64 in one variable: the blob is redacted whole."""
    blob = next(w.partition("=")[2] or w for w in text.split() if len(w) > 40)
    out = redact(text)
    assert blob[:40] not in out and "[REDACTED:base64_secret_text]" in out


@pytest.mark.parametrize("text", [
    f"CONFIG_B64={_b64('model: llama-3-8b' + chr(10) + 'max_tokens: 4096' + chr(10) + 'pad_token: <pad>' + chr(10))}",
    f"BLOB={base64.b64encode(bytes(range(200, 256)) + b'token' + bytes(range(40))).decode()}",
])
def test_base64_of_a_text_without_a_secret_stays(redact: Redactor, text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    "rawHeaders: [ 'Host', 'api.acme.io', 'X-Api-Key', 'iAJrnQiJu1ogRBHXVtjvHZPrudDaV86kfTgCuaJm', 'Accept', '*/*' ]",
    "rawHeaders: [\n  'Host',\n  'api.acme.io',\n  'X-Api-Key',\n  'iAJrnQiJu1ogRBHXVtjvHZPrudDaV86kfTgCuaJm',\n"
    "  'Accept',\n  '*/*'\n]",
    '{"req":{"rawHeaders":["Host","api.acme.io","X-Api-Key","iAJrnQiJu1ogRBHXVtjvHZPrudDaV86kfTgCuaJm"]}}',
])
def test_a_secret_header_in_node_s_raw_headers(redact: Redactor, text: str) -> None:
    """Node's rawHeaders: each header's name, then its value, as items of one list."""
    out = redact(text)
    assert "iAJrnQiJu1og" not in out and "api.acme.io" in out


@pytest.mark.parametrize("text", [
    "rawHeaders: [ 'Host', 'api.acme.io', 'Cookie', 'theme=dark', 'X-Request-Id', 'r-7f3a9c2e41b8' ]",
    "cors: { allowedHeaders: [ 'X-Api-Key', 'Authorization', 'Content-Type', 'Accept' ] }",
])
def test_raw_headers_without_a_secret_and_a_list_of_names_stay(redact: Redactor, text: str) -> None:
    assert redact(text) == text


def test_an_env_line_s_value_ends_at_a_shell_operator(redact: Redactor) -> None:
    assert redact("PASSWORD=hunter2x && ./run.sh") == "PASSWORD=[REDACTED:secret] && ./run.sh"
    assert "3x" not in redact("DB_PASSWORD=Tr0ub4dor&3x")


def test_a_program_s_name_in_a_path_is_no_command(redact: Redactor) -> None:
    """``wandb`` as a directory of a path is no ``wandb login KEY``: the word after a later "login" stays (the
    Hyperscan gate, which wants a blank after the program, and the plain one agree)."""
    text = "wandb: Find logs at: out/wandb/offline-run-5xxdv345/logs machine ftp.internal login trainer account ml"
    assert redact(text) == text == Redactor(prefer_hyperscan=False)(text)


RICH_TOKEN = "3tpKa_VH11R-Cs0CfepTgZO1mMWwca-T8o1WoU2hHCdvJkqI913oGe4QXzjaMtpK"
RICH_INDENT = " " * 29


def _rich_row(level: str, parts: list[str], path: str, width: int = 50) -> str:
    """A RichHandler row as rich/_log_render.py lays it out: time and level columns, the message's lines padded to
    the column's width, a blank, the path on the first line only."""
    first = f"[05/02/26 08:41:09] {level:<8} {parts[0]:<{width}} {path}"
    return "\n".join([first] + [RICH_INDENT + p for p in parts[1:]])


@pytest.mark.parametrize("text", [
    # a word that does not fit the rest of the line goes to the next
    _rich_row("INFO", ["request headers: {'Authorization': 'Bearer", RICH_TOKEN + "'}"], "client.py:88", 70),
    _rich_row("DEBUG", ["tracker settings: api_key=", RICH_TOKEN], "tracker.py:41"),
    # one longer than the column is cut at its width
    _rich_row("DEBUG", ["tracker settings:", ("api_key=" + RICH_TOKEN)[:50], ("api_key=" + RICH_TOKEN)[50:]],
              "tracker.py:41"),
])
def test_a_secret_rich_s_log_handler_wrapped(redact: Redactor, text: str) -> None:
    out = redact(text)
    assert not any(RICH_TOKEN[i:i + 8] in out for i in range(len(RICH_TOKEN) - 7))
    assert out.splitlines()[0].endswith(".py:88") or out.splitlines()[0].endswith(".py:41")


def test_a_rich_row_without_a_secret_stays(redact: Redactor) -> None:
    text = _rich_row("INFO", ["loading the model from /models/llama-3-8b with a", "max_tokens=4096 and a pad_token"],
                     "train.py:12") + "\nnext line"
    assert redact(text) == text
