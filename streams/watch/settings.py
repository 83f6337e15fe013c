"""Rules and thresholds of the watch stage: the ``watch:`` section (``SLUICE_WATCH__<FIELD>``)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator

from streams.config_base import Section

# error_class (log_event.avsc) -> alert severity. One alert per task and class per cooldown.
DEFAULT_INCIDENT_CLASSES = {
    "cuda_oom": "critical",
    "cuda_error": "critical",
    "nccl_timeout": "critical",
    "nccl_error": "critical",
    "signal": "critical",  # a rank killed (SIGKILL, SIGSEGV, ...): torchrun's ChildFailedError lands here too
    "python_exception": "warning",  # an uncaught traceback; many are fatal, some are logged and survived
}


# XID -> alert severity (NVIDIA's XID catalogue: what the error means for the job and the node). An XID
# not listed is a warning. 45 follows any killed job's context teardown: recorded, not notified.
DEFAULT_XID_SEVERITY = {
    13: "warning", 31: "warning", 43: "warning", 45: "info", 48: "critical", 61: "warning", 62: "critical",
    63: "warning", 64: "critical", 74: "critical", 79: "critical", 92: "warning", 94: "critical", 95: "critical",
    109: "critical", 119: "critical", 120: "critical",
}


class ReportTarget(Section):
    """Where one project's daily report goes: a chat webhook and/or e-mail addresses."""

    webhook_url: SecretStr | None = Field(
        default=None, description="Slack incoming webhook, WeCom group robot, or any URL that takes a JSON POST. "
                                  "Secret: the URL carries the token.")
    webhook_url_file: Path | None = Field(
        default=None, description="A file holding webhook_url (a mounted secret), read once at start.")
    style: Literal["slack", "wecom", "json"] = Field(
        default="json",
        description="slack: an incoming-webhook message (text and blocks); wecom: a group robot markdown message "
                    "(4096 bytes at most, cut to fit); json: the report itself, with a text rendering.")
    email_to: list[str] = Field(default_factory=list, description="Addresses the report is also mailed to.")

    @model_validator(mode="after")
    def _read_secret_files(self) -> ReportTarget:
        from streams.config import secrets_from_files

        secrets_from_files(self, {"webhook_url": "webhook_url_file"})
        return self


class ReportSettings(Section):
    """The daily report that `sluice summary --send` (the CronJob deploy/k8s/report-cronjob.yaml) delivers."""

    targets: dict[str, ReportTarget] = Field(
        default_factory=dict,
        description="Project -> where its report goes; the key * serves every project without its own.",
        examples=[{"llm": {"style": "wecom", "webhook_url_file": "/etc/sluice/report/llm-webhook"},
                   "*": {"style": "slack", "email_to": ["ml-oncall@example.com"]}}])
    kibana_url: str | None = Field(
        default=None, description="Kibana's base URL: the report links the training dashboard for the project, "
                                  "the day and each task.", examples=["https://kibana.example.com"])
    smtp_host: str | None = Field(default=None, description="SMTP server for e-mailed reports; unset: no e-mail.")
    smtp_port: int = Field(default=587, description="SMTP port (587 with starttls, 465 with ssl).")
    smtp_security: Literal["starttls", "ssl", "none"] = Field(
        default="starttls", description="How the SMTP connection is protected.")
    smtp_username: str | None = Field(default=None, description="SMTP user; unset: no login.")
    smtp_password: SecretStr | None = Field(default=None, description="SMTP password. Secret: never printed.")
    smtp_password_file: Path | None = Field(default=None, description="A file holding smtp_password.")
    email_from: str = Field(default="sluice@localhost", description="Sender address of e-mailed reports.")
    timeout_s: float = Field(default=10.0, gt=0, description="Timeout of one webhook request or SMTP connection.")
    attempts: int = Field(default=4, ge=1, description="Tries per delivery (429, 5xx, transport errors).")
    backoff_s: float = Field(default=2.0, ge=0, description="Wait before the first retry; doubled per retry.")

    @model_validator(mode="after")
    def _read_secret_files(self) -> ReportSettings:
        from streams.config import secrets_from_files

        secrets_from_files(self, {"smtp_password": "smtp_password_file"})
        return self

    def target_for(self, project: str) -> ReportTarget | None:
        return self.targets.get(project) or self.targets.get("*")


class WatchSettings(Section):
    """The watch stage: alerts from metrics and events (`sluice worker watch`)."""

    app_id: str = Field(
        default="sluice-watch", description="Consumer group, and the prefix of the stage's internal topics.")
    partitions: int = Field(
        default=3, description="Partitions of the by-task topic and of every table changelog (Faust needs them equal).")

    incident_classes: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_INCIDENT_CLASSES),
        description="Error class of an event -> severity of the alert it raises at once (info, warning, critical).",
        examples=[{"cuda_oom": "critical", "python_exception": "warning"}])
    cooldown_s: float = Field(
        default=30 * 60,
        description="One incident per task and rule for this long; later reports (other ranks) are folded "
                    "into it.")

    incidents: bool = Field(
        default=True,
        description="Job incidents: a task's errors across all its ranks become one incident naming the first "
                    "failure (rank, cause, collateral) on the incidents topic, with one alert. Off: every error class "
                    "alerts on its own. Sources without a task_id alert per error class either way.")
    incident_quiet_s: float = Field(
        default=60.0,
        description="An incident is decided once its task has logged no failure for this long (event time, or wall "
                    "time for a job that went silent): the latency of the incident after the last rank's error.")
    incident_attach_s: float = Field(
        default=45 * 60,
        description="Collateral (NCCL timeouts, aborts, launcher reports) up to this long after an incident opened "
                    "still joins it: a watchdog fires a whole collective timeout (10 to 30 min by default) after "
                    "the failure.")
    incident_lookback_s: float = Field(
        default=10 * 60,
        description="A NaN loss, XID or ECC finding up to this long before a job's first error is evidence of "
                    "its root cause.")
    incident_tie_ms: int = Field(
        default=1000,
        description="Root-role errors less than this apart are ordered by how telling their kind is (XID, OOM, "
                    "CUDA error, ... exception), not by time: many logs stamp whole seconds.")
    incident_tick_s: float = Field(
        default=5.0, description="How often the worker looks for incidents whose task went quiet in wall time.")
    incidents_index_prefix: str = Field(
        default="sluice-incidents-",
        description="Incidents are indexed into <incidents_index_prefix><project>, _id = incident_id.")

    gpu_idle_pct: float = Field(
        default=10.0, description="GPU idle: one rank's average utilisation over a window below this percentage.")
    gpu_idle_window_s: int = Field(default=5 * 60, description="Length of the GPU-idle window.")
    gpu_idle_step_s: int = Field(
        default=60, description="How often a new GPU-idle window closes: the worst-case added latency of the alert.")
    gpu_idle_grace_s: int = Field(
        default=30, description="A window is judged this long (event time) after it ends: one task's records reach the "
                        "stage through several partitions, a little out of order.")
    gpu_idle_min_samples: int = Field(default=3, description="Fewer samples in a window are no evidence of idleness.")
    gpu_idle_min_coverage: float = Field(
        default=0.8, description="The samples must span this share of the window: a job that just started is not idle.")
    gpu_idle_task_quiet_s: int = Field(
        default=30 * 60,
        description="A GPU sample's task counts as running while its last log record is at most this old at the end "
                    "of the idle window: the GPUs of a finished job are not idle, those of a quiet one are.")
    xid_severity: dict[int, str] = Field(
        default_factory=lambda: dict(DEFAULT_XID_SEVERITY),
        description="XID error of a GPU sample -> severity of its gpu_xid alert; an XID not listed is a warning.",
        examples=[{"79": "critical", "45": "info"}])
    ecc_severity: Literal["info", "warning", "critical"] = Field(
        default="critical", description="Severity of gpu_ecc: a GPU's uncorrected (volatile) ECC count went up.")
    window_expires_s: int = Field(
        default=2 * 3600,
        description="Windows are dropped this long after they close. Faust expires them against the wall "
                    "clock, so this must exceed how far behind real time the stream may run.")

    stall_after_s: int = Field(
        default=15 * 60, description="Training stalled: no step change for this long while the task still logs.")

    loss_spike_factor: float = Field(
        default=3.0, description="Loss spike: a loss above this factor times the mean of the last loss_history values. "
                         "NaN and inf alert at once.")
    loss_history: int = Field(default=20, description="Loss values the spike rule averages.")
    loss_min_history: int = Field(default=5, description="Fewer values are no baseline: no spike alert before them.")

    alerts_index_prefix: str = Field(
        default="sluice-alerts-",
        description="Alerts are also indexed into <alerts_index_prefix><project>, _id = alert_id.")

    webhook_url: SecretStr | None = Field(
        default=None,
        description="A Slack incoming webhook or a WeCom group robot for alerts; unset: none. Secret: the URL "
                    "carries a token.")
    webhook_style: Literal["slack", "wecom"] = Field(default="slack", description="The webhook's message format.")
    webhook_min_severity: Literal["info", "warning", "critical"] = Field(
        default="warning", description="Alerts below this severity are not sent to the webhook.")
    webhook_attempts: int = Field(default=5, description="Tries per alert before the webhook gives up on it.")
    webhook_backoff_s: float = Field(default=0.5, description="Wait before the first retry; doubled per retry.")
    webhook_backoff_max_s: float = Field(default=10.0, description="Longest wait between retries.")
    webhook_timeout_s: float = Field(default=5.0, description="Timeout of one webhook request.")

    report: ReportSettings = Field(default_factory=ReportSettings, description=ReportSettings.__doc__)

    data_dir: str | None = Field(
        default=None,
        description="Faust's working directory (it makes one even for in-memory tables); unset: under the "
                    "temporary directory, so that a worker started from a checkout leaves nothing in it.")

    session_timeout_s: float = Field(
        default=30.0,
        description="A killed worker's partitions move to another once the group has not heard from it for "
                    "this long.")

    take_max: int = Field(default=200, description="Records the router takes per turn.")
    take_within_s: float = Field(
        default=0.2, description="How long a turn waits to fill (latency against cost per turn).")

    def faust_data_dir(self) -> str:
        return self.data_dir or str(Path(tempfile.gettempdir()) / f"{self.app_id}-data")

    def by_task_topic(self) -> str:
        return f"{self.app_id}-by-task"

    def changelog_topic(self, table: str) -> str:
        return f"{self.app_id}-{table}-changelog"  # Faust's own naming
