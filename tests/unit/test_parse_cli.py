"""`sluice parse` as a user runs it: standard input, a kind on every output and no nulls, text for a
person, and the same routing as the workers (a project missing from the routing table goes to the
default project, said once)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from streams.cli.main import cli
from streams.config import REPO_ROOT
from streams.parse_output import as_text, kind_of, without_nulls

OOM = REPO_ROOT / "corpus" / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
SFT = REPO_ROOT / "corpus" / "training" / "ms_swift_sft_qwen2_7b_self_cognition_2024.log"


def parse(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["parse", *args], input=stdin, env=env)
    return result.exit_code, result.stdout, result.stderr


def test_stdin_gives_what_the_file_gives() -> None:
    code, from_stdin, _ = parse("-", stdin=OOM.read_bytes())
    assert code == 0
    _, from_file, _ = parse(str(OOM))
    strip = [{k: v for k, v in json.loads(line).items() if k not in ("event_id", "source", "ingest_ts", "timestamp")}
             for line in from_file.splitlines()]
    assert [{k: v for k, v in json.loads(line).items() if k not in ("event_id", "source", "ingest_ts", "timestamp")}
            for line in from_stdin.splitlines()] == strip
    assert {json.loads(line)["source"]["file"] for line in from_stdin.splitlines()} == {"-"}


def test_every_output_has_its_kind_and_no_null() -> None:
    code, out, _ = parse(str(SFT))
    outputs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and outputs
    assert {o["kind"] for o in outputs} == {"event", "metric"}, "the SFT log has step metrics and events"

    def has_null(value: object) -> bool:
        if isinstance(value, dict):
            return any(v is None or has_null(v) for v in value.values())
        return isinstance(value, list) and any(has_null(v) for v in value)

    assert not any(has_null(o) for o in outputs)
    assert all("metrics" in o for o in outputs if o["kind"] == "metric")


def test_text_is_one_block_per_event_with_its_lines_as_written() -> None:
    code, out, _ = parse("--format", "text", "--no-metrics", str(OOM))
    blocks = out.rstrip("\n").split("\n\n")
    _, as_json_lines, _ = parse("--no-metrics", str(OOM))
    events = [json.loads(line) for line in as_json_lines.splitlines()]
    assert code == 0 and len(blocks) == len(events)
    (oom_block,) = [b for b in blocks if "cuda_oom" in b.splitlines()[0]]
    (oom,) = [e for e in events if e.get("error_class") == "cuda_oom"]
    head, *body = oom_block.splitlines()
    assert "ERROR" in head and f"{oom['line_count']} lines" in head
    assert [line[4:] for line in body] == oom["message"].splitlines()


TRUST_ALL = {"SLUICE_ROUTING__TRUST_ALL_LABELS": "true"}


def test_a_project_missing_from_the_routing_table_is_routed_as_the_workers_route_it() -> None:
    code, out, err = parse("--label", "project=ghost", str(OOM), env=TRUST_ALL)
    assert code == 0
    assert {json.loads(line)["project"] for line in out.splitlines()} == {"default"}
    assert {json.loads(line)["labels"]["project"] for line in out.splitlines()} == {"ghost"}, "the label is kept"
    assert err.count("project 'ghost' is not in the routing table") == 1
    code, out, err = parse("--label", "project=ghost", str(OOM),
                           env={**TRUST_ALL, "SLUICE_ROUTING__PROJECTS": json.dumps({"default": {}, "ghost": {}})})
    assert {json.loads(line)["project"] for line in out.splitlines()} == {"ghost"} and err == ""


def test_a_label_the_source_may_not_claim_is_ignored_as_the_workers_ignore_it() -> None:
    routed = {"SLUICE_ROUTING__PROJECTS": json.dumps({"default": {}, "vision": {}})}
    code, out, err = parse("--label", "project=vision", str(OOM), env=routed)
    assert code == 0 and {json.loads(line)["project"] for line in out.splitlines()} == {"default"}
    assert err.count("a project label 'vision' from this source is not trusted") == 1
    claims = {**routed, "SLUICE_ROUTING__CLAIMS": json.dumps({"vision": {"paths": [str(OOM.parent) + "/*"]}})}
    code, out, err = parse("--label", "project=vision", str(OOM), env=claims)
    assert {json.loads(line)["project"] for line in out.splitlines()} == {"vision"} and err == ""


def test_output_pieces() -> None:
    assert without_nulls({"a": None, "b": {"c": None}, "d": [1, {"e": None}], "f": 0}) == {"d": [1, {}], "f": 0}
    assert kind_of({"metrics": {"loss": 1.0}, "event_id": "x"}) == "metric"
    assert kind_of({"message": "m"}) == "event" and kind_of({"kind": "dead_letter"}) == "dead_letter"
    assert as_text({"kind": "dead_letter", "error_type": "internal", "error": "boom"}) == "dead letter (internal): boom"
    assert as_text({"metrics": {"loss": 0.5}, "step": 3, "timestamp": 0, "project": "p"}) == \
        "1970-01-01T00:00:00.000Z metric step=3 loss=0.5  project=p"
