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
