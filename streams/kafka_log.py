"""librdkafka's own log lines, through Python logging: WARNING and above, each cause once.

Left alone, librdkafka prints every failed connection attempt to stderr (hundreds of lines a minute
while a broker is down). Every client Sluice builds passes :func:`kafka_logger` as its ``logger``
(``KafkaSettings.client_config``), so its lines reach the logger ``streams.kafka``, where
:class:`OncePerCause` lets the first line of each cause through and drops its repeats: a cause is the
line with its counters, client names and durations taken out.
"""

from __future__ import annotations

import logging
import re

LOGGER_NAME = "streams.kafka"
MAX_CAUSES = 1000  # remembered causes; past it the memory starts again (a new cause is rare)

# What differs between two lines of the same cause: client instance names (rdkafka#consumer-7),
# thread names, durations, counts, and every other number (offsets, ports in retries, ids).
_VARYING = re.compile(r"rdkafka#\w+-\d+|\d+(?:\.\d+)?\s*(?:ms|s)\b|\d+")


def cause_of(message: str) -> str:
    """The line with what changes from one repeat to the next taken out."""
    return _VARYING.sub("#", message)


class OncePerCause(logging.Filter):
    """Passes the first record of each cause (:func:`cause_of`), drops the repeats."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        cause = cause_of(record.getMessage())
        if cause in self._seen:
            return False
        if len(self._seen) >= MAX_CAUSES:
            self._seen.clear()
        self._seen.add(cause)
        return True

    def forget(self) -> None:
        """Let every cause through once more (a test that must see a line again)."""
        self._seen.clear()


def kafka_logger() -> logging.Logger:
    """The logger every librdkafka client of this process writes to (WARNING and up, once per cause)."""
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(f, OncePerCause) for f in logger.filters):
        logger.setLevel(logging.WARNING)
        logger.addFilter(OncePerCause())
    return logger
