"""What real agents put on Kafka gives the same events as ``sluice parse`` of the file they tailed.

Each fixture under ``tests/fixtures/agents/<case>/`` holds the exact records (partition, key,
value) one agent produced for real corpus files with one of the example configs, and ``meta.json``
names the files. The records go through the assemble core as the worker feeds it (one Assembler
per partition); the events of each source must be those of ``parse_files`` on the file: same count,
same messages, same line counts (so the same multiline boundaries).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from devtools.agents.records import Recorded, load
from streams.assemble.fields import FLAGS_KEY
from streams.assemble.pipeline import Assembler, RawRecord, parse_files

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "agents"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "records.jsonl").exists())
TS = 1_700_000_000_000


# What depends on the transport, not on the lines: where the event came from (and so its project
# route and the fields its pod labels give), its id, and the time of a line that carries none (the
# agent's clock against the file's).
TRANSPORT = frozenset(("event_id", "source", "raw", "ingest_ts", "labels", "timestamp", "project",
                       "task_id", "model_name", "task_type", "phase"))


def _shape(ev: dict) -> str:
    """The event without its transport fields, and without empty lines.

    rsyslog's imfile and the collector's filelog receiver send no record for an empty line (Fluent
    Bit does): an event that spans one has the same first and last lines and the same other lines.
    """
    kept = {k: v for k, v in ev.items() if k not in TRANSPORT}
    attrs = dict(kept.get("attributes") or {})
    flags = [f for f in (attrs.pop(FLAGS_KEY, "") or "").split(",") if f]
    if "timestamp_out_of_window" in flags:
        # the window is measured from the time the line was read: the agent's clock, not the file's
        flags.remove("timestamp_out_of_window")
        attrs.pop("timestamp", None)
    if flags:
        attrs[FLAGS_KEY] = ",".join(flags)
    kept["attributes"] = attrs
    if "message" in kept:
        lines = [ln for ln in kept["message"].split("\n") if ln]
        kept["message"], kept["line_count"] = "\n".join(lines), len(lines)
    return json.dumps(kept, sort_keys=True, default=str)


def agent_events(records: list[Recorded]) -> dict[tuple[int, bytes | None], list[dict]]:
    """Events per (partition, key), through one Assembler per partition as the worker runs it."""
    by_partition: dict[int, list[Recorded]] = defaultdict(list)
    for r in records:
        by_partition[r.partition].append(r)
    out: dict[tuple[int, bytes | None], list[dict]] = defaultdict(list)
    for partition, recs in by_partition.items():
        asm = Assembler()
        key_of: dict[int, bytes | None] = {}
        outputs = []
        for r in sorted(recs, key=lambda r: r.offset):
            key_of[r.offset] = r.key
            outputs += asm.feed(RawRecord("logs.raw", partition, r.offset, r.value, r.key, TS))
        outputs += asm.flush_all()
        for o in outputs:
            assert o.kind != "dead_letter", o.value["error"]
            out[(partition, key_of[o.value["raw"]["first_offset"]])].append(o.value)
    return out


def file_events(path: Path) -> list[dict]:
    return list(parse_files([path], default_ts_ms=TS))


@pytest.mark.parametrize("case", CASES)
def test_agent_records_give_the_events_of_the_file(case: str) -> None:
    meta = json.loads((FIXTURES / case / "meta.json").read_text())
    records = load(FIXTURES / case / "records.jsonl")
    assert records, f"{case}: no records"
    partitions_of_key: dict[bytes | None, set[int]] = defaultdict(set)
    for r in records:
        partitions_of_key[r.key].add(r.partition)
    assert all(len(p) == 1 for p in partitions_of_key.values()), f"{case}: a key on several partitions"

    expected = {f: Counter(map(_shape, file_events(REPO / f))) for f in meta["inputs"]}
    got = agent_events(records)
    matched = {}
    for group, events in got.items():
        shapes = Counter(map(_shape, events))
        # two inputs can hold the same lines (the CRI and docker layouts of one log): either will do
        hits = [f for f, want in expected.items() if want == shapes and f not in matched]
        if not hits:
            near = min(expected, key=lambda f: sum(((expected[f] - shapes) + (shapes - expected[f])).values()))
            missing = list((expected[near] - shapes).elements())[:3]
            extra = list((shapes - expected[near]).elements())[:3]
            pytest.fail(f"{case}: source {group} matches no input file; nearest {near}:\n"
                        f"  missing {missing}\n  extra {extra}")
        matched[hits[0]] = group
        for ev in events:  # where the agent sends the file path, it reaches the event
            if ev["source"]["file"] and not meta.get("container_log"):
                assert Path(ev["source"]["file"]).name == Path(hits[0]).name
    assert sorted(matched) == sorted(meta["inputs"]), f"{case}: files with no source: " \
        f"{sorted(set(meta['inputs']) - set(matched))}"


# The collector's raw encoding sends the body alone: its records name no pod.
KUBERNETES_CASES = [c for c in CASES if json.loads((FIXTURES / c / "meta.json").read_text()).get("container_log")
                    and not c.endswith("-raw")]


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_container_logs_carry_their_pod(case: str) -> None:
    """Where the agent adds Kubernetes metadata, every event of a container log names its pod."""
    records = load(FIXTURES / case / "records.jsonl")
    events = [e for evs in agent_events(records).values() for e in evs]
    with_pod = [e for e in events if e["source"]["pod"]]
    # the collector's container operator cannot read the pod of a line it could not parse (not docker)
    assert len(with_pod) >= 0.9 * len(events), f"{case}: {len(events) - len(with_pod)} events name no pod"
    for e in with_pod:
        assert e["source"]["namespace"] == "train" and e["source"]["container"] == "trainer"
        assert e["source"]["stream"] in ("stdout", "stderr")
        assert e["labels"].get("k8s.pod.uid", "").startswith("0c3f6f62")
