"""A base for test doubles of the sinks' ``RecordSource`` (streams.sinks.base)."""

from __future__ import annotations


class UntrackedSource:
    """What a fake source has no notion of: no revocations, no positions, no lag, no record times, and
    nothing to close. A fake subclasses it and writes only what its test is about."""

    def take_revoked(self) -> list[tuple[str, int]]:
        return []

    def positions(self) -> dict[tuple[str, int], int]:
        return {}

    def lag(self) -> dict[tuple[str, int], int]:
        return {}

    def newest_read_ms(self) -> dict[tuple[str, int], int]:
        return {}

    def close(self) -> None:
        return None
