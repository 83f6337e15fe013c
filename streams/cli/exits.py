"""The exit statuses of `sluice`, one row per outcome a script may act on (docs/operator-guide.md
prints this table; a test keeps the two the same)."""

from __future__ import annotations

from streams.errors import ConfigError, NotFound, PartlyDone, SluiceError, Unreachable

OK = 0
FAILED = 1
USAGE = 2
CONFIG = 3
UNREACHABLE = 4
NOT_FOUND = 5
PARTLY_DONE = 6
INTERRUPTED = 130

# (status, meaning), in the order the guide lists them.
TABLE: tuple[tuple[int, str], ...] = (
    (OK, "done: what the command reports is the whole answer"),
    (FAILED, "failed: an error not covered below (the line says what; `--debug` adds the traceback)"),
    (USAGE, "usage: an unknown command or option, or a value of the wrong form"),
    (CONFIG, "configuration: the configuration file or a `SLUICE_*` variable is invalid"),
    (UNREACHABLE, "unreachable: Kafka, the schema registry, Elasticsearch or the object store did not answer "
                  "(the line names which, where, and what to check)"),
    (NOT_FOUND, "not found: the consumer group, topic, dead letter or data asked about does not exist"),
    (PARTLY_DONE, "partly done: the command ran to its end but some items failed (a re-driven letter that "
                  "failed again, an event not indexed); the report lists them"),
    (INTERRUPTED, "interrupted (Ctrl-C); a rerun resumes where progress is saved"),
)

# Most specific first: the first class an error is an instance of decides.
_BY_ERROR: tuple[tuple[type[SluiceError], int], ...] = (
    (ConfigError, CONFIG), (Unreachable, UNREACHABLE), (NotFound, NOT_FOUND), (PartlyDone, PARTLY_DONE),
)


def status_of(exc: SluiceError) -> int:
    for cls, status in _BY_ERROR:
        if isinstance(exc, cls):
            return status
    return FAILED
