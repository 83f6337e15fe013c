"""Log output as text for people or as one JSON object per line for a log pipeline.

``observability.log_format`` (or ``sluice --log-format``) picks the format; :func:`configure` sets up
the root logger for the plain workers and commands, :func:`faust_logging_config` gives the Faust workers
(assemble, watch) the same through Faust's own ``logging_config``.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

TEXT_FORMAT = "[%(asctime)s] %(levelname)s %(name)s: %(message)s"
LEVELS = {"crit": "CRITICAL", "warn": "WARNING"}
# Attributes every LogRecord has; anything else was passed as `extra=` and goes into the JSON object.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", ...extra, "exc"}``: one line per record, UTF-8 kept."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def level_name(level: str) -> str:
    """``warn`` / ``crit`` (Faust's spellings) as logging's names."""
    return LEVELS.get(level.lower(), level.upper())


def formatter(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)


def configure(level: str, fmt: str) -> None:
    """The root logger writes ``fmt`` lines to stderr at ``level`` (replacing earlier handlers)."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level_name(level))


def faust_logging_config(level: str, fmt: str) -> dict[str, Any] | None:
    """A ``logging.config`` dictionary for Faust's worker, or None to keep Faust's own text format."""
    if fmt != "json":
        return None
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "streams.logs.JsonFormatter"}},
        "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "json",
                                 "stream": "ext://sys.stderr"}},
        "root": {"level": level_name(level), "handlers": ["default"]},
    }


# Loggers of libraries that log each request at INFO: every Elasticsearch `_bulk`, every schema registry
# lookup, every S3 PUT. At INFO a busy worker printed one line per request; a worker says what it did in a
# summary line every `observability.summary_interval_s` instead, and these are DEBUG detail.
PER_REQUEST_LOGGERS = ("elastic_transport", "elasticsearch", "httpx", "httpx2", "httpcore", "botocore", "boto3",
                       "urllib3", "s3transfer", "aiohttp.access")


def quiet_libraries(level: str) -> None:
    """Per-request library loggers at WARNING, unless the worker runs at debug."""
    debug = level_name(level) == "DEBUG"
    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.WARNING)
