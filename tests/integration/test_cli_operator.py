"""Every operator command as a user runs it, against the real stack, failures included.

Each test drives `sluice ...` (in process through click's runner, or as a real process where a worker
is involved) with SLUICE_* variables naming the test's own topics, groups, buckets and indices, and
checks the exit status (docs/operator-guide.md, "Exit status") and the first line of what it printed.
A server that is down is an address nothing listens on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.stack.base import free_port, stop_gracefully
from devtools.testing.elasticsearch import EventProducer, corpus_events, prepare_topics
from streams.avro_io import avro_deserializer, avro_serializer
from streams.cli.main import cli
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, Settings, load_settings
from streams.contracts import register_all
from streams.rawbatch import source_key
from streams.topics import create_topics, topic_specs

DAY = "2025-11-29"
DAY_MS = 1_764_374_400_000  # 2025-11-29T00:00:00Z


def sluice(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def first(text: str) -> str:
    return text.splitlines()[0] if text.strip() else ""


# -- servers that do not answer ----------------------------------------------------------------

KAFKA_COMMANDS = [
    ["dlq", "ls"], ["dlq", "redrive"], ["top", "--once"], ["topics", "list"], ["topics", "create"],
    ["replay", "--topic", "logs.events.default", "--into", "es"], ["project", "list"],
]


def test_kafka_down_is_one_line_naming_kafka_and_exit_4() -> None:
    address = f"127.0.0.1:{free_port()}"
    for args in KAFKA_COMMANDS:
        started = time.monotonic()
        result = sluice(*args, env={"SLUICE_KAFKA__BOOTSTRAP_SERVERS": address})
        assert result.exit_code == 4, (args, result.output)
        assert result.stdout == "", (args, result.stdout)
        assert result.stderr.count("\n") == 1, (args, result.stderr)
        assert first(result.stderr).startswith(f"sluice: cannot reach Kafka at {address} ("), result.stderr
        assert "kafka.bootstrap_servers (SLUICE_KAFKA__BOOTSTRAP_SERVERS)" in result.stderr
        assert time.monotonic() - started < 8, f"{args}: refused connections are reported at once"


def test_debug_adds_the_traceback_and_keeps_the_line_last() -> None:
    address = f"127.0.0.1:{free_port()}"
    result = sluice("--debug", "dlq", "ls", env={"SLUICE_KAFKA__BOOTSTRAP_SERVERS": address})
    assert result.exit_code == 4
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"sluice: cannot reach Kafka at {address}")


def test_elasticsearch_and_object_store_down(tmp_path: Path) -> None:
    es = f"http://127.0.0.1:{free_port()}"
    for args in (["summary", "--day", DAY], ["rehydrate", "--project", "default", "--task", "t", "--from", DAY,
                                              "--to", DAY]):
        result = sluice(*args, env={"SLUICE_ELASTICSEARCH__URL": es})
        assert result.exit_code == 4, result.output
        assert first(result.stderr).startswith(f"sluice: cannot reach Elasticsearch at {es} ("), result.stderr
    s3 = f"http://127.0.0.1:{free_port()}"
    result = sluice("rehydrate", "--project", "default", "--task", "t", "--from", DAY, "--to", DAY,
                    env={"SLUICE_OBJECT_STORE__ENDPOINT_URL": s3})
    assert result.exit_code == 4, result.output
    assert first(result.stderr).startswith(f"sluice: cannot reach the object store at {s3} ("), result.stderr
    result = sluice("replay", "--topic", "logs.events.default", "--into", "es",
                    env={"SLUICE_ELASTICSEARCH__URL": es})
    assert result.exit_code == 4 and "cannot reach Elasticsearch" in first(result.stderr), result.output


def test_invalid_configuration_is_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "sluice.yaml"
    bad.write_text("kafka: [unclosed\n")
    result = sluice("dlq", "ls", env={"SLUICE_CONFIG": str(bad)})
    assert result.exit_code == 3, result.output
    assert result.stderr.count("\n") == 1
    assert first(result.stderr).startswith(f"sluice: {bad}: line 2, column 1 is not valid YAML"), result.stderr
    assert "Traceback" not in result.stderr
    typo = sluice("dlq", "ls", env={"SLUICE_KAFKA__BOOTSTRAP_SERVER": "127.0.0.1:1"})
    assert typo.exit_code == 3 and "did you mean SLUICE_KAFKA__BOOTSTRAP_SERVERS?" in typo.stderr, typo.output


# -- dlq ls ------------------------------------------------------------------------------------

def write_letters(settings: Settings, letters: list[dict[str, Any]], transactional: bool = False) -> None:
    serialize = avro_serializer(settings, "dead_letter")
    ctx = SerializationContext(settings.topics.dlq, MessageField.VALUE)
    conf = {**settings.kafka.client_config(), "enable.idempotence": True}
    if transactional:
        conf["transactional.id"] = f"letters-{uuid.uuid4().hex[:8]}"
    producer = Producer(conf)
    if transactional:
        producer.init_transactions(30)
        producer.begin_transaction()
    for letter in letters:
        producer.produce(settings.topics.dlq, key=letter.get("key"), value=serialize(letter, ctx))
    if transactional:
        producer.commit_transaction(30)
    assert producer.flush(20) == 0


def letter(origin: str, offset: int, ts_ms: int, error: str = "boom", stage: str = "assemble") -> dict[str, Any]:
    return {"original": b"line\n", "key": b"k", "topic": origin, "partition": 0, "offset": offset, "stage": stage,
            "error": error, "error_type": "undecodable", "timestamp": ts_ms, "attempts": 1, "headers": {}}


def with_dlq(stack: Settings, dlq: str) -> Settings:
    settings = stack.model_copy(update={"topics": stack.topics.model_copy(update={"dlq": dlq})})
    register_all(settings, only={f"{dlq}-value"})
    return settings


def test_dlq_ls_is_newest_last_and_says_how_many_more(stack: Settings, new_topic) -> None:
    settings = with_dlq(stack, new_topic("ls-dlq"))
    origin = new_topic("ls-origin")
    # Written out of time order: "newest" is the letter's time, not its offset.
    times = [DAY_MS + s * 1000 for s in (3, 1, 5, 2, 4)]
    write_letters(settings, [letter(origin, i, ts, error=f"error {i}") for i, ts in enumerate(times)])
    env = {"SLUICE_TOPICS__DLQ": settings.topics.dlq}

    result = sluice("dlq", "ls", "--limit", "2", env=env)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (f"5 of 5 dead letter(s) in {settings.topics.dlq} match; the newest 2 below, 3 older not "
                        "shown (raise --limit)")
    assert [re.search(r"error \d", ln)[0] for ln in lines[2:]] == ["error 4", "error 2"]  # times 4 s, 5 s

    result = sluice("dlq", "ls", "--contains", "error 1", "-o", "json", env=env)
    doc = json.loads(result.stdout)
    assert (doc["matched"], doc["older_not_shown"], doc["letters"][0]["offset"]) == (1, 0, 1)
    result = sluice("dlq", "ls", "--stage", "hot_sink", env=env)
    assert (result.exit_code, first(result.stdout)) == (
        0, f"no dead letter in {settings.topics.dlq} matches (5 read)")


# -- top ---------------------------------------------------------------------------------------

def test_top_counts_letters_shows_uncommitted_partitions_and_refuses_an_unknown_group(
        stack: Settings, new_topic, unique_name) -> None:
    raw, group = new_topic("top-raw", partitions=2), unique_name("top-group")
    settings = with_dlq(stack, new_topic("top-dlq"))
    # One transaction of three letters: four offsets (the commit marker takes one), three letters.
    write_letters(settings, [letter(raw, i, DAY_MS) for i in range(3)], transactional=True)
    consumer = Consumer({**stack.kafka.client_config(), "group.id": group})
    consumer.commit(offsets=[TopicPartition(raw, 0, 0)], asynchronous=False)  # partition 1: never committed
    consumer.close()
    env = {"SLUICE_TOPICS__RAW": raw, "SLUICE_TOPICS__DLQ": settings.topics.dlq, "SLUICE_ASSEMBLE__APP_ID": group}

    result = sluice("top", "--once", "--interval", "0.2", "--group", group, env=env)
    assert result.exit_code == 0, result.output
    rows = [ln.split() for ln in result.stdout.splitlines() if ln.startswith(group)]
    assert [(r[1], r[2], r[3]) for r in rows] == [(raw, "0", "0"), (raw, "1", "-")]
    assert "dead letters: 3 (+0.00/s)" in result.stdout.splitlines()
    assert first(result.stdout).split() == ["group", "topic", "part", "committed", "lag", "out/s"]

    nosuch = unique_name("nosuch")
    result = sluice("top", "--once", "--group", nosuch, env=env)
    assert result.exit_code == 5, result.output
    assert first(result.stderr).startswith(f"sluice: consumer group {nosuch} is not known to Kafka"), result.stderr

    # -o json without --once: a JSON document per refresh, for as long as it runs.
    proc = subprocess.Popen([sys.executable, "-m", "streams.cli", "top", "-o", "json", "--interval", "0.3",
                             "--group", group], env={**os.environ, **env}, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        docs = [json.loads(proc.stdout.readline()) for _ in range(2)]
    finally:
        stop_gracefully(proc, 10)
    assert all(d["dead_letters"] == 3 and len(d["groups"]) == 2 for d in docs)


# -- the assemble worker: re-drive that fails again, a new project --------------------------------

class Pipeline:
    def __init__(self, settings: Settings, env: dict[str, str], proc: subprocess.Popen[bytes], log: Path) -> None:
        self.settings, self.env, self.proc, self.log = settings, env, proc, log


@pytest.fixture(scope="module")
def pipeline(stack: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    """An assemble worker on topics of its own, with project ``newp`` routed but not yet added."""
    tag = f"op-{uuid.uuid4().hex[:8]}"
    topics = stack.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "raw_partitions": 1, "events_partitions": 1})
    routing = stack.routing.model_copy(update={"projects": {"default": stack.routing.projects["default"],
                                                            "newp": stack.routing.projects["default"]}})
    assemble = stack.assemble.model_copy(update={"app_id": f"{tag}-group", "idle_timeout_ms": 1000,
                                                 "take_within_s": 0.05})
    settings = stack.model_copy(update={"topics": topics, "routing": routing, "assemble": assemble})
    newp = topics.events_topic("newp")
    create_topics(settings, [s for s in topic_specs(settings) if s.name != newp])
    register_all(settings, only={f"{s.name}-value" for s in topic_specs(settings) if s.schema and s.name != newp})
    env = {"SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
           "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
           "SLUICE_TOPICS__ALERTS": topics.alerts, "SLUICE_TOPICS__RAW_PARTITIONS": "1",
           "SLUICE_TOPICS__EVENTS_PARTITIONS": "1", "SLUICE_ASSEMBLE__APP_ID": assemble.app_id,
           "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000", "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05",
           "SLUICE_ROUTING__PROJECTS": json.dumps({"default": {}, "newp": {}}),
           # One team's cluster: every source's project label counts (streams/assemble/trust.py).
           "SLUICE_ROUTING__TRUST_ALL_LABELS": "true",
           "SLUICE_OBSERVABILITY__PORT": "0", "SLUICE_OBSERVABILITY__HOST": "127.0.0.1"}
    log = tmp_path_factory.mktemp("assemble") / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "info"],
                                env={**os.environ, **env}, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield Pipeline(settings, env, proc, log)
    finally:
        stop_gracefully(proc, 20)


def produce_raw(settings: Settings, values: list[tuple[bytes, bytes]]) -> None:
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    for key, value in values:
        producer.produce(settings.topics.raw, key=key, value=value)
    assert producer.flush(20) == 0


def raw_batch(settings: Settings, text: str, labels: dict[str, str], host: str) -> tuple[bytes, bytes]:
    source = {"host": host, "namespace": None, "pod": None, "container": None, "file": "train.log",
              "stream": "stdout", "node_role": "trainer", "rank": None}
    value = avro_serializer(settings, "raw_batch")(
        {"source": source, "labels": labels, "lines": [{"line": text, "file_offset": 0, "ts": DAY_MS}],
         "sent_ts": None}, SerializationContext(settings.topics.raw, MessageField.VALUE))
    return source_key(source), value


def read_topic(settings: Settings, topic: str, until: int, timeout_s: float = 60,
               decode: bool = True) -> list[Any]:
    """At least ``until`` records of ``topic`` (read_committed), decoded unless told otherwise."""
    deserialize = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and len(out) < until:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                ctx = SerializationContext(topic, MessageField.VALUE)
                out.append(deserialize(msg.value(), ctx) if decode else (msg.value(), msg.headers()))
    finally:
        consumer.close()
    return out


def test_a_letter_that_fails_again_is_reported_and_sent_at_most_max_redrives_times(pipeline: Pipeline) -> None:
    settings, env = pipeline.settings, pipeline.env
    unknown = b"\x00" + (999_999).to_bytes(4, "big") + b"\x02junk"  # a schema id the registry never issued
    produce_raw(settings, [(b"bad-source", unknown)])
    assert len(read_topic(settings, settings.topics.dlq, 1)) == 1, "the worker dead-letters it"

    dlq = settings.topics.dlq
    for run in (1, 2, 3):
        result = sluice("dlq", "redrive", "--contains", "999999", "--wait", "45", "--max-redrives", "3", env=env)
        assert result.exit_code == 6, result.output
        lines = result.stdout.splitlines()
        assert lines[0] == f"1 dead letter(s) re-driven from {dlq} (group sluice-dlq-redrive; 1 of 1 read matched)"
        assert lines[1].startswith("1 failed again within"), result.stdout
        assert f"(re-driven {run} of 3 times)" in lines[2], result.stdout
        assert re.fullmatch(rf"re-sent 0@\d+ -> {re.escape(settings.topics.raw)}", first(result.stderr)), result.stderr
    result = sluice("dlq", "redrive", "--contains", "999999", "--wait", "5", "--max-redrives", "3", env=env)
    assert result.exit_code == 6, result.output
    assert first(result.stdout) == (f"0 dead letter(s) re-driven from {dlq} (group sluice-dlq-redrive; 1 of 1 read "
                                    "matched)")
    assert "1 not re-sent: re-driven 3 times already" in result.stdout

    sent = read_topic(settings, settings.topics.raw, 5, timeout_s=8, decode=False)
    assert [value for value, _headers in sent] == [unknown] * 4, "the record and three re-sends, no more"
    marks = [dict(headers or []).get("sluice-redrives") for _value, headers in sent]
    assert marks == [None, b"1", b"2", b"3"]
    assert pipeline.proc.poll() is None, "the worker is still running"


def test_a_new_project_is_one_command_and_its_early_events_come_back(pipeline: Pipeline) -> None:
    settings, env = pipeline.settings, pipeline.env
    newp = settings.topics.events_topic("newp")
    produce_raw(settings, [raw_batch(settings, "hello from newp", {"project": "newp", "task_id": "t1"}, "node-a"),
                           raw_batch(settings, "hello from ghost", {"project": "ghost"}, "node-b"),
                           raw_batch(settings, "again from ghost", {"project": "ghost"}, "node-c")])
    letters = list(read_topic(settings, settings.topics.dlq, 1))
    deadline = time.monotonic() + 60
    while not any(lt["error_type"] == "unroutable" for lt in letters) and time.monotonic() < deadline:
        letters = read_topic(settings, settings.topics.dlq, len(letters) + 1, timeout_s=5)
    (unroutable,) = [lt for lt in letters if lt["error_type"] == "unroutable"]
    assert unroutable["topic"] == newp and f"topic {newp} does not exist" in unroutable["error"]
    ghosts = read_topic(settings, settings.topics.events_topic("default"), 2)
    assert sorted(e["message"] for e in ghosts) == ["again from ghost", "hello from ghost"]
    assert {e["project"] for e in ghosts} == {"default"} and {e["labels"]["project"] for e in ghosts} == {"ghost"}
    assert pipeline.log.read_text().count("project 'ghost' is not in the routing table") == 1, "warned once"

    result = sluice("topics", "list", env=env)
    assert result.exit_code == 0, result.output
    assert f"{newp:<28} missing: run `sluice topics create`" in result.stdout.splitlines()

    result = sluice("project", "add", "newp", env=env)
    assert result.exit_code == 0, result.output
    assert first(result.stdout).startswith(f"project newp is ready: topic {newp} created, subject {newp}-value "
                                           "registered (schema id"), result.stdout
    again = sluice("project", "add", "newp", env=env)
    assert first(again.stdout).startswith(f"project newp is ready: topic {newp} existed, subject {newp}-value was "
                                          "registered"), again.stdout

    result = sluice("dlq", "redrive", "--error-type", "unroutable", "--group", "newp-redrive", "--wait", "0",
                    env=env)
    assert result.exit_code == 0, result.output
    assert first(result.stdout).startswith("1 dead letter(s) re-driven"), result.stdout
    (event,) = read_topic(settings, newp, 1)
    assert event["message"] == "hello from newp" and event["project"] == "newp" and event["task_id"] == "t1"
    assert pipeline.proc.poll() is None


# -- replay into s3, rehydrate, summary --------------------------------------------------------

def project_with_events(stack: Settings, corpus: Path, project: str, prefix: str, bucket: str,
                        new_topic: Any) -> tuple[Settings, dict[str, str], list[dict[str, Any]]]:
    """A project with its own index prefix and bucket, and a day of its events on its topic."""
    env = {"SLUICE_ROUTING__DEFAULT_PROJECT": project,
           "SLUICE_ROUTING__PROJECTS": json.dumps({project: {"index_prefix": prefix, "bucket": bucket}}),
           "SLUICE_TOPICS__DLQ": new_topic("rh-dlq"), "SLUICE_TOPICS__METRICS": new_topic("rh-metrics")}
    os.environ.update(env)
    try:
        settings = load_settings()
    finally:
        for key in env:
            del os.environ[key]
    prepare_topics(settings)
    events = list(corpus_events([corpus / "training/vllm_serve_jamba_cuda_oom_kv_cache.log"], project,
                                include_metrics=False))
    for i, event in enumerate(events):
        event["task_id"], event["timestamp"], event["ingest_ts"] = "run-7", DAY_MS + i * 1000, DAY_MS + i * 1000
    EventProducer(settings).send_all(events)
    return settings, env, events


def test_replay_into_s3_rehydrate_and_summary(stack: Settings, corpus: Path, unique_name, new_topic,
                                              tmp_path: Path) -> None:
    project = unique_name("rh").replace("-", "")
    prefix, bucket = f"custom-{project}", unique_name("rh-bucket")
    settings, env, events = project_with_events(stack, corpus, project, prefix, bucket, new_topic)
    topic, n = settings.topics.events_topic(project), len(events)

    result = sluice("replay", "--topic", topic, "--into", "s3", "--state", str(tmp_path / "s3.json"), env=env)
    assert result.exit_code == 0, result.output
    assert re.fullmatch(rf"replaying offsets .* of {topic} \({n} offsets\) into the object store; progress in .*",
                        first(result.stdout)), result.stdout
    assert result.stdout.splitlines()[-1] == f"replay of {topic} into the object store done: {n} written"
    keys = [o["Key"] for o in s3_client(settings.object_store).list_objects_v2(Bucket=bucket)["Contents"]]
    data = [k for k in keys if k.endswith(".avro")]
    assert data and all(k.startswith(f"{project}/run-7/{DAY}/") for k in data), keys

    # The hot tier holds the same events; rehydrating them must not add a copy.
    result = sluice("replay", "--topic", topic, "--into", "es", "--state", str(tmp_path / "es.json"), env=env)
    assert result.stdout.splitlines()[-1] == f"replay of {topic} into Elasticsearch done: {n} written", result.output
    es = es_client(settings.elasticsearch)
    pattern = f"{prefix}-*"
    es.indices.refresh(index=pattern)
    assert es.count(index=pattern)["count"] == n
    day_index = f"{prefix}-general-{DAY.replace('-', '.')}"
    hot_doc = es.get(index=day_index, id=events[0]["event_id"])["_source"]

    args = ["rehydrate", "--project", project, "--task", "run-7", "--from", DAY, "--to", DAY]
    result = sluice(*args, env=env)
    assert result.exit_code == 0, result.output
    assert first(result.stdout).startswith(f"rehydrated {n} event(s) of project {project}, task run-7 from "), \
        result.stdout
    assert first(result.stdout).endswith(f"in bucket {bucket} into {day_index}")
    assert es.count(index=pattern)["count"] == n, "the same ids in the same index: no double count"
    assert es.get(index=day_index, id=events[0]["event_id"])["_source"] == hot_doc, "the document the hot tier wrote"
    mapping = es.indices.get_mapping(index=day_index)[day_index]["mappings"]["properties"]
    assert mapping["timestamp"]["type"] == "date" and mapping["loss"]["type"] == "double"

    es.indices.delete(index=pattern)
    result = sluice(*args, env=env)
    assert result.exit_code == 0 and es.count(index=pattern)["count"] == n, result.output
    assert es.indices.get_mapping(index=day_index)[day_index]["mappings"]["properties"]["timestamp"]["type"] == "date"

    result = sluice("summary", "--day", DAY, "--project", project, env=env)
    assert result.exit_code == 0, result.output
    assert re.fullmatch(rf"{DAY} {project}: 1 job\(s\) seen, [01] failed; {n} event\(s\), 0 metric point\(s\)",
                        first(result.stdout)), result.stdout
    result = sluice("summary", "--day", "2025-11-28", "--project", project, env=env)
    assert result.exit_code == 0, result.output
    assert first(result.stdout).startswith(f"no events or metric points on 2025-11-28 (UTC) for project {project} "
                                           f"in {prefix}-*"), result.stdout

    result = sluice("rehydrate", "--project", project, "--task", "no-such-task", "--from", DAY, "--to", DAY, env=env)
    assert result.exit_code == 5, result.output
    assert first(result.stderr).startswith(f"sluice: no cold object of project {project}, task no-such-task")
    es.indices.delete(index=pattern)


# -- a worker whose store is down ----------------------------------------------------------------

def test_hot_worker_with_elasticsearch_down_is_alive_not_ready_and_says_why(stack: Settings, unique_name,
                                                                           worker_processes) -> None:
    es = f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, "SLUICE_ELASTICSEARCH__URL": es, "SLUICE_OBSERVABILITY__PORT": "0",
           "SLUICE_OBSERVABILITY__HOST": "127.0.0.1", "SLUICE_HOT__GROUP_ID": unique_name("hot-down")}
    proc, log = worker_processes(["worker", "hot", "--loglevel", "info"], env)
    deadline = time.monotonic() + 60
    port = None
    while port is None and time.monotonic() < deadline:
        found = re.search(r"metrics and health on http://127\.0\.0\.1:(\d+)/metrics", log.read_text())
        port = int(found[1]) if found else None
        time.sleep(0.3)
    assert port, log.read_text()
    ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
    while "cannot reach Elasticsearch" not in ready.text and time.monotonic() < deadline:
        time.sleep(0.5)
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
    assert ready.status_code == 503 and "cannot reach Elasticsearch: ConnectionError" in ready.text, ready.text
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200, "waiting is not stuck"
    assert proc.poll() is None
    assert "Traceback" not in log.read_text()
