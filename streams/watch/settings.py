"""Rules and thresholds of the watch stage: the ``watch:`` section (``SLUICE_WATCH__<FIELD>``)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

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
