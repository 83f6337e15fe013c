"""Log levels of a worker process: ours at the level asked for, chatty libraries at WARNING.

Per request lines of the HTTP clients (every Elasticsearch ``_bulk``, every schema registry lookup, every
S3 PUT) are DEBUG detail: at INFO a busy worker printed one line per request. A worker says what it did
in a summary line every ``observability.summary_interval_s`` instead.
"""

from __future__ import annotations

import logging

# Loggers of libraries that log each request at INFO.
PER_REQUEST_LOGGERS = ("elastic_transport", "elasticsearch", "httpx", "httpx2", "httpcore", "botocore", "boto3",
                       "urllib3", "s3transfer", "aiohttp.access")

LEVELS = {"crit": logging.CRITICAL, "error": logging.ERROR, "warn": logging.WARNING, "info": logging.INFO,
          "debug": logging.DEBUG}


def quiet_libraries(loglevel: str) -> None:
    """Per-request library loggers at WARNING, unless the worker runs at debug."""
    level = logging.DEBUG if LEVELS.get(loglevel, logging.INFO) <= logging.DEBUG else logging.WARNING
    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(level)


def setup_worker_logging(loglevel: str) -> None:
    logging.basicConfig(level=LEVELS.get(loglevel, logging.INFO),
                        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s")
    quiet_libraries(loglevel)
