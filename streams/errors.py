"""One root exception type; subclasses where a caller acts on the difference."""

from __future__ import annotations


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


class CommitFailed(SluiceError):
    """A transient failure to commit offsets (the broker restarting, the coordinator moving).

    Nothing is lost: the runner offers the same offsets again at its next turn.
    """


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
