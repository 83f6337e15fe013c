"""Secret redaction: each kind, in each place it appears, and the ordinary lines it must leave alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from devtools.testing.secret_samples import NOT_SECRETS, SAMPLES, SECRET_FRAGMENT_CHARS
from streams.assemble.pipeline import Assembler, RawRecord, parse_files
from streams.assemble.redact import OWN_FIELDS, TEXT_FIELDS, Redactor, redactor_from
from streams.assemble.secret_gate import hyperscan_expression
from streams.assemble.secret_rules import DEFAULT_RULES, SecretRule
from streams.config import RedactionSettings

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


# the held-out parts of corpus/wild: only the lead scores them, so no test reads them
HELD_OUT_PARTS = ("test", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7")
# the parts of corpus/wild collected to develop rules on (read by these tests)
DEV_PARTS = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8", "dev9", "dev10", "dev11", "dev12", "dev13",
             "dev14", "dev15", "dev16", "dev17", "dev18", "dev19", "dev20", "dev21", "dev22", "dev23", "dev24", "dev25",
             "dev26", "dev27", "dev28", "dev29", "dev30", "dev31", "dev32", "dev33", "dev34", "dev35",
             "dev36")


def corpus_logs(corpus: Path) -> list[Path]:
    """Every log of the corpus but the held-out parts of corpus/wild (HELD_OUT_PARTS)."""
    held_out = tuple(corpus / "wild" / part for part in HELD_OUT_PARTS)
    return [p for p in sorted(corpus.rglob("*.log")) if not any(p.is_relative_to(h) for h in held_out)]


def test_the_held_out_parts_are_left_out_of_what_these_tests_read(corpus: Path) -> None:
    """Held-out parts are scored by the lead only, so their lines must never show up in a failure here."""
    read = corpus_logs(corpus)
    assert read
    # every part of corpus/wild but the development parts is held out, so a part added later must be
    # listed in HELD_OUT_PARTS or DEV_PARTS
    wild = corpus / "wild"
    held = [p for p in read if p.is_relative_to(wild) and p.relative_to(wild).parts[0] not in DEV_PARTS]
    assert held == []


def leaked(secret: str, text: str) -> list[str]:
    """Runs of the secret (SECRET_FRAGMENT_CHARS long) still in ``text``."""
    n = SECRET_FRAGMENT_CHARS
    return [secret[i:i + n] for i in range(max(1, len(secret) - n + 1)) if secret[i:i + n] in text]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_of_secret_is_redacted_in_each_line_it_appears_in(redact: Redactor, kind: str) -> None:
    secret, lines = SAMPLES[kind]
    for line in lines:
        out = redact(line)
        assert not leaked(secret, out), (line, out)
        assert "[REDACTED:" in out


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_ordinary_lines_are_left_alone(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_every_built_in_rule_has_a_sample_it_redacts(redact: Redactor) -> None:
    """No rule without a test: each rule, run alone, finds a secret in at least one sample."""
    lines = [redact.normalised(line) for _s, ls in SAMPLES.values() for line in ls]
    idle = [rule.kind for rule, find in zip(redact.rules, redact._finders, strict=True)
            if not any(find(line) for line in lines)]
    assert idle == []


def test_no_line_of_the_corpus_is_taken_for_a_secret(corpus: Path, redact: Redactor) -> None:
    """The corpus holds no credentials: every rule must leave every real log line alone."""
    changed = [(p.name, line) for p in corpus_logs(corpus)
               for line in p.read_text(errors="replace").splitlines() if redact(line) != line]
    assert changed == []


def test_the_hyperscan_gate_and_the_plain_one_redact_alike(corpus: Path) -> None:
    """The gate only decides which rules run: with Hyperscan, with substring needles, the same output,
    on every corpus line alone and with a secret appended."""
    fast, plain = Redactor(), Redactor(prefer_hyperscan=False)
    assert type(fast.gate).__name__ == "HyperscanGate"
    samples = [line for _s, lines in SAMPLES.values() for line in lines]
    lines = [line for p in corpus_logs(corpus) for line in p.read_text(errors="replace").splitlines()]
    for n, line in enumerate(lines[::3]):
        text = f"{line} {samples[n % len(samples)]}"
        assert fast(text) == plain(text), text
    for text in samples + NOT_SECRETS:
        assert fast(text) == plain(text) , text


def test_every_default_rule_compiles_into_one_hyperscan_database() -> None:
    """A rule Hyperscan cannot take (a back-reference, say) makes every start compile each rule alone to find
    it, and leaves that rule gated by its needles only; the gate's dialect must take them all at once."""
    hyperscan = pytest.importorskip("hyperscan")
    expressions = [hyperscan_expression(r) for r in DEFAULT_RULES]
    flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
    hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
        expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
        flags=[flags] * len(expressions))


def test_a_back_reference_gates_as_its_groups_pattern() -> None:
    rule = SecretRule("quoted", pattern=r"\bnetloc=(?P<q>['\"(])[^'\"\s]*(?P=q) (?P<b>[]x(])(?P=b)")
    gate = hyperscan_expression(rule).decode()
    assert "(?P=" not in gate
    assert re.search(gate, "netloc='user:pw@host' ]]") and re.search(gate, 'netloc="user:pw@host" ((')


def test_format_characters_and_lookalike_letters_cannot_hide_a_key_name(redact: Redactor) -> None:
    for line in ["pass\u200bword=hunter2x", "pass\ufeffword=hunter2x", "ｐａｓｓｗｏｒｄ=hunter2x",
                 "pa\u017fsword=hunter2x", "credent\u0131al: hunter2x", "pass\u00adword: hunter2x",
                 "API\u2060_KEY=hunter2x"]:
        out = redact(line)
        assert "hunter2x" not in out and "[REDACTED:" in out, (line, out)
        assert out.startswith(line[:3]), "the characters before the secret are kept as they were"


def test_a_value_is_redacted_by_its_key_name(redact: Redactor) -> None:
    assert redact.mapping({"password": "x", "db.password": "y y", "dbPassword": "z", "token": "pad"}) == {
        "password": "[REDACTED:secret]", "db.password": "[REDACTED:secret]", "dbPassword": "[REDACTED:secret]",
        "token": "pad"}
    # weak key names need a credential-looking value
    assert redact.mapping({"hf_token": "a1b2c3d4e5f6g7h8"}) == {"hf_token": "[REDACTED:secret]"}
    kept = {"password_reset_url": "https://id.example.com/reset", "secret_name": "db-creds", "token_acc": "0.93",
            "max_tokens": "512", "pad_token": "<pad>", "password": "None"}
    assert redact.mapping(kept) is kept


def test_a_map_seen_before_is_kept_as_it_is_whatever_its_strings_objects(redact: Redactor) -> None:
    """The memos give back the strings of the first event that had them: each later event's keys, equal but
    other objects, were taken for changed ones and the map rebuilt once a key (100 keys: 2 ms an event)."""
    first = {f"loss_{i}": i + 0.5 for i in range(100)} | {"run": "r-1", "note": "token_acc 0.93"}
    assert redact.mapping(first) is first
    again = json.loads(json.dumps(first))  # equal, with strings of its own (as each event's JSON parse makes)
    assert redact.mapping(again) is again


def test_key_name_families_need_a_generated_value(redact: Redactor) -> None:
    """"<word>_key", "session id" and values under a cookies map are secrets when the value is machine-made
    (16+ token characters, entropy 3.5+); a qualifier naming a public or index key keeps the value."""
    made = "q7Xv2LpR9sKd4TnW8yZb3MfH"
    assert redact.mapping({"AZURE_STORAGE_KEY": made, "req.cookies.theme": made, "session_id": made}) == {
        "AZURE_STORAGE_KEY": "[REDACTED:secret]", "req.cookies.theme": "[REDACTED:secret]",
        "session_id": "[REDACTED:secret]"}
    kept = {"cache_key": "step-1000", "partition_key": made, "public_key": made, "session_id": "42", "key": made}
    assert redact.mapping(kept) is kept


def test_a_list_under_a_secret_named_key_is_redacted_item_by_item(redact: Redactor) -> None:
    assert redact.mapping({"api_keys": ["Zq9xP2mK7vL4", "b"], "tags": ["x"]}) == {
        "api_keys": ["[REDACTED:secret]", "[REDACTED:secret]"], "tags": ["x"]}


def test_a_password_keeps_its_ampersand_but_a_query_string_ends_it(redact: Redactor) -> None:
    assert redact("DB_PASSWORD=Tr0ub4dor&3x user=me") == "DB_PASSWORD=[REDACTED:secret] user=me"
    assert redact("GET /login?password=hunter2x&user=me") == "GET /login?password=[REDACTED:secret]&user=me"
    assert redact("PASSWORD=hunter2x && ./run.sh") == "PASSWORD=[REDACTED:secret] && ./run.sh"


def _event_record(text: str, offset: int, labels: dict | None = None, source: dict | None = None) -> RawRecord:
    envelope = {"log": text + "\n", "stream": "stdout", "time": "2026-11-30T10:00:00.000000000Z",
                "kubernetes": {"pod_name": "trainer-0", "namespace_name": "ml", "host": "gpu-1",
                               "labels": labels or {}}}
    if source:
        envelope.update(source)
    return RawRecord("logs.raw", 0, offset, json.dumps(envelope).encode(), b"gpu-1|trainer-0", 1_700_000_000_000)


def test_the_assembler_redacts_message_attributes_labels_and_source() -> None:
    hf = SAMPLES["huggingface_token"][0]
    pw = SAMPLES["json_password"][0]
    wandb = SAMPLES["env_wandb_api_key"][0]
    line = json.dumps({"msg": "login ok", "level": "info", "token": hf, "password": pw})
    asm = Assembler()
    out = asm.feed(_event_record(line, 0, labels={"WANDB_API_KEY": wandb, "team": f"x {hf}"})) + asm.flush_all()
    [event] = [o.value for o in out if o.kind == "event"]
    text = json.dumps(event)
    for secret in (hf, pw, wandb):
        assert not leaked(secret, text), (secret, text)
    assert event["labels"]["WANDB_API_KEY"] == "[REDACTED:secret]"
    assert event["attributes"]["password"] == "[REDACTED:secret]"


def test_a_step_metric_point_is_redacted_too() -> None:
    secret = SAMPLES["aws_access_key_id"][0]
    asm = Assembler()
    line = "{'loss': 1.5, 'learning_rate': 2e-05, 'epoch': 0.1}"
    out = asm.feed(_event_record(line, 0, labels={"task_id": f"run {secret}"})) + asm.flush_all()
    [point] = [o.value for o in out if o.kind == "metric"]
    assert secret not in json.dumps(point) and "[REDACTED:" in point["task_id"]


def test_a_block_cut_to_length_is_redacted_before_the_cut() -> None:
    """The cut would leave ``hf_`` and a few characters: a shortened token no rule matches."""
    hf = SAMPLES["huggingface_token"][0]
    max_bytes = 200
    line = "x" * (max_bytes - 10) + " " + hf
    asm = Assembler(max_bytes=max_bytes)
    out = asm.feed(RawRecord("logs.raw", 0, 0, line.encode(), b"k", 0)) + asm.flush_all()
    [event] = [o.value for o in out if o.kind == "event"]
    assert event["truncated"] and not leaked(hf[:12], event["message"]) and hf[:5] not in event["message"]


def test_a_private_key_split_across_blocks_is_redacted_in_both() -> None:
    """A size limit can close a block inside a PEM block: its head has no END line, its tail no BEGIN."""
    body = SAMPLES["pem_private_key"][1][0].split("\n")
    lines = ["loading key", *body[1:-1]]
    head, tail = "\n".join(lines[:4]), "\n".join(lines[4:])
    redact = Redactor()
    for part in (head, tail):
        out = redact(part)
        for secret_line in body[2:-2]:
            if secret_line in part:
                assert secret_line not in out, out
        assert out.count("\n") == part.count("\n"), "the line count is kept"


def test_sluice_parse_redacts_too(tmp_path: Path) -> None:
    secret = SAMPLES["cli_password_flag"][0]
    log = tmp_path / "run.log"
    log.write_text(SAMPLES["cli_password_flag"][1][0] + "\n")
    [event] = list(parse_files([log], default_ts_ms=0))
    assert secret not in json.dumps(event)


def test_a_dead_letter_keeps_its_bytes_and_gets_a_redacted_readable_text() -> None:
    secret = SAMPLES["github_pat"][0]
    raw = b"\x00\x7f\xff\xff\xf0" + f"token {secret} \x1b[31mred".encode()
    asm = Assembler()
    [letter] = asm.feed(RawRecord("logs.raw", 0, 5, raw, b"k", 0))
    assert letter.kind == "dead_letter"
    assert letter.value["original"] == raw, "re-drive needs the bytes as read"
    assert secret not in letter.value["text"] and "\x1b" not in letter.value["text"]
    assert "\\x1b[31mred" in letter.value["text"]


def test_the_text_fields_follow_the_contracts() -> None:
    """Every string, map or record field of an event and a metric point is either redacted or one the
    stage writes itself: a new field in a contract fails here until it is placed."""
    for kind, contract in (("event", "log_event"), ("metric", "metric_point")):
        schema = json.loads((SCHEMAS / f"{contract}.avsc").read_text())
        texty = set()
        for f in schema["fields"]:
            types = f["type"] if isinstance(f["type"], list) else [f["type"]]
            if any(t == "string" or (isinstance(t, dict) and t.get("type") in ("map", "record"))
                   or t in ("sluice.v1.Source",) for t in types):
                texty.add(f["name"])
        strings, maps = TEXT_FIELDS[kind]
        assert texty == set(strings) | set(maps) | OWN_FIELDS[kind], (kind, texty ^ (set(strings) | set(maps)
                                                                                   | OWN_FIELDS[kind]))


def test_configured_additions_and_exceptions() -> None:
    conf = RedactionSettings(extra_rules=[{"kind": "ticket", "pattern": r"\bTKT-\d{6}\b", "needles": ["tkt-"]}],
                             allow=[r"AKIAIOSFODNN7EXAMPLE"], secret_keys=["pin"])
    redact = redactor_from(conf)
    assert redact("fix TKT-123456 now") == "fix [REDACTED:ticket] now"
    assert redact("docs use AKIAIOSFODNN7EXAMPLE") == "docs use AKIAIOSFODNN7EXAMPLE"
    assert redact("card_pin=4711") == "card_pin=[REDACTED:secret]"
    assert Redactor()("card_pin=4711") == "card_pin=4711"


def test_a_configured_rule_without_needles_runs_on_every_text() -> None:
    redact = Redactor(extra_rules=[SecretRule("internal", pattern=r"INT[0-9]{8}")])
    assert redact("id INT12345678") == "id [REDACTED:internal]"


def test_output_leaves_shared_dicts_alone_when_nothing_changes(redact: Redactor) -> None:
    source = {"host": "gpu-1", "file": "/var/log/x.log", "namespace": None}
    event = SimpleNamespace(kind="event", value={"message": "hello", "source": source, "labels": {},
                                                 "attributes": {"format": "json"}})
    assert redact.output(event).value["source"] is source


def test_json_escapes_cannot_hide_a_key_name_or_a_url(redact: Redactor) -> None:
    """json.dumps writes non-ASCII as \\uXXXX (and some writers escape /): the rules see the characters."""
    pw = "Esc4ped-" + "x9"
    for obj in ({"cmd": f"ｐａｓｓｗｏｒｄ＝{pw}"}, {"cmd": f"pass\u200bword={pw}"},
                {"cmd": f"\u0070assword={pw}", "n": "\u00e9t\u00e9"}):
        text = json.dumps(obj)
        out = redact(text)
        assert pw not in out and "[REDACTED:" in out, (text, out)
        assert json.loads(out)["cmd"].startswith(obj["cmd"][:4]), "the escapes before the secret are kept"
    url = json.dumps({"u": f"https://deploy:{pw}@pypi.internal/simple"}).replace("/", "\\/")
    assert pw not in redact(url)
    bar = json.dumps({"progress": "\u2588" * 40 + " 50%"})
    assert redact(bar) is bar


def test_a_private_key_whose_lines_are_events_of_their_own_is_redacted_line_by_line() -> None:
    """A key printed line by line (each line its own event, as the merger leaves it) leaks no base64 line; the
    source's next ordinary line, after END or after a block cut short, is kept."""
    body = SAMPLES["pem_private_key"][1][0].split("\n")[1:-1]  # BEGIN .. END of the sample block
    other = ["-----BEGIN OPENSSH PRIVATE KEY-----", body[1], body[2], "epoch 1 done"]
    asm = Assembler()
    out = []
    for n, text in enumerate([*body, "step 5 done", *other]):
        out += asm.feed(_event_record(text, n))
    out += asm.flush_all()
    messages = [o.value["message"] for o in out if o.kind == "event"]
    text = "\n".join(messages)
    for line in body[1:-1]:
        assert not leaked(line.rstrip("="), text), (line, messages)
    assert "step 5 done" in messages and "epoch 1 done" in messages


def test_a_kubernetes_secret_printed_key_by_key_has_its_data_redacted() -> None:
    """`kubectl get secret -o yaml` echoed line by line: the merger leaves each top-level key an event of its
    own, and the data event after `kind: Secret` is redacted whatever its keys are called; a ConfigMap's is not."""
    value = "cG9zdGdyZXM6Ly91OnB3NzdAaC9k"
    lines = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: db", "type: Opaque", "data:",
             f"  DATABASE_URL: {value}", "---", "kind: ConfigMap", "data:", f"  DATABASE_URL: {value}"]
    asm = Assembler()
    out = [o for n, line in enumerate(lines) for o in asm.feed(_event_record(line, n))] + asm.flush_all()
    data = [o.value["message"] for o in out if o.kind == "event" and o.value["message"].startswith("data:")]
    assert len(data) == 2 and value not in data[0] and "[REDACTED:k8s_secret]" in data[0], data
    assert data[1] == f"data:\n  DATABASE_URL: {value}"


def test_json_secret_data_and_records_in_lists_are_redacted_in_attributes(redact: Redactor) -> None:
    assert redact.mapping({"kind": "Secret", "data.conn": "eHl6MTIz", "metadata.name": "db"}) == {
        "kind": "Secret", "data.conn": "[REDACTED:k8s_secret]", "metadata.name": "db"}
    assert redact.mapping({"users": [{"name": "a", "password": "hunter2x"}]}) == {
        "users": [{"name": "a", "password": "[REDACTED:secret]"}]}


def test_a_long_run_of_keywords_that_is_no_secret_does_not_hide_the_secret_after_it(redact: Redactor) -> None:
    # (the run is judged once as one value and not read again for keys inside it)
    line = "token:" * 2000 + " password=Tr0ub4dor3xyz and Authorization: Bearer eyJabc.def.ghi"
    out = redact(line)
    assert "Tr0ub4dor3xyz" not in out and "eyJabc.def.ghi" not in out
    assert out.startswith("token:token:")


def test_repeated_headers_each_lose_their_credential(redact: Redactor) -> None:
    line = " ".join(f"Authorization: Bearer tok{i:04d}Qx7vT2mN9pLw4RzK" for i in range(300))
    out = redact(line)
    assert "Qx7vT2mN9pLw4RzK" not in out


def test_a_record_that_names_its_secret_has_its_value_redacted_in_attributes(redact: Redactor) -> None:
    """terraform output -json and aws ssm get-parameter as lifted attributes: nested under the secret's key, and
    flattened with a shared dotted prefix; a record that names no secret is left alone."""
    value = "Tf" + "q7Xk2mZp9LwR4vN8sB3d"
    nested = redact.mapping({"out": {"db_password": {"sensitive": "true", "type": "string", "value": value}}})
    assert nested["out"]["db_password"]["value"] == "[REDACTED:secret]"
    flat = redact.mapping({"Parameter.Name": "/prod/db_password", "Parameter.Type": "SecureString",
                           "Parameter.Value": value, "format": "json"})
    assert flat["Parameter.Value"] == "[REDACTED:secret]" and flat["Parameter.Name"] == "/prod/db_password"
    plain = {"Parameter.Name": "/prod/log_level", "Parameter.Value": value}
    assert redact.mapping(plain) is plain
