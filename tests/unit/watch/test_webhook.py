from __future__ import annotations

import asyncio
from typing import Any

import httpx
from pydantic import SecretStr

from streams.watch.settings import WatchSettings
from streams.watch.webhook import WebhookNotifier, backoff_s, payload, should_retry

ALERT = {"alert_id": "cuda_oom-1", "rule": "cuda_oom", "severity": "critical", "summary": "[critical] OOM",
         "count": 4, "task_id": "t"}


def test_payload_styles() -> None:
    assert payload(ALERT, "slack")["text"].startswith("[critical] OOM")
    wecom = payload(ALERT, "wecom")
    assert wecom["msgtype"] == "text" and "cuda_oom-1" in wecom["text"]["content"]


def test_retry_classification_and_backoff() -> None:
    assert should_retry(None) and should_retry(429) and should_retry(503)
    assert not should_retry(400) and not should_retry(404)
    assert [backoff_s(i, 0.5, 3.0) for i in range(4)] == [0.5, 1.0, 2.0, 3.0]


def run_deliver(statuses: list[int], **conf: Any) -> tuple[bool, int]:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(statuses[min(len(calls) - 1, len(statuses) - 1)])

    settings = WatchSettings(webhook_url=SecretStr("http://hook.test/x"), webhook_backoff_s=0.0, **conf)
    notifier = WebhookNotifier(settings, httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    return asyncio.run(notifier.deliver(ALERT)), len(calls)


def test_retries_5xx_then_delivers() -> None:
    assert run_deliver([500, 502, 200]) == (True, 3)


def test_gives_up_on_4xx_at_once_and_after_the_attempts() -> None:
    assert run_deliver([400]) == (False, 1)
    assert run_deliver([503], webhook_attempts=3) == (False, 3)


def test_severity_filter() -> None:
    notifier = WebhookNotifier(WatchSettings(webhook_url=SecretStr("http://h"), webhook_min_severity="critical"))
    assert notifier.wants(ALERT) and not notifier.wants({**ALERT, "severity": "warning"})
