"""Rules and thresholds of the watch stage (`watch:` in the YAML file, ``SLUICE_WATCH__*`` overrides).

This model is meant to become ``Settings.watch``; until then :func:`load_watch_settings` reads the
same YAML section and environment variables itself, with the same precedence (environment wins).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, SecretStr

from streams.errors import ConfigError

ENV_PREFIX = "SLUICE_WATCH__"

# error_class (log_event.avsc) -> alert severity. One alert per task and class per cooldown.
DEFAULT_INCIDENT_CLASSES = {
    "cuda_oom": "critical",
    "cuda_error": "critical",
    "nccl_timeout": "critical",
    "nccl_error": "critical",
    "signal": "critical",  # a rank killed (SIGKILL, SIGSEGV, ...): torchrun's ChildFailedError lands here too
    "python_exception": "warning",  # an uncaught traceback; many are fatal, some are logged and survived
}


class WatchSettings(BaseModel):
    """The watch stage: a Faust app over logs.metrics and logs.events.<project>."""

    app_id: str = "sluice-watch"  # the consumer group, and the prefix of its internal topics
    # Partitions of the by-task topic and of every table changelog (Faust needs them equal).
    partitions: int = 3

    # Incidents from events: raised at once, then de-duplicated per task and class for cooldown_s.
    incident_classes: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_INCIDENT_CLASSES))
    # One incident per task and rule for this long; later reports (other ranks) are folded into it.
    cooldown_s: float = 30 * 60

    # GPU idle: the average utilisation of one rank over a hopping window below the threshold.
    gpu_idle_pct: float = 10.0
    gpu_idle_window_s: int = 5 * 60
    gpu_idle_step_s: int = 60  # how often a new window closes, i.e. the worst-case added latency
    # A window is judged this long (event time) after it ends: records of one task reach the watch
    # stage through several partitions, so they arrive a little out of order.
    gpu_idle_grace_s: int = 30
    gpu_idle_min_samples: int = 3
    # The samples must span this share of the window: a job that just started is not "idle".
    gpu_idle_min_coverage: float = 0.8
    # Windows are dropped this long after they close. Faust expires them against the WALL clock,
    # so it must exceed how far behind real time the stream may run.
    window_expires_s: int = 2 * 3600

    # Stalled: no step change for this long while the task still logs.
    stall_after_s: int = 15 * 60

    # Loss: NaN/inf at once; a spike when loss > factor x the mean of the last loss_history values.
    loss_spike_factor: float = 3.0
    loss_history: int = 20
    loss_min_history: int = 5  # fewer values are no baseline

    # Alerts index in Elasticsearch: <prefix><project>, _id = alert_id.
    alerts_index_prefix: str = "sluice-alerts-"

    # Optional webhook (a Slack incoming webhook or a WeCom group robot); its URL carries a token.
    webhook_url: SecretStr | None = None
    webhook_style: Literal["slack", "wecom"] = "slack"
    webhook_min_severity: Literal["info", "warning", "critical"] = "warning"
    webhook_attempts: int = 5
    webhook_backoff_s: float = 0.5  # doubled per retry, capped at webhook_backoff_max_s
    webhook_backoff_max_s: float = 10.0
    webhook_timeout_s: float = 5.0

    # Faust's working directory (it creates one even for in-memory tables); None: under the temp dir,
    # so workers started from a checkout leave nothing in it.
    data_dir: str | None = None

    # A killed worker's partitions move to another once the group stops hearing from it.
    session_timeout_s: float = 30.0

    # Records the router takes per turn, and how long a turn waits to fill (latency vs. cost).
    take_max: int = 200
    take_within_s: float = 0.2

    def faust_data_dir(self) -> str:
        return self.data_dir or str(Path(tempfile.gettempdir()) / f"{self.app_id}-data")

    def by_task_topic(self) -> str:
        return f"{self.app_id}-by-task"

    def changelog_topic(self, table: str) -> str:
        return f"{self.app_id}-{table}-changelog"  # Faust's own naming


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        field = name[len(ENV_PREFIX):].lower()
        value: Any = raw
        if raw.lstrip().startswith(("{", "[")):
            try:
                value = json.loads(raw)
            except ValueError as exc:
                raise ConfigError(f"{name} is not valid JSON: {exc}") from exc
        out[field] = value
    return out


def load_watch_settings(environ: dict[str, str] | None = None, **overrides: Any) -> WatchSettings:
    """Defaults < the YAML file's ``watch:`` section < ``SLUICE_WATCH__<FIELD>`` < ``overrides``."""
    from streams.config import config_path  # here: streams.config imports this module

    data: dict[str, Any] = {}
    path = config_path()
    if path is not None:
        loaded = yaml.safe_load(path.read_text()) or {}
        section = loaded.get("watch") if isinstance(loaded, dict) else None
        if section is not None and not isinstance(section, dict):
            raise ConfigError(f"{path}: `watch:` must be a mapping, not {type(section).__name__}")
        data.update(section or {})
    data.update(_env_overrides(dict(os.environ) if environ is None else environ))
    data.update(overrides)
    try:
        return WatchSettings.model_validate(data)
    except ValueError as exc:
        raise ConfigError(f"invalid watch configuration ({path or 'defaults and environment'}): {exc}") from exc


def watch_settings_of(settings: Any) -> WatchSettings:
    """``settings.watch`` once Settings carries it; until then the YAML section and environment."""
    found = getattr(settings, "watch", None)
    return found if isinstance(found, WatchSettings) else load_watch_settings()
