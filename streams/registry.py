"""Schema registry failures, classified once for every stage that looks schemas up.

- no answer (connection refused or reset, DNS, timeout), HTTP 408, 429 and 5xx: *transient*. The
  registry is down, restarting or overloaded; no record is to blame, so none is dead-lettered: the
  stage waits with backoff and reads the records again (:class:`~streams.errors.DependencyUnavailable`);
- HTTP 401 and 403: *refused* (credentials). Every lookup would fail alike: the stage stops
  (:class:`~streams.errors.DependencyRefused`);
- any other answer (404 for an id the registry does not know, 422 for a schema it refuses): *permanent*,
  the record's own fault; the error is left as it is for the stage to dead-letter the record.

The registry client already retries a few times inside one call (``max.retries``); what reaches here
is what is left after those.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from streams.errors import DependencyFailure, DependencyRefused, DependencyUnavailable, Failure

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 429})
CREDENTIAL_STATUS = frozenset({401, 403})
# Exceptions that mean "no answer came" (httpx, which the registry client uses, and the stdlib).
_NO_ANSWER = frozenset({"TransportError", "ConnectError", "ConnectTimeout", "ReadTimeout", "WriteTimeout",
                        "PoolTimeout", "TimeoutException", "NetworkError", "ReadError", "WriteError",
                        "RemoteProtocolError", "ProxyError"})


def registry_failure(exc: BaseException) -> Failure:
    """Transient, refused or permanent (see the module's docstring)."""
    status = getattr(exc, "http_status_code", None)
    if isinstance(status, int) and status > 0:
        if status in CREDENTIAL_STATUS:
            return Failure.REFUSED
        if status in TRANSIENT_STATUS or status >= 500:
            return Failure.TRANSIENT
        return Failure.PERMANENT
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionError | TimeoutError | socket.gaierror) or any(
                t.__name__ in _NO_ANSWER for t in type(cur).__mro__):
            return Failure.TRANSIENT
        cur = cur.__cause__ or cur.__context__
    return Failure.PERMANENT


def raise_for_registry(exc: BaseException, what: str, url: str) -> None:
    """Turn a transient or credential failure of ``what`` into the stage's exception; a permanent one
    returns, for the caller to re-raise (or dead-letter the record it concerns)."""
    if isinstance(exc, DependencyFailure):
        raise exc
    kind = registry_failure(exc)
    if kind is Failure.TRANSIENT:
        raise DependencyUnavailable(f"schema registry {url} did not answer {what} ({type(exc).__name__}: {exc}); "
                                    "waiting for it, the records stay in Kafka", "registry") from exc
    if kind is Failure.REFUSED:
        raise DependencyRefused(f"schema registry {url} refused {what}: {exc}. Check registry.url and the "
                                 "registry credentials of this stage (basic auth user info, TLS client "
                                 "certificate) and the permissions of that user", "registry") from exc


def checked(call: Callable[[], T], what: str, url: str) -> T:
    """``call()``, with its transient and credential failures classified (permanent ones re-raised)."""
    try:
        return call()
    except Exception as exc:
        raise_for_registry(exc, what, url)
        raise


async def until_answered(call: Callable[[], T], what: str, base_s: float = 0.5, cap_s: float = 30.0,
                         on_wait: Callable[[float], None] | None = None) -> T:
    """``call()`` in a thread, again and again with backoff while the registry is unavailable.

    Credentials refused and permanent failures are raised at once."""
    from streams.sinks.base import Backoff

    backoff = Backoff(base_s, cap_s)
    attempt = 0
    while True:
        try:
            return await asyncio.to_thread(call)
        except DependencyUnavailable as exc:
            attempt += 1
            delay = max(base_s, backoff.delay(attempt))
            log.warning("%s (attempt %d, next in %.1f s)", exc, attempt, delay)
            if on_wait is not None:
                on_wait(delay)
            await asyncio.sleep(delay)


class SchemaCache:
    """Schema id -> parsed writer schema, each fetched once (the decoders of Avro records).

    A transient failure raises :class:`~streams.errors.DependencyUnavailable` and caches nothing, so
    the id is asked again once the registry is back; an unknown id raises the registry's own error.
    """

    def __init__(self, registry: Any, parse: Callable[[str], Any], url: str = "the schema registry") -> None:
        from streams.registry_cache import MissingSchemas

        self.registry = registry
        self.parse = parse
        self.url = url
        self._schemas: dict[int, Any] = {}
        self._missing = MissingSchemas()  # ids the registry said it does not have, not asked again for a while

    def __call__(self, schema_id: int) -> Any:
        found = self._schemas.get(schema_id)
        if found is None:
            schema = checked(lambda: self._missing.get_schema(self.registry, schema_id),
                             f"the lookup of schema id {schema_id}", self.url)
            found = self._schemas[schema_id] = self.parse(schema.schema_str)
        return found

    def known(self, schema_id: int) -> bool:
        return schema_id in self._schemas


def wire_schema_id(value: bytes | None) -> int | None:
    """The schema id of a Confluent wire-format value (magic byte 0, then 4 bytes), else None."""
    if value is None or len(value) < 5 or value[0] != 0:
        return None
    return int.from_bytes(value[1:5], "big")


async def schema_ids_ready(lookup: SchemaCache, values: Iterable[bytes | None],
                           on_wait: Callable[[float], None] | None = None) -> None:
    """Look up the writer schema of every wire-format value in ``values`` not cached yet, waiting with
    backoff while the registry does not answer, so that a decoder meets no outage halfway through a
    turn and no good record is dead-lettered for one. An id the registry does not know is left to the
    decoder, which dead-letters its record."""
    ids = {sid for value in values if (sid := wire_schema_id(value)) is not None}
    for sid in sorted(i for i in ids if not lookup.known(i)):
        try:
            await until_answered(functools.partial(lookup, sid), f"schema id {sid}", on_wait=on_wait)
        except DependencyFailure:
            raise
        except Exception:  # noqa: BLE001, S112 - unknown to the registry: the decoder dead-letters the record
            continue


def subject_registered(client: Any, subject: str) -> bool:
    """Does the registry hold a version of ``subject``? Asked of the subject itself: the list of all
    subjects comes in pages (Apicurio's Confluent API gives the first 1,000), so a subject registered
    late in a busy registry is missing from it."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    try:
        return bool(client.get_versions(subject))
    except SchemaRegistryError as exc:
        if exc.http_status_code == 404:
            return False
        raise
