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
