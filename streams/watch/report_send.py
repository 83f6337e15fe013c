"""Deliver daily reports: each project's to its webhook and, optionally, by e-mail (I/O).

Retries: 429, 5xx and transport errors, with doubling backoff. A WeCom robot answers HTTP 200 with
``{"errcode": N}`` on failure (45009 when over 20 messages a minute): a non-zero errcode is a failure,
retried when it is the rate limit. A delivery that still fails is reported, and ``sluice summary
--send`` exits non-zero so that the cron job or CronJob shows it.
"""

from __future__ import annotations

import logging
import smtplib
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import httpx

from streams.watch import report_format
from streams.watch.settings import ReportSettings, ReportTarget

log = logging.getLogger(__name__)

WECOM_RATE_LIMITED = 45009


@dataclass(frozen=True)
class Delivery:
    project: str
    channel: str  # "webhook" or "email"
    ok: bool
    detail: str


def _retryable(status: int | None) -> bool:
    return status is None or status == 429 or status >= 500


def post_webhook(client: httpx.Client, url: str, body: dict[str, Any], style: str, conf: ReportSettings,
                 sleep: Callable[[float], None] = time.sleep) -> tuple[bool, str]:
    """(delivered, what the last answer was). The URL is a secret: it never appears in the detail."""
    detail = ""
    for attempt in range(conf.attempts):
        status: int | None = None
        try:
            response = client.post(url, json=body)
            status = response.status_code
            detail = f"HTTP {status}"
            if status < 300 and style == "wecom":
                code = _errcode(response)
                if code:
                    detail = f"WeCom errcode {code}: {_errmsg(response)}"
                    status = 429 if code == WECOM_RATE_LIMITED else 400
            if status < 300:
                return True, detail
            if style != "wecom":
                detail += f": {response.text[:200]}"
        except httpx.HTTPError as exc:
            detail = type(exc).__name__
        if not _retryable(status) or attempt + 1 == conf.attempts:
            break
        sleep(conf.backoff_s * (2 ** attempt))
    return False, detail


def _errcode(response: httpx.Response) -> int:
    try:
        return int(response.json().get("errcode", 0))
    except (ValueError, AttributeError):
        return 0


def _errmsg(response: httpx.Response) -> str:
    try:
        return str(response.json().get("errmsg", ""))[:200]
    except ValueError:
        return ""


def send_email(conf: ReportSettings, to: list[str], subject: str, body: str) -> None:
    if not conf.smtp_host:
        raise smtplib.SMTPException("watch.report.smtp_host is not set")
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = conf.email_from, ", ".join(to), subject
    message.set_content(body)
    smtp_class = smtplib.SMTP_SSL if conf.smtp_security == "ssl" else smtplib.SMTP
    with smtp_class(conf.smtp_host, conf.smtp_port, timeout=conf.timeout_s) as smtp:
        if conf.smtp_security == "starttls":
            smtp.starttls()
        if conf.smtp_username:
            password = conf.smtp_password.get_secret_value() if conf.smtp_password else ""
            smtp.login(conf.smtp_username, password)
        smtp.send_message(message)


def deliver(report: dict[str, Any], target: ReportTarget, conf: ReportSettings,
            client: httpx.Client | None = None) -> list[Delivery]:
    project, out = report["project"], []
    if target.webhook_url is not None:
        own = client or httpx.Client(timeout=conf.timeout_s)
        try:
            ok, detail = post_webhook(own, target.webhook_url.get_secret_value(),
                                      report_format.payload(report, target.style), target.style, conf)
        finally:
            if client is None:
                own.close()
        out.append(Delivery(project, "webhook", ok, f"{target.style} webhook: {detail}"))
    if target.email_to:
        subject, body = report_format.email(report)
        try:
            send_email(conf, target.email_to, subject, body)
            out.append(Delivery(project, "email", True, f"mailed to {len(target.email_to)} address(es)"))
        except (OSError, smtplib.SMTPException) as exc:
            out.append(Delivery(project, "email", False, f"SMTP {conf.smtp_host}:{conf.smtp_port}: "
                                                         f"{type(exc).__name__}: {exc}"))
    return out


def deliver_all(reports: list[dict[str, Any]], conf: ReportSettings,
                client: httpx.Client | None = None) -> list[Delivery]:
    done: list[Delivery] = []
    for report in reports:
        target = conf.target_for(report["project"])
        if target is None:
            done.append(Delivery(report["project"], "none", False,
                                 f"no target for project {report['project']!r}: set watch.report.targets"))
            continue
        done += deliver(report, target, conf, client)
    for d in done:
        (log.info if d.ok else log.error)("report of %s: %s %s", d.project, d.channel, d.detail)
    return done
