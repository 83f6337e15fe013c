"""Schema ids the registry said it does not have, remembered for a while.

A record that names an unknown schema id is a dead letter; without this, every such record (and every
re-drive of it) asked the registry again. Only a definite "not found" (HTTP 404) is remembered, for
``ttl_s``: a registry that is down or slow is asked again next time, and a schema registered meanwhile
is found once the entry expires.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

DEFAULT_TTL_S = 60.0
MAX_ENTRIES = 10_000  # a flood of random ids must not grow it without bound


class SchemaNotFound(LookupError):
    """The registry answered that it has no schema with this id (possibly remembered from earlier)."""


def is_not_found(exc: BaseException) -> bool:
    return getattr(exc, "http_status_code", None) == 404


class MissingSchemas:
    def __init__(self, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._until: dict[int, tuple[float, str]] = {}

    def get_schema(self, registry: Any, schema_id: int) -> Any:
        """``registry.get_schema(schema_id)``, or :class:`SchemaNotFound` without asking while the id
        is remembered as missing."""
        now = self.clock()
        hit = self._until.get(schema_id)
        if hit is not None:
            if hit[0] > now:
                raise SchemaNotFound(hit[1])
            del self._until[schema_id]
        try:
            return registry.get_schema(schema_id)
        except Exception as exc:
            if not is_not_found(exc):
                raise
            if len(self._until) >= MAX_ENTRIES:
                self._until.clear()
            reason = f"schema id {schema_id} is not in the registry ({exc})"
            self._until[schema_id] = (now + self.ttl_s, reason)
            raise SchemaNotFound(reason) from exc
