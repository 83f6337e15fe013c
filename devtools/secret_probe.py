"""Secrets probe: does any part of a secret survive the assemble path, and what else gets redacted?

    python -m devtools.secret_probe generate          # (re)write the fixtures from secret_probe_kinds, dev13-dev19
    python -m devtools.secret_probe generate dev13    # (re)write only dev13 (secret_probe_dev13); likewise dev14-dev19
    python -m devtools.secret_probe generate-shapes   # (re)write dev2 and holdout6 from secret_probe_shapes
    python -m devtools.secret_probe leaks [dev|dev2|...|dev19|holdout|holdout6] [-v]
    python -m devtools.secret_probe corpus [-v]       # redactions in the real corpora (false positives)
    python -m devtools.secret_probe decoys [-v]       # redactions in random-looking lines with no secret

``leaks`` writes each case to a file of its own and runs it through ``parse_files`` (the offline
assemble path: envelopes, partial joins, the multiline merger, parsing, field lifting, redaction), then
looks for any :data:`FRAGMENT` characters of the secret in every string of every output (an event's
message, attributes, labels, source and fields; a dead letter's error and readable text; its sealed
original bytes are not readable and are left out). A kind leaks when any of its cases does.

``corpus`` runs every log of corpus/training, corpus/wild/dev and corpus/loghub through the same path
and counts the ``[REDACTED:`` marks in the outputs: the corpora hold no credentials, so each is a
false positive (``-v`` prints them). The held-out corpora are never read.

A row may hold no secret but a ``keep``: a value that must come out as written (``mysql --password db``: the
word after a bare ``--password`` is the database). ``leaks`` counts the kept values it finds redacted as false
positives; ``dev4`` (nested YAML keys, mysql's optional password argument), ``dev5`` (credentials as cluster
tooling prints them, with look-alikes), ``dev6`` (secrets in JSON log records, language reprs, printed config
files, HashiCorp token outputs and wire dumps, with masked values and public keys as look-alikes) and ``dev7``
(credentials as protocol transcripts, cloud and cluster CLIs, registries, IaC dumps, reprs, env listings and
first-start banners print them, tokens split over lines; with printers' masks, hashes and ids as look-alikes) and
``dev8`` (credentials as ML platform and SRE tools print them: cloud CLIs' debug dumps, kubectl's round trippers,
signed URLs, notebook and server startup lines, tracker configs, scheduler env dumps, helm, vault, database logs; with
masks, token counts, digests and ids as look-alikes) and ``dev9`` (debug dumps of cloud CLIs and of HTTP clients in
Go, Node, Ruby and Erlang, session cookies, cluster and compose env listings, SQL and admin tools; with cookies that
hold no credential, hashes, ids and masks as look-alikes) and ``dev10`` (credentials as ML hubs, trackers, LLM clients,
signed URLs, registries, webhooks and secret stores print them; with revisions, digests, run ids, image previews,
tokenizer lines and masks as look-alikes) and ``dev11`` (credentials as debug and verbose modes print them: cloud CLIs,
kubectl, HTTP and grpc traces, JVM config dumps, IaC output, connection strings, LDAP, OAuth, HashiCorp, CI; with ids,
ETags, object keys, hashes, uids and masks as look-alikes) and ``dev12`` (vendors' token formats, key names in many
notations, CLI arguments, URLs and webhooks, split PEM keys, cookies, SQL; with references, ciphertext, hashes, ids and
masks as look-alikes) and ``dev13`` (:mod:`devtools.secret_probe_dev13`: vendors' token formats of gitleaks' rules and
trufflehog's detectors in JSON fields, env dumps, HTTP headers, command lines, URLs, config prints and reprs; with ids,
hashes, digests, masks, instance types and base64 of plain data as look-alikes),
and ``dev14`` (:mod:`devtools.secret_probe_dev14`: credentials inside structured and encoded
data: nested JSON, JSON in JSON strings, reprs, logfmt, form bodies, Basic auth, Kubernetes Secrets, env dumps, config
prints, connection URLs, wrapped JWTs, SigV4, .netrc, registry configs, escaped PEM keys; with hashes, ids, masks, key
names, paths and token counts as look-alikes) and ``dev15`` (:mod:`devtools.secret_probe_dev15`: credentials as
GPU-cluster jobs print them: dataclass, pydantic and argparse reprs, DeepSpeed's and vLLM's config prints, auth tuples,
launcher and scheduler env dumps with unusual variable names, container launch lines, curl -u, git and pip URLs,
percent-encoded userinfo, header lists, service-account JSON escaped once and twice, base64 kubeconfigs and env files, a
token a log handler wrapped; with LLM token counts, tokenizer tokens, hashes, run ids, NCCL settings and masks as
look-alikes) and ``dev16`` (:mod:`devtools.secret_probe_dev16`: credentials inside JSON log records of application
loggers (structlog, python-json-logger, pino, bunyan, zap, zerolog, logrus, slog, logstash-logback-encoder, Serilog,
ECS, Cloud Logging, OpenTelemetry) and of agents' envelopes around them (docker json-file, Fluent Bit, Vector,
Filebeat), under unusual key names, in JSON text, URLs, query strings, header pairs and attribute lists; with ids,
hashes, token counts, token_type, expires_in, key names and masks as look-alikes) and ``dev17``
(:mod:`devtools.secret_probe_dev17`: credentials inside structured records and dumps ML tooling prints: JSON values
under keys in every notation, JSON escaped in JSON, dict, Namespace, dataclass, OmegaConf and pydantic reprs, YAML,
TOML and INI dumps, env dumps and pods' name/value env lists, logfmt, URLs, HTTP debug dumps and connection strings;
with token counts, tokenizer paths, key names, masks, hashes, commit SHAs and ids as look-alikes) and ``dev18``
(:mod:`devtools.secret_probe_dev18`: maps of secrets under a secret-named parent key, password keys in other
languages, SealedSecret and ExternalSecret output, and the newest vendors' credential shapes in debug dumps, env
listings, config prints, traceback locals, curl -v transcripts and CLI output; with counts, masks, placeholders,
ciphertext, public keys, hashes and ids as look-alikes) and ``dev19`` (:mod:`devtools.secret_probe_dev19`: credentials
as other programs print them into a cluster's logs: tracebacks' locals, process listings, HTTP and RPC client debug,
connection strings, package and registry configs, IaC plans, trackers, webhooks, PEM keys one line per event, nested
encodings and keys in other scripts; with the printers' own masks, hashes, digests, ids and counts as look-alikes)
have such rows.

The holdout fixture holds a random third of the kinds; score it only once the rules are done. ``dev2`` and
``holdout6`` are the third round (:mod:`devtools.secret_probe_shapes`: shapes taken from the programs that print
them), split by case; holdout6 too is scored only once the rules are done.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from devtools import (
    CORPUS_DIR,
    secret_probe_dev13,
    secret_probe_dev14,
    secret_probe_dev15,
    secret_probe_dev16,
    secret_probe_dev17,
    secret_probe_dev18,
    secret_probe_dev19,
    secret_probe_shapes,
)
from devtools.secret_probe_kinds import cases, decoys, split
from streams.assemble.pipeline import parse_files

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "secret_probe"
FRAGMENT = 8
CORPORA = ("training", "wild/dev", "loghub")
_MARK = re.compile(r"\[REDACTED:(\w+)\]")


def generate(only: str = "") -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    written = {"dev13": secret_probe_dev13.write, "dev14": secret_probe_dev14.write, "dev15": secret_probe_dev15.write,
               "dev16": secret_probe_dev16.write, "dev17": secret_probe_dev17.write,
               "dev18": secret_probe_dev18.write, "dev19": secret_probe_dev19.write}
    for name, write in written.items():
        if only in ("", name):
            print(f"{name}: {write(FIXTURES / f'{name}.jsonl')} cases")
    if only in written:
        return
    dev, holdout = split()
    for name, kinds in (("dev", dev), ("holdout", holdout)):
        with (FIXTURES / f"{name}.jsonl").open("w") as f:
            for kd in kinds:
                for ctx, text in cases(kd):
                    f.write(json.dumps({"kind": kd.name, "source": kd.source, "context": ctx, "secret": kd.secret,
                                        "text": text}) + "\n")
        print(f"{name}: {len(kinds)} kinds")


def generate_shapes() -> None:
    dev2, holdout6 = secret_probe_shapes.split(secret_probe_shapes.rows())
    for name, rows in (("dev2", dev2), ("holdout6", holdout6)):
        with (FIXTURES / f"{name}.jsonl").open("w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        print(f"{name}: {len(rows)} cases")


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]


def strings(value: Any) -> Iterator[str]:
    """Every string an output carries (keys too), the sealed original of a dead letter left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k == "original":
                continue
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def fragments(secret: str) -> set[str]:
    """Every FRAGMENT-long run of the secret, within one of its lines (a PEM body is cut at newlines)."""
    out: set[str] = set()
    for piece in re.split(r"\s+", secret):
        out.update(piece[i:i + FRAGMENT] for i in range(len(piece) - FRAGMENT + 1))
    return out


def run_text(text: str, workdir: Path, n: int) -> list[dict]:
    path = workdir / f"case{n}.log"
    path.write_text(text + "\n")
    return list(parse_files([path], default_ts_ms=1714564800000))


def leaked(case: dict[str, Any], outputs: list[dict]) -> list[str]:
    seen = "\n".join(s for o in outputs for s in strings(o))
    return sorted(f for f in fragments(case["secret"]) if f in seen)


def lost(case: dict[str, Any], outputs: list[dict]) -> bool:
    """A ``keep`` row's value was redacted: no output string holds it as written."""
    return not any(case["keep"] in s for o in outputs for s in strings(o))


def leaks(name: str, verbose: bool) -> int:
    rows = load(name)
    by_kind: dict[str, list[tuple[str, bool]]] = {}
    kept = [r for r in rows if "keep" in r]
    rows = [r for r in rows if "keep" not in r]
    with tempfile.TemporaryDirectory() as tmp:
        false_positives = [c["context"] for n, c in enumerate(kept) if lost(c, run_text(c["text"], Path(tmp), n))]
        for n, case in enumerate(rows):
            outputs = run_text(case["text"], Path(tmp), n)
            bad = leaked(case, outputs)
            by_kind.setdefault(case["kind"], []).append((case["context"], bool(bad)))
            if bad and verbose:
                print(f"LEAK {case['kind']}/{case['context']}:")
                for o in outputs:
                    print("   ", json.dumps({k: v for k, v in o.items() if k in ("message", "attributes", "error",
                                                                                    "text") and v})[:600])
    leaking = {k: [c for c, bad in v if bad] for k, v in by_kind.items() if any(bad for _c, bad in v)}
    n_cases = sum(len(v) for v in by_kind.values())
    n_bad = sum(len(v) for v in leaking.values())
    for kind in sorted(by_kind):
        status = "LEAK " + ",".join(leaking[kind]) if kind in leaking else "ok"
        print(f"  {kind:36s} {status}")
    print(f"{name}: {len(leaking)}/{len(by_kind)} kinds leak, {n_bad}/{n_cases} cases leak")
    if kept:
        for context in false_positives:
            print(f"  REDACTED (no secret) {context}")
        print(f"{name}: {len(false_positives)}/{len(kept)} values that are no secret redacted")
    return len(leaking) + len(false_positives)


def corpus_logs() -> list[Path]:
    return [p for c in CORPORA for p in sorted((CORPUS_DIR / c).rglob("*.log"))]


def corpus(verbose: bool) -> int:
    counts: Counter[str] = Counter()
    lines = 0
    for path in corpus_logs():
        for o in parse_files([path], default_ts_ms=1714564800000):
            for s in strings(o):
                marks = _MARK.findall(s)
                if marks:
                    lines += 1
                    counts.update(marks)
                    if verbose:
                        print(f"{path.relative_to(CORPUS_DIR)}: {s[:300]!r}")
    total = sum(counts.values())
    print(f"corpus ({', '.join(CORPORA)}; {len(corpus_logs())} files): {total} redactions in {lines} strings "
          f"{dict(counts)}")
    return total


def decoy_lines(verbose: bool) -> int:
    """Redactions in random-looking lines that hold no secret (hashes, ids, addresses, tensors)."""
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n, text in enumerate(decoys()):
            for o in run_text(text, Path(tmp), n):
                for s in strings(o):
                    marks = _MARK.findall(s)
                    counts.update(marks)
                    if marks and verbose:
                        print(f"  {s[:300]!r}")
    total = sum(counts.values())
    print(f"decoys ({len(decoys())} lines): {total} redactions {dict(counts)}")
    return total


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "leaks"
    verbose = "-v" in argv
    if cmd == "generate":
        generate(next((a for a in argv[2:] if not a.startswith("-")), ""))
        return 0
    if cmd == "generate-shapes":
        generate_shapes()
        return 0
    if cmd == "leaks":
        name = next((a for a in argv[2:] if not a.startswith("-")), "dev")
        return 1 if leaks(name, verbose) else 0
    if cmd == "corpus":
        return 1 if corpus(verbose) else 0
    if cmd == "decoys":
        return 1 if decoy_lines(verbose) else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
