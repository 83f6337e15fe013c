"""`sluice summary --send`: a day of the corpus and of recorded GPU samples in the real Elasticsearch,
its report delivered to a local webhook server and a local SMTP server.

The day: three corpus logs as three jobs (a CUDA OOM, an NCCL watchdog timeout, a healthy SFT run),
each with two GPUs sampled every 10 s from the recorded H100 (the OOM job for an hour, the SFT job for
30 minutes, its GPU 1 idle for 10 of them while the job still logs), and the GPU-idle alert the watch
engine raises over those samples, indexed as the watch worker indexes it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from devtools.testing.elasticsearch import corpus_events, settings_for
from devtools.testing.gpu import RecordedNvml
from devtools.testing.report import smtp_server, webhook_server
from devtools.testing.watch import MemoryWatchStore
from streams.cli.main import cli
from streams.clients import es_client
from streams.config import Settings
from streams.gpu.attribution import KnownSource
from streams.gpu.nvml import NvmlReader
from streams.gpu.sampler import GpuSampler
from streams.gpu.settings import GpuSettings
from streams.sinks.elasticsearch.request import IndexNamer, document
from streams.watch import WatchEngine, WatchSettings
from streams.watch.observation import from_record
from streams.watch.publish import ALERT_MAPPINGS

FILES = ("training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
         "training/sglang_nccl_watchdog_timeout_hardwrapped.log",
         "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log")
DAY = "2025-11-29"
DAY_MS = 1_764_374_400_000  # 2025-11-29T00:00:00Z
MIN = 60_000


def samples(project: str, task: str, start_ms: int, minutes: int, idle: tuple[int, int] | None = None
            ) -> list[dict[str, Any]]:
    nvml = RecordedNvml(count=2)
    now = {"s": start_ms / 1000}
    files = [KnownSource(f"/var/log/train/{project}/{task}/rank0.log", {}, {"project": project, "task_id": task}, 0)]
    sampler = GpuSampler(NvmlReader(nvml), None, GpuSettings(), host=f"node-{task}",  # type: ignore[arg-type]
                         node_labels={"project": project, "task_id": task},
                         known_sources=lambda: [KnownSource(f.path, f.source, f.labels, now["s"]) for f in files],
                         cgroups=None, send_interval_s=30, phase_ms=0)
    out = []
    for t in range(start_ms, start_ms + minutes * MIN, 10_000):
        now["s"] = t / 1000
        if idle and t == start_ms + idle[0] * MIN:
            nvml.set_state(1, "idle")
            nvml.set_processes(1, ((11345, 1 << 30),))
        if idle and t == start_ms + idle[1] * MIN:
            nvml.set_state(1, "load")
            nvml.set_processes(1, None)
        out += sampler.sample(t / 1000)
    return out


def index_the_day(settings: Settings, corpus: Path, project: str) -> None:
    """The corpus jobs, their GPU samples and the watch engine's alerts, as the hot tier and watch keep them."""
    es = es_client(settings.elasticsearch)
    from streams.sinks.elasticsearch import templates

    for key, body in templates.template_bodies(settings.routing, settings.hot, ilm=False).items():
        kind, name = key.split(":", 1)
        if kind == "component":
            es.cluster.put_component_template(name=name, **body)
        else:
            es.indices.put_index_template(name=name, **body)
    values = []
    for n, path in enumerate(FILES):
        for i, value in enumerate(corpus_events([corpus / path], project)):
            value["task_id"] = f"job-{n}"
            value["timestamp"] = DAY_MS + 3600_000 * n + i * 1000
            values.append(value)
    values += samples(project, "job-0", DAY_MS, 60) + samples(project, "job-2", DAY_MS + 2 * 3600_000, 30, (5, 15))
    values.sort(key=lambda v: v["timestamp"])
    # The watch stage over the day: the OOM and the NCCL timeout at once, job-2's idle GPU raised and resolved.
    engine, store = WatchEngine(WatchSettings()), MemoryWatchStore(WatchSettings())
    alerts: dict[str, dict[str, Any]] = {}
    for value in values:
        for change in engine.observe(from_record(value), store):
            alerts[change.alert["alert_id"]] = change.alert
    idle = [(a["rule"], a["status"], a["task_id"]) for a in alerts.values() if a["rule"].startswith("gpu_")]
    assert idle == [("gpu_idle", "resolved", "job-2")]
    others = {a["task_id"] for a in alerts.values() if not a["rule"].startswith("gpu_")}
    assert others and others <= {"job-0", "job-1"}, "only the failed jobs alert (job incidents may wait for quiet)"
    namer = IndexNamer(settings.routing)
    lines: list[dict[str, Any]] = []
    for value in values:
        doc, ts = document(value)
        lines += [{"index": {"_index": namer.index_for(value, ts), "_id": value["event_id"]}}, doc]
    assert not es.bulk(operations=lines, refresh="wait_for")["errors"]
    alerts_index = f"{settings.watch.alerts_index_prefix}{project}"
    es.indices.create(index=alerts_index, mappings=ALERT_MAPPINGS)
    for alert in alerts.values():
        es.index(index=alerts_index, id=alert["alert_id"], document=alert, refresh="wait_for")


def test_the_report_of_a_day_reaches_the_webhook_and_the_mailbox(stack: Settings, corpus: Path, unique_name,
                                                                 new_topic) -> None:
    project = unique_name("rep").replace("-", "")
    settings = settings_for(stack, project, new_topic("rep-dlq"), new_topic("rep-metrics"))
    index_the_day(settings, corpus, project)
    with webhook_server() as hook, smtp_server() as box:
        env = {
            "SLUICE_ROUTING__DEFAULT_PROJECT": project, "SLUICE_ROUTING__PROJECTS": json.dumps({project: {}}),
            "SLUICE_TOPICS__METRICS": settings.topics.metrics, "SLUICE_TOPICS__DLQ": settings.topics.dlq,
            "SLUICE_WATCH__REPORT__TARGETS": json.dumps({project: {
                "style": "json", "webhook_url": hook.url, "email_to": ["ml-oncall@example.com"]}}),
            "SLUICE_WATCH__REPORT__KIBANA_URL": "https://kibana.example.com",
            "SLUICE_WATCH__REPORT__SMTP_HOST": "127.0.0.1", "SLUICE_WATCH__REPORT__SMTP_PORT": str(box.port),
            "SLUICE_WATCH__REPORT__SMTP_SECURITY": "none",
        }
        result = CliRunner().invoke(cli, ["summary", "--day", DAY, "--project", project, "--send"],
                                    env={**{k: v for k, v in os.environ.items() if k.startswith("SLUICE_")}, **env})
        assert result.exit_code == 0, result.output
    [body] = hook.received
    report = body["report"]
    tasks = {t["task_id"]: t for t in report["tasks"]}
    assert (report["project"], report["day"]) == (project, DAY)
    assert (report["jobs_seen"], report["jobs_started"], report["jobs_failed"]) == (3, 3, 2)
    assert report["jobs_failed_by_class"] == {"cuda_oom": 1, "nccl_timeout": 1}
    assert tasks["job-0"]["gpu_hours"] == round(2 * (3600 - 10) / 3600, 3) and tasks["job-0"]["gpus"] == 2
    assert tasks["job-0"]["mean_gpu_util_pct"] == 100.0
    assert tasks["job-2"]["mean_gpu_util_pct"] == round((180 * 100 + 120 * 100) / 360, 1), "GPU 1 idle 10 of 30 min"
    assert tasks["job-1"]["gpu_hours"] == 0 and tasks["job-1"]["status"] == "failed"
    [incident] = report["idle_incidents"]
    assert (incident["task_id"], incident["status"]) == ("job-2", "resolved") and incident["minutes"] > 0
    assert tasks["job-2"]["idle_incidents"] == 1
    assert {e["error"] for e in report["top_errors"]} >= {"RuntimeError"}
    assert report["links"]["dashboard"].startswith("https://kibana.example.com/app/dashboards#/view/sluice-training")
    assert "job-2" in report["links"]["tasks"]
    assert "GPU idle incidents" in body["text"] and "job-2" in body["text"]
    [mail] = box.messages
    assert mail["To"] == "ml-oncall@example.com" and mail["Subject"].startswith(f"Sluice daily report: {project}")
    assert "GPU-hours" in mail.get_payload()
    es_client(settings.elasticsearch).indices.delete(index=f"{settings.watch.alerts_index_prefix}{project}")
