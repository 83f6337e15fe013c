"""The optional chat webhook: a pure payload builder, a retry classifier, and an async sender.

Delivery runs beside the stream, from a bounded queue, so a slow or dead chat server never holds
up alerting: the durable record of an alert is ``logs.alerts`` and the alerts index, and the
webhook is the notification. Retries: 429, 5xx and transport errors, with doubling backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx

from streams.watch.settings import WatchSettings

log = logging.getLogger(__name__)

SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
QUEUE_LIMIT = 1000


def payload(alert: dict[str, Any], style: str) -> dict[str, Any]:
    """A Slack incoming-webhook or WeCom group-robot message for ``alert``."""
    lines = [alert["summary"], f"alert {alert['alert_id']} · {alert['count']} report(s)"]
    if alert.get("task_id"):
        lines.append(f"task {alert['task_id']}")
    text = "\n".join(lines)
    if style == "wecom":
        return {"msgtype": "text", "text": {"content": text}}
    return {"text": text}


def should_retry(status: int | None) -> bool:
    """None is a transport error (refused, reset, timed out)."""
    return status is None or status == 429 or status >= 500


def backoff_s(attempt: int, base_s: float, max_s: float) -> float:
    return min(max_s, base_s * (2 ** attempt))


class WebhookNotifier:
    def __init__(self, conf: WatchSettings, client: httpx.AsyncClient | None = None) -> None:
        if conf.webhook_url is None:
            raise ValueError("WebhookNotifier needs watch.webhook_url")
        self.conf = conf
        self.url = conf.webhook_url.get_secret_value()
        self.client = client or httpx.AsyncClient(timeout=conf.webhook_timeout_s)
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_LIMIT)
        self.sent = 0
        self.failed = 0
        self._task: asyncio.Task[None] | None = None

    def wants(self, alert: dict[str, Any]) -> bool:
        return SEVERITY_RANK.get(alert["severity"], 0) >= SEVERITY_RANK[self.conf.webhook_min_severity]

    def offer(self, alert: dict[str, Any]) -> None:
        if not self.wants(alert):
            return
        try:
            self.queue.put_nowait(alert)
        except asyncio.QueueFull:
            self.failed += 1
            log.error(  # noqa: TRY400 - a full queue is a state, its traceback says nothing
                "webhook queue full: alert %s not notified (it is in logs.alerts)", alert["alert_id"])

    async def deliver(self, alert: dict[str, Any]) -> bool:
        body = payload(alert, self.conf.webhook_style)
        for attempt in range(self.conf.webhook_attempts):
            status: int | None = None
            try:
                response = await self.client.post(self.url, json=body)
                status = response.status_code
                if status < 300:
                    self.sent += 1
                    return True
            except httpx.HTTPError as exc:
                log.warning("webhook: %s for alert %s (attempt %d)", type(exc).__name__, alert["alert_id"],
                            attempt + 1)
            if not should_retry(status):
                break
            if attempt + 1 < self.conf.webhook_attempts:
                await asyncio.sleep(backoff_s(attempt, self.conf.webhook_backoff_s, self.conf.webhook_backoff_max_s))
        self.failed += 1
        log.error("webhook gave up on alert %s (last status %s)", alert["alert_id"], status)
        return False

    async def run(self) -> None:
        while True:
            alert = await self.queue.get()
            try:
                await self.deliver(alert)
            finally:
                self.queue.task_done()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.client.aclose()
