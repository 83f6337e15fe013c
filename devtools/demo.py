"""The README's first command: a real burst from the corpus through every stage that exists.

Each step prints what it did and where to look, so a newcomer can check it by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devtools import CORPUS_DIR
from devtools.stack.base import free_listen_port, stop_gracefully
from streams.avro_io import avro_deserializer
from streams.clients import es_client
from streams.config import Settings
from streams.errors import SluiceError
from streams.produce import produce_files
from streams.sinks.objectstore.build import manifest_from_metadata
from streams.sinks.objectstore.store import ObjectStore

CORPUS = CORPUS_DIR
# A CUDA OOM at a barrier, an NCCL watchdog timeout, a vLLM OOM and an SFT run's step metrics.
DEMO_FILES = (
    "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
    "training/sglang_nccl_watchdog_timeout_hardwrapped.log",
    "training/vllm_serve_jamba_cuda_oom_kv_cache.log",
    "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log",  # step metrics of an SFT run
)


def demo_files() -> list[Path]:
    paths = [CORPUS / f for f in DEMO_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise SluiceError(f"demo corpus files missing: {missing}; they are part of the repository, under {CORPUS}")
    return paths


def produce_raw(settings: Settings, paths: list[Path], project: str, run_id: str) -> int:
    """The demo burst: each file one source on a host named after the run, so runs never mix."""

    def labels(path: Path) -> dict[str, str]:
        return {"project": project, "task_id": f"demo-{run_id}-{path.stem[:40]}", "task_type": "pretrain",
                "demo_run": run_id}

    return produce_files(settings, paths, labels, host=f"demo-{run_id}")


def read_topic(settings: Settings, topic: str, keep: Callable[[dict[str, Any]], bool],
               done: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Avro values of ``topic`` from the start (a throwaway group) that ``keep`` accepts, until ``done``."""
    from confluent_kafka import Consumer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserializer = avro_deserializer(settings)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"sluice-demo-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    ctx = SerializationContext(topic, MessageField.VALUE)
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while not done(found) and time.monotonic() < deadline:
            check_workers()
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            value = deserializer(msg.value(), ctx)
            if keep(value):
                found.append(value)
    finally:
        consumer.close()
    return found


def start_worker(stage: str, log_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"demo-worker-{stage}.log"
    proc = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", stage, "--loglevel", "warn"],
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    RUNNING[stage] = (proc, log)
    return proc


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    for stage, (running, _log) in list(RUNNING.items()):
        if running is proc:
            del RUNNING[stage]
    stop_gracefully(proc)


def es_count(settings: Settings, index: str, host: str) -> int:
    """Events of ``host`` in ``index``; 0 while the index does not exist yet, or while a shard the hot worker
    has just created is not started (a busy node answers such a search with 503)."""
    from elasticsearch import ApiError, NotFoundError

    try:
        resp = es_client(settings.elasticsearch).count(index=index, query={"term": {"source.host": host}})
    except NotFoundError:
        return 0
    except ApiError as exc:
        if exc.meta.status != 503:
            raise
        return 0
    return int(resp["count"])


def cold_objects(settings: Settings, prefix: str) -> tuple[int, int]:
    """(objects, events) under ``prefix``, from the manifest each cold object carries as metadata.

    The cold sink is still uploading while this is polled, and a listing may name an object whose HEAD
    then answers 404 (the store listed it mid-write): such an object is counted at the next poll."""
    from botocore.exceptions import ClientError

    store = ObjectStore(settings.object_store, settings.cold)
    bucket = settings.object_store.default_bucket
    objects = events = 0
    for key in store.list_keys(bucket, prefix):
        try:
            metadata = store.metadata(bucket, key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                raise
            continue
        manifest = manifest_from_metadata(metadata)
        if manifest is not None:
            objects += 1
            events += int(manifest["count"])
    return objects, events


def wait_for(what: Callable[[], Any], done: Callable[[Any], bool], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    value = what()
    while not done(value) and time.monotonic() < deadline:
        check_workers()
        time.sleep(1.0)
        value = what()
    return value


RUNNING: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}


def check_workers() -> None:
    """Fail at once, with the log to read, when a demo worker died (rather than time out later)."""
    for stage, (proc, log) in RUNNING.items():
        if proc.poll() is not None:
            raise SluiceError(f"the {stage} worker exited with code {proc.returncode}; read {log}")


def run_demo(settings: Settings, say: Callable[[str], None] = print, child_env: dict[str, str] | None = None) -> None:
    """``child_env``: what every worker process gets besides its own settings (``--config``, ``--log-format``)."""
    from streams.assemble.pipeline import parse_files
    from streams.contracts import register_all
    from streams.topics import create_topics

    create_topics(settings)
    register_all(settings)
    say(f"topics and schemas ready (registry {settings.registry.url})")

    paths = demo_files()
    run_id = uuid.uuid4().hex[:12]
    host = f"demo-{run_id}"
    sent = produce_raw(settings, paths, settings.routing.default_project, run_id)
    say(f"1. produced {sent} raw lines from {len(paths)} corpus files to {settings.topics.raw} "
        f"as Avro RawBatch records (source host {host})")

    offline = list(parse_files(paths))
    want_events = sum(1 for e in offline if "message" in e)
    want_metrics = len(offline) - want_events
    logs = settings.stack.dir / "logs"
    ports = {stage: free_listen_port() for stage in ("assemble", "hot", "cold", "watch")}
    base_env = child_env or {}
    workers = [
        start_worker("assemble", logs, {**base_env, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "2000",
                                        "SLUICE_OBSERVABILITY__PORT": str(ports["assemble"])}),
        start_worker("hot", logs, {**base_env, "SLUICE_OBSERVABILITY__PORT": str(ports["hot"])}),
        # A quiet partition's open objects are cut after this many seconds (the cut is recorded first).
        start_worker("cold", logs, {**base_env, "SLUICE_COLD__IDLE_FLUSH_S": "3",
                                    "SLUICE_OBSERVABILITY__PORT": str(ports["cold"])}),
        start_worker("watch", logs, {**base_env, "SLUICE_OBSERVABILITY__PORT": str(ports["watch"])}),
    ]
    try:
        unique = show_assemble(settings, say, host, sent, want_events, want_metrics, logs)
        show_hot(settings, say, host, len(unique), want_metrics, logs)
        show_cold(settings, say, f"{settings.routing.default_project}/demo-{run_id}", len(unique), logs)
        show_alerts(settings, say, f"demo-{run_id}-", logs)
        say("6. each worker's Prometheus metrics, read while it runs: "
            + ", ".join(f"{stage} {metric_summary(port)}" for stage, port in ports.items()))
        say("   look: curl http://127.0.0.1:<port>/metrics on a running `sluice worker <stage>` "
            "(observability.port, 9108 by default)")
    finally:
        for proc in workers:
            stop_worker(proc)


def show_assemble(settings: Settings, say: Callable[[str], None], host: str, sent: int, want_events: int,
                  want_metrics: int, logs: Path) -> dict[str, dict[str, Any]]:
    events = read_topic(
        settings, settings.topics.events_topic(settings.routing.default_project),
        keep=lambda v: v["source"].get("host") == host,
        done=lambda found: len({e["event_id"] for e in found}) >= want_events, timeout_s=120,
    )
    metrics = read_topic(
        settings, settings.topics.metrics, keep=lambda v: v["source"].get("host") == host,
        done=lambda found: len({m["event_id"] for m in found}) >= want_metrics, timeout_s=30,
    )
    unique = {e["event_id"]: e for e in events}
    if len(unique) < want_events:
        raise SluiceError(f"assemble produced {len(unique)} of {want_events} events in 120 s; "
                          f"read {logs / 'demo-worker-assemble.log'}")
    classes = Counter(e["error_class"] for e in unique.values() if e["error_class"])
    merged = sum(1 for e in unique.values() if e["line_count"] > 1)
    say(f"2. assemble: {sent} lines became {len(unique)} events on "
        f"{settings.topics.events_topic(settings.routing.default_project)} ({merged} multiline, "
        f"errors: {dict(classes)})")
    steps = sorted(m["step"] for m in {m["event_id"]: m for m in metrics}.values() if m["step"] is not None)
    losses = [m["metrics"].get("loss") for m in metrics if "loss" in m["metrics"]]
    say(f"   {len({m['event_id'] for m in metrics})} step-metric lines are metric points on {settings.topics.metrics}"
        + (f" (steps {steps[0]}..{steps[-1]}, loss {losses[0]} -> {losses[-1]})" if steps and losses else ""))
    oom = next((e for e in unique.values() if e["error_class"] == "cuda_oom"), None)
    if oom is not None:
        first, last = oom["message"].splitlines()[0], oom["message"].splitlines()[-1]
        say(f"   e.g. {oom['line_count']}-line {oom['error_type']} event: {first[:60]!r} ... {last[:80]!r}")
    say("   look: sluice parse <file>  (the same stage offline, one JSON event per line)")
    return unique


def show_hot(settings: Settings, say: Callable[[str], None], host: str, want: int, want_metrics: int,
             logs: Path) -> None:
    project = settings.routing.default_project
    in_es = wait_for(lambda: es_count(settings, f"sluice-logs-{project}-*", host), lambda n: n >= want, 120)
    # Metric points come from their own topic through their own batches: wait for them on their own.
    metrics_in_es = wait_for(lambda: es_count(settings, f"sluice-metrics-{project}-*", host),
                             lambda n: n >= want_metrics, 60)
    say(f"3. hot sink: {in_es} events in Elasticsearch (sluice-logs-{project}-*) and {metrics_in_es} metric points "
        f"(sluice-metrics-{project}-*), _id = event_id")
    say(f"   look: curl '{settings.elasticsearch.url}/sluice-logs-{project}-*/_search?q=error_class:cuda_oom"
        f"%20AND%20source.host:{host}&pretty'")
    if in_es < want or metrics_in_es < want_metrics:
        raise SluiceError(f"only {in_es} of {want} events and {metrics_in_es} of {want_metrics} metric points "
                          f"reached Elasticsearch; read {logs / 'demo-worker-hot.log'}")


def show_cold(settings: Settings, say: Callable[[str], None], prefix: str, want: int, logs: Path) -> None:
    objects, in_cold = wait_for(lambda: cold_objects(settings, prefix), lambda oe: oe[1] >= want, 120)
    bucket = settings.object_store.default_bucket
    say(f"4. cold sink: {in_cold} events in {objects} Avro objects under s3://{bucket}/{prefix}*/ "
        "(each with its manifest as object metadata)")
    say(f"   look: {settings.stack.dir / 'objectstore' / 'data' / bucket / prefix.split('/', maxsplit=1)[0]}, or "
        f"`sluice rehydrate --project {prefix.split('/', maxsplit=1)[0]} --task <task> --from <today> --to <today>`")
    if in_cold < want:
        raise SluiceError(f"only {in_cold} of {want} events reached the object store in 120 s; "
                          f"read {logs / 'demo-worker-cold.log'}")


def show_alerts(settings: Settings, say: Callable[[str], None], task_prefix: str, logs: Path) -> None:
    """The watch stage's alerts for this run: one per incident, however many ranks reported it."""

    def kinds(alert: dict[str, Any]) -> set[str]:
        """What an alert reports: its rule, or for a job's incident its root class and collateral kinds."""
        if alert["rule"] != "job_failure":
            return {alert["rule"]}
        return {alert["details"].get("root_class", "unknown")} | {
            k for k in ("cuda_oom", "nccl_timeout") if f"{k} on" in alert["summary"]}

    def enough(found: list[dict[str, Any]]) -> bool:
        counts = Counter(k for a in {a["alert_id"]: a for a in found}.values() for k in kinds(a))
        return counts["cuda_oom"] >= 2 and counts["nccl_timeout"] >= 1

    # A failed job's alert waits for its ranks to go quiet (watch.incident_quiet_s), then for the check.
    wait_s = int(settings.watch.incident_quiet_s + 120)
    alerts = read_topic(settings, settings.topics.alerts, keep=lambda a: (a["task_id"] or "").startswith(task_prefix),
                        done=enough, timeout_s=wait_s)
    latest = {a["alert_id"]: a for a in alerts}
    say(f"5. watch: {len(latest)} alerts on {settings.topics.alerts} (one per incident), "
        f"also indexed in sluice-alerts-{settings.routing.default_project}:")
    for alert in sorted(latest.values(), key=lambda a: (a["rule"], a["task_id"] or "")):
        ranks = alert["details"].get("ranks", "")
        say(f"   [{alert['severity']}] {'/'.join(sorted(kinds(alert)))} in task {alert['task_id'][len(task_prefix):]}: "
            f"{alert['count']} report(s)" + (f" from {ranks}" if ranks else ""))
    if not enough(alerts):
        raise SluiceError(f"the expected CUDA OOM and NCCL timeout alerts did not arrive in {wait_s} s; "
                          f"read {logs / 'demo-worker-watch.log'}")


def metric_summary(port: int) -> str:
    """The stage's own count of what it wrote (sluice_outputs_total / sluice_sink_acked_total)."""
    import httpx

    from streams.top import parse_prometheus

    try:
        samples = parse_prometheus(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=3).text)
    except httpx.HTTPError as exc:
        return f"(:{port} unreachable: {exc})"
    wrote = sum(v for k, v in samples.items() if k.startswith(("sluice_outputs_total", "sluice_sink_acked_total")))
    read = sum(v for k, v in samples.items() if k.startswith("sluice_records_in_total"))
    return f":{port} read {read:.0f} records, wrote {wrote:.0f}"
