"""The daily report: the fold over a day (jobs, GPU-hours, utilisation, idle incidents), its messages per
webhook style, and their delivery to local webhook and SMTP servers."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import MIN, T0, point
from pydantic import SecretStr

from devtools.testing.gpu import RecordedNvml
from devtools.testing.report import smtp_server, webhook_server
from streams.gpu.attribution import Attribution
from streams.gpu.nvml import NvmlReader
from streams.gpu.points import metric_point
from streams.watch import report_format
from streams.watch.report import kibana_links
from streams.watch.report_send import deliver, deliver_all, post_webhook
from streams.watch.settings import ReportSettings, ReportTarget
from streams.watch.summary import summaries

SEC = 1000


def gpu_samples(task: str, start: int, end: int, gpus: int = 2, idle: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    nvml = RecordedNvml(count=gpus)
    for index in idle:
        nvml.set_state(index, "idle")
    reader = NvmlReader(nvml)
    who = Attribution("only_task", {"project": "default", "task_id": task}, {})
    return [metric_point(r, who, "n1", {"project": "default"}, t, "nvml")
            for t in range(start, end, 10 * SEC) for r in reader.read()]


def event(task: str, ts: int, error_class: str | None = None, n: int = 0) -> dict[str, Any]:
    return {"event_id": f"{task}-{ts}-{n}", "timestamp": ts, "project": "default", "task_id": task,
            "message": "Traceback" if error_class else "ok", "error_class": error_class,
            "error_type": "torch.OutOfMemoryError" if error_class == "cuda_oom" else None,
            "source": {"host": "n1", "rank": 0}}


def day_report(**kw: Any) -> dict[str, Any]:
    records = (gpu_samples("train-a", T0, T0 + 60 * MIN)  # two busy GPUs for an hour: 2 x 59:50 of GPU time
               + gpu_samples("train-b", T0, T0 + 30 * MIN, gpus=1, idle=(0,))
               + [event("train-a", T0 + MIN), event("train-b", T0 + 10 * MIN, "cuda_oom"),
                  event("train-b", T0 + 10 * MIN, "cuda_oom", 1), event("train-c", T0 + 5 * MIN, "nccl_warn")]
               + [{**point("train-c", T0 + n * MIN, step=n * 10, loss=1.0), "max_steps": 50} for n in range(6)])
    alert = {"alert_id": "gpu_idle-1", "rule": "gpu_idle", "project": "default", "task_id": "train-b",
             "first_seen": T0 + 2 * MIN, "resolved_at": T0 + 12 * MIN, "status": "resolved",
             "details": {"ranks": "n1:0"}, "summary": "[resolved] gpu_idle in train-b"}
    [summary] = summaries(sorted(records, key=lambda r: r["timestamp"]), [alert])
    return summary.report(**kw)


def test_the_day_counts_jobs_gpu_hours_utilisation_and_idle_incidents() -> None:
    report = day_report(seen_before={"train-a"})
    tasks = {t["task_id"]: t for t in report["tasks"]}
    assert (report["jobs_seen"], report["jobs_started"], report["jobs_finished"], report["jobs_failed"]) == (3, 2, 1, 1)
    assert report["jobs_failed_by_class"] == {"cuda_oom": 1}, "one job, however many ranks report its OOM"
    assert report["failures_by_class"] == {"cuda_oom": 2, "nccl_warn": 1}
    assert tasks["train-a"]["gpu_hours"] == round(2 * (3600 - 10) / 3600, 3) and tasks["train-a"]["gpus"] == 2
    assert tasks["train-a"]["mean_gpu_util_pct"] == 100.0 and tasks["train-b"]["mean_gpu_util_pct"] == 0.0
    assert tasks["train-c"]["status"] == "finished" and tasks["train-c"]["gpu_hours"] == 0
    assert tasks["train-b"]["status"] == "failed" and tasks["train-b"]["idle_incidents"] == 1
    assert report["gpu_hours"] == round((2 * 3590 + 1790) / 3600, 3)
    [incident] = report["idle_incidents"]
    assert (incident["task_id"], incident["minutes"], incident["gpus"]) == ("train-b", 10.0, "n1:0")
    assert report["top_errors"][0] == {"error": "torch.OutOfMemoryError", "count": 2}


def test_a_gap_in_a_devices_samples_is_not_gpu_time() -> None:
    records = gpu_samples("t", T0, T0 + 10 * MIN, gpus=1) + gpu_samples("t", T0 + 70 * MIN, T0 + 80 * MIN, gpus=1)
    [summary] = summaries(records)
    assert summary.report()["tasks"][0]["gpu_hours"] == round((2 * 590 + 60) / 3600, 3)


def test_links_open_the_dashboard_on_the_day_and_the_task() -> None:
    links = kibana_links("https://kibana.example.com/", "llm", "2025-11-29", ["run'7"])
    assert links["dashboard"].startswith("https://kibana.example.com/app/dashboards#/view/sluice-training?_g=")
    assert "from:'2025-11-29T00:00:00.000Z',to:'2025-11-30T00:00:00.000Z'" in links["dashboard"]
    assert "run!'7" in links["tasks"]["run'7"], "rison escapes a quote with !"
    assert kibana_links(None, "llm", "2025-11-29", ["a"]) == {}


def big_report() -> dict[str, Any]:
    report = day_report(links={"dashboard": "https://kibana/x"})
    report["tasks"] = [{**report["tasks"][0], "task_id": f"task-{n:03d}-" + "x" * 300} for n in range(300)]
    return report


def test_a_wecom_message_fits_the_robots_4096_bytes() -> None:
    body = report_format.payload(big_report(), "wecom")
    assert body["msgtype"] == "markdown" and len(body["markdown"]["content"].encode()) <= 4096
    assert body["markdown"]["content"].endswith("(cut; [the whole day](https://kibana/x))")
    small = report_format.payload(day_report(), "wecom")["markdown"]["content"]
    assert "GPU-hours: 2.5" in small and "train-b: failed (cuda_oom)" in small


def test_a_slack_message_keeps_block_kits_limits() -> None:
    body = report_format.payload(big_report(), "slack")
    assert body["text"].startswith("Sluice daily report: default")
    assert len(body["blocks"]) <= 50 and all(len(b["text"]["text"]) <= 3000 for b in body["blocks"])
    assert body["blocks"][0]["text"]["text"].startswith("*Sluice daily report")


def test_the_json_style_posts_the_report_itself() -> None:
    report = day_report()
    body = report_format.payload(report, "json")
    assert body["report"] == report and "GPU idle incidents" in body["text"]


def conf(**kw: Any) -> ReportSettings:
    return ReportSettings(attempts=3, backoff_s=0.0, timeout_s=5.0, **kw)


def test_a_rate_limited_wecom_robot_is_tried_again() -> None:
    with webhook_server([(200, '{"errcode":45009,"errmsg":"api freq out of limit"}'),
                        (200, '{"errcode":0,"errmsg":"ok"}')]) as hook:
        target = ReportTarget(webhook_url=SecretStr(hook.url), style="wecom")
        [done] = deliver(day_report(), target, conf())
    assert done.ok and len(hook.received) == 2 and hook.received[1]["msgtype"] == "markdown"


def test_a_refused_webhook_fails_without_retrying_and_never_shows_its_url() -> None:
    import httpx

    with webhook_server([(400, "invalid_payload")]) as hook, httpx.Client() as client:
        ok, detail = post_webhook(client, hook.url, {"text": "x"}, "slack", conf())
    assert not ok and len(hook.received) == 1 and detail == "HTTP 400: invalid_payload"
    with webhook_server([(200, '{"errcode":93000,"errmsg":"invalid webhook url"}')]) as hook:
        [done] = deliver(day_report(), ReportTarget(webhook_url=SecretStr(hook.url), style="wecom"), conf())
    assert not done.ok and "93000" in done.detail and "secret-token" not in done.detail and len(hook.received) == 1


def test_a_server_error_is_retried_until_the_attempts_run_out() -> None:
    with webhook_server([(503, "busy")]) as hook:
        [done] = deliver(day_report(), ReportTarget(webhook_url=SecretStr(hook.url), style="json"), conf())
    assert not done.ok and len(hook.received) == 3


def test_the_report_is_mailed_to_the_projects_addresses() -> None:
    with smtp_server() as box:
        settings = conf(smtp_host="127.0.0.1", smtp_port=box.port, smtp_security="none", smtp_username="bot",
                        smtp_password=SecretStr("pw"), email_from="sluice@example.com",
                        targets={"*": ReportTarget(email_to=["a@example.com", "b@example.com"])})
        [done] = deliver_all([day_report()], settings)
    assert done.ok and done.channel == "email"
    [message] = box.messages
    assert message["Subject"].startswith("Sluice daily report: default") and box.logins
    assert box.envelopes == [("sluice@example.com", ["a@example.com", "b@example.com"])]
    assert "GPU idle incidents" in message.get_payload()


def test_a_project_without_a_target_is_a_failed_delivery() -> None:
    [done] = deliver_all([day_report()], conf(targets={"other": ReportTarget(email_to=["x@example.com"])}))
    assert not done.ok and "watch.report.targets" in done.detail


@pytest.mark.parametrize("field", ["webhook_url", "smtp_password"])
def test_report_secrets_come_from_files(tmp_path: Any, field: str) -> None:
    path = tmp_path / "secret"
    path.write_text("https://hook.example/s3cr3t\n")
    if field == "webhook_url":
        assert ReportTarget(webhook_url_file=path).webhook_url == SecretStr("https://hook.example/s3cr3t")
    else:
        assert ReportSettings(smtp_password_file=path).smtp_password == SecretStr("https://hook.example/s3cr3t")
    assert "s3cr3t" not in repr(ReportSettings(targets={"*": ReportTarget(webhook_url_file=path)}))
