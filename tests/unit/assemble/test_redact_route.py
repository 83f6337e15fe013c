"""Project routing, and which sources may claim a project by label."""

from __future__ import annotations

from types import SimpleNamespace

from streams.assemble.route import ProjectRouter, sanitize
from streams.assemble.trust import MEMO_ENTRIES, LabelTrust


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


def claims(**globs: list[str]) -> SimpleNamespace:
    return SimpleNamespace(**{"topics": [], "namespaces": [], "paths": [], "hosts": [], **globs})


def source(namespace: str | None = None, file: str | None = None, host: str | None = None) -> dict:
    return {"namespace": namespace, "file": file, "host": host}


def test_a_label_counts_only_from_a_source_allowed_to_claim_its_project() -> None:
    trust = LabelTrust({"team-a": claims(namespaces=["team-a-*"]), "team-b": claims(paths=["/data/b/*"],
                                                                                     hosts=["dgx-b*"])},
                       topic="logs.raw", known=["team-a", "team-b", "default"])
    r = ProjectRouter("default", known=["team-a", "team-b", "default"], use_namespace=False, trust=trust)
    assert r.project({"project": "team-a"}, source(namespace="team-a-jobs")) == "team-a"
    assert r.project({"project": "team-b"}, source(namespace="team-a-jobs")) == "default", "not team-a's to claim"
    assert r.project({"project": "team-b"}, source(file="/data/b/run.log")) == "team-b"
    assert r.project({"app.kubernetes.io/part-of": "team-b"}, source(host="dgx-b07")) == "team-b"
    assert r.project({"project": "team-b"}, source(host="dgx-a01")) == "default"
    assert r.project({"project": "Team-B"}, source(host="dgx-a01")) == "default", "case does not dodge the rule"
    assert r.project({"project": "elsewhere"}, source()) == "default"
    assert trust.take_refused() == {"team-b": 3, "(other)": 1}, "each refused record counted, cached or not"
    assert trust.take_refused() == {}, "taken once"
    # the same record again: the router's cache answers, the refusal is counted again
    r.project({"project": "team-b"}, source(namespace="team-a-jobs"))
    assert trust.take_refused() == {"team-b": 1}


def test_refusals_of_a_runaway_labeller_are_counted_in_bounded_memory() -> None:
    trust = LabelTrust({}, topic="logs.raw", known=["team-a"])
    trust.observe("team-a", None, None, None)
    for n in range(MEMO_ENTRIES + 500):
        trust.observe(f"job-{n}", None, None, None)
    assert len(trust._refused) <= MEMO_ENTRIES + 1
    assert trust.take_refused() == {"(other)": MEMO_ENTRIES + 500, "team-a": 1}


def test_an_untrusted_label_falls_back_to_the_source_rules() -> None:
    trust = LabelTrust({}, topic="logs.raw")
    r = ProjectRouter("misc", path_globs=[("/data/llama/*", "llama")], trust=trust)
    assert r.project({"project": "vllm"}, source(file="/data/llama/x.log")) == "llama"
    assert r.project({"project": "vllm"}, source(namespace="research")) == "research"
    assert r.project({"project": "vllm"}, source()) == "misc"


def test_a_topic_may_be_allowed_to_claim_a_project() -> None:
    trust = LabelTrust({"team-c": claims(topics=["logs.raw.team-c"])}, topic="logs.raw.team-c")
    assert ProjectRouter("default", trust=trust).project({"project": "team-c"}, source()) == "team-c"
    other = LabelTrust({"team-c": claims(topics=["logs.raw.team-c"])}, topic="logs.raw")
    assert ProjectRouter("default", trust=other).project({"project": "team-c"}, source()) == "default"


def test_trust_all_labels_honours_every_claim() -> None:
    trust = LabelTrust({}, trust_all=True)
    assert ProjectRouter("default", trust=trust).project({"project": "x"}, source()) == "x"
    assert trust.take_refused() == {}
