"""One root exception type; subclasses where a caller acts on the difference."""

from __future__ import annotations

import enum


class SluiceError(Exception):
    """Root of every error Sluice raises on purpose.

    Messages say what happened, where (topic, partition, offset, file, URL) and what to do.
    """


class ConfigError(SluiceError):
    """The configuration file or an environment override is invalid."""


class StackError(SluiceError):
    """A local server could not be installed, started, stopped or reached."""


class SchemaError(SluiceError):
    """A schema is invalid, missing from the registry, or incompatible with a registered one."""


class DecodeError(SluiceError):
    """A raw record could not be decoded; the record goes to the dead-letter topic.

    ``error_type`` is the machine-readable kind written into the dead letter.
    """

    def __init__(self, message: str, error_type: str = "undecodable") -> None:
        super().__init__(message)
        self.error_type = error_type


class TooManyLines(DecodeError):
    """A record holds more lines than its reader's limit: found while decoding, before the lines are built
    (a record's lines are told from its bytes only for plain text; an escaped ``\\n``, an OTLP log record or
    an Avro array item is a line too)."""

    def __init__(self, lines: int, limit: int) -> None:
        super().__init__(f"a record of {lines:,} lines or more, over the limit of {limit:,}", "too_many_lines")
        self.lines = lines


class CommitFailed(SluiceError):
    """A transient failure to commit offsets (the broker restarting, the coordinator moving).

    Nothing is lost: the runner offers the same offsets again at its next turn.
    """


class DependencyFailure(SluiceError):
    """A server the stage depends on failed, and no record is to blame: nothing may be dead-lettered
    for it. Stages let it pass through their per-record handling."""

    def __init__(self, message: str, dependency: str) -> None:
        super().__init__(message)
        self.dependency = dependency  # kafka, registry, elasticsearch, object_store


class DependencyUnavailable(DependencyFailure):
    """Transient: the server is down, restarting, slow or overloaded. The stage waits with backoff and
    reads the records again once it answers (they stay in Kafka)."""


class DependencyRefused(DependencyFailure):
    """The server refused the stage itself: its credentials or permissions (401/403, SASL
    authentication, an ACL), or a place it writes to that does not exist (a deleted bucket). Every
    record would fail the same way, so the stage stops with this message instead of dead-lettering
    them; an operator fixes the secret, the role or the setting and starts it again."""


class Failure(enum.Enum):
    """What a dependency's classifier says about one failure (``streams/registry.py``,
    ``streams/kafka_errors.py``, the Elasticsearch and object-store sinks' ``classify``)."""

    TRANSIENT = "transient"  # wait with backoff, the records stay in Kafka
    PERMANENT = "permanent"  # this record (or object) can never succeed: dead-letter it with the reason
    REFUSED = "refused"  # credentials, permissions, a missing bucket: every record would fail alike, stop


class Unreachable(SluiceError):
    """A server did not answer: which one, at which address, and what to check.

    Never reported as "nothing found": a command that could not look says so and exits non-zero.
    """

    def __init__(self, server: str, address: str, detail: str, check: str) -> None:
        super().__init__(f"cannot reach {server} at {address} ({detail}); {check}")
        self.server = server
        self.address = address


class NotFound(SluiceError):
    """What the command was asked about (a consumer group, a topic, a letter, a day of data) does not exist."""


class PartlyDone(SluiceError):
    """The command ran to its end, but some of what it handled failed; the message says which."""
