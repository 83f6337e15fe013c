from __future__ import annotations

from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter, sanitize

# realistic shapes (random characters, not real credentials)
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
OPENAI = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6"
AKIA = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GHP = "ghp_" + "a" * 12 + "B" * 12 + "0123456789ab"
WANDB = "0123456789abcdef0123456789abcdef01234567"


def test_default_rules_redact_token_shapes():
    r = Redactor()
    text = (f"login --token {HF} key={OPENAI} id={AKIA} aws_secret_access_key={AWS_SECRET} gh={GHP} "
            f"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def WANDB_API_KEY={WANDB} password=hunter2 "
            f"url=postgresql://trainer:s3cr3t@db:5432/runs")
    out = r(text)
    for secret in (HF, OPENAI, AKIA, AWS_SECRET, GHP, "eyJhbGciOiJIUzI1NiJ9", WANDB, "hunter2", "s3cr3t"):
        assert secret not in out, secret
    assert "postgresql://trainer:[REDACTED]@db:5432/runs" in out
    assert "hf_[REDACTED]" in out


def test_plain_lines_untouched():
    r = Redactor()
    line = "[2023-08-01 01:04:13,441] [INFO] [real_accelerator.py:133:get_accelerator] Setting ds_accelerator to cuda"
    assert r(line) is line
    assert r("see https://wandb.ai/zhangnaifan7/LMSYS/runs/hh9anoxx") == "see https://wandb.ai/zhangnaifan7/LMSYS/runs/hh9anoxx"


def test_custom_rules():
    r = Redactor([("ticket", r"TKT-\d+", "TKT-[X]")])
    assert r("fix TKT-1234 password=x") == "fix TKT-[X] password=x"


def test_routing_order_and_sanitising():
    r = ProjectRouter(default_project="misc", path_globs=[("/data/llama/*", "llama")],
                      host_patterns=[(r"^dgx-a\d+", "team-a")], namespaces={"kube-system": "platform"})
    src = {"file": None, "host": None, "namespace": None}
    assert r.project({"project": "LLM Pretrain/v2"}, src) == "llm-pretrain-v2"
    assert r.project({"app.kubernetes.io/part-of": "vllm"}, src) == "vllm"
    assert r.project({}, {**src, "file": "/data/llama/run1.log"}) == "llama"
    assert r.project({}, {**src, "host": "dgx-a17"}) == "team-a"
    assert r.project({}, {**src, "namespace": "kube-system"}) == "platform"
    assert r.project({}, {**src, "namespace": "Research"}) == "research"
    assert r.project({}, src) == "misc"
    assert r.topic("llama") == "logs.events.llama"
    assert sanitize("../../etc") == "etc" and sanitize("") == "default"


def test_secrets_in_headers_env_and_json_are_redacted() -> None:
    from streams.assemble.redact import Redactor

    redact = Redactor()
    cases = {
        "Authorization: ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==": "VnVhQ2ZH",
        "curl -H 'Authorization: Basic ZWxhc3RpYzpjaGFuZ2VtZQ==' https://es:9200": "ZWxhc3Rp",
        "export ELASTIC_PASSWORD=changeme123": "changeme123",
        "SLUICE_KAFKA__SASL_PASSWORD=s3cr3t-Pa55w0rd sluice worker hot": "s3cr3t-Pa55w0rd",
        '{"model": "gpt", "api_key": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"}': "AIzaSyD",
        "client_secret: 6f1c9b2e-4d7a-4b3e-9a3c-1f2e3d4c5b6a": "6f1c9b2e",
        "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789": "AbCdEfGh",
        "push_to_hub_token = jDk39fK2lQmZ8xT4vB7nW1": "jDk39fK2",
    }
    for line, secret in cases.items():
        out = redact(line)
        assert secret not in out, (line, out)
        assert "[REDACTED" in out or "REDACTED]" in out, out


def test_training_configuration_that_merely_mentions_tokens_is_kept() -> None:
    from streams.assemble.redact import Redactor

    redact = Redactor()
    for line in ["pad_token: <pad>", "max_tokens=512", "tokenizer: meta-llama/Llama-2-7b-hf",
                 "Using bos_token, but it is not set yet.", "key_value_cache: enabled",
                 "num_key_value_heads = 8", "monkey patching attention"]:
        assert redact(line) == line


def test_no_line_of_the_corpus_is_taken_for_a_secret(corpus) -> None:
    """The corpus holds no credentials: every rule must leave every real log line alone."""
    from streams.assemble.redact import Redactor

    redact = Redactor()
    changed = [(p.name, line) for p in sorted(corpus.rglob("*.log"))
               for line in p.read_text(errors="replace").splitlines() if redact(line) != line]
    assert changed == []


SECRET_SNIPPETS = [
    f"login --token {HF}", f"key={OPENAI}", f"id={AKIA}", f"AWS_SECRET_ACCESS_KEY = {AWS_SECRET}", f"gh={GHP}",
    "AUTHORIZATION: BEARER eyJhbGciOiJIUzI1NiJ9.abc.def", f"WANDB_API_KEY={WANDB}", "PassWord=hunter2",
    "url=postgresql://trainer:s3cr3t@db:5432/runs", "Authorization: ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWky",
    "export ELASTIC_PASSWD=changeme123", '{"Api-Key": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"}',
    "Client_Credential: 6f1c9b2e-4d7a-4b3e", "PUSH_TO_HUB_TOKEN = jDk39fK2lQmZ8xT4vB7nW1", "pwd: x9",
]


def reference(text: str) -> str:
    """Every default rule run on ``text``, with no gate and no needles."""
    import re

    from streams.assemble.redact import DEFAULT_RULES

    for _name, rx, rep in DEFAULT_RULES:
        text = re.sub(rx, rep, text)  # re caches the compiled patterns
    return text


def test_the_needles_skip_only_rules_that_could_not_have_matched(corpus) -> None:
    """Every corpus line, alone and with each secret shape (in odd cases) appended: the same output as
    running every rule on every line, with no gate and no needles."""
    redact = Redactor()
    lines = [line for p in sorted(corpus.rglob("*.log")) for line in p.read_text(errors="replace").splitlines()]
    checked = 0
    for n, line in enumerate(lines):
        for text in (line, f"{line} {SECRET_SNIPPETS[n % len(SECRET_SNIPPETS)]}"):
            assert redact(text) == reference(text), text
            checked += 1
    assert checked > 50_000
    for snippet in SECRET_SNIPPETS:
        assert redact(snippet) == reference(snippet) != snippet, snippet


def test_letters_that_ignorecase_matches_beyond_ascii_pass_the_gate() -> None:
    """(?i) rules match the long s for s, the dotless i and İ for i, the Kelvin sign for k. Each such
    character, standing for its letter anywhere in each secret shape: the same output as every rule
    run with no gate."""
    import re
    import string
    import sys

    letter = re.compile(r"(?i)[a-z]")
    stands_for = {chr(cp): next(x for x in string.ascii_lowercase if re.fullmatch(f"(?i){x}", chr(cp)))
                  for cp in range(128, sys.maxunicode + 1) if letter.fullmatch(chr(cp))}
    assert {"\u017f", "\u0131", "\u0130", "\u212a"} <= set(stands_for), stands_for
    redact = Redactor()
    redacted_with: set[str] = set()
    for snippet in SECRET_SNIPPETS:
        for odd, ascii_letter in stands_for.items():
            for i, ch in enumerate(snippet):
                if ch.lower() == ascii_letter:
                    text = snippet[:i] + odd + snippet[i + 1:]
                    assert redact(text) == reference(text), text
                    if reference(text) != text:
                        redacted_with.add(odd)
    assert redacted_with == set(stands_for), "each odd letter stood inside a secret the rules redact"
