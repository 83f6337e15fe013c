"""Can the servers a command needs be reached? One line each when not: which, where, what to check.

An operator command checks its servers before it reads anything (:func:`check`), so that "could not
look" is never reported as "found nothing". :func:`unreachable_from` names the server behind an
exception that escaped anyway (a server that went away mid-command).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from streams.config import Settings
from streams.errors import Unreachable

_SILENT = logging.getLogger("streams.reach.probe")
_SILENT.addHandler(logging.NullHandler())
_SILENT.propagate = False

SERVERS = ("kafka", "registry", "elasticsearch", "object_store")

# What to check, per server: the setting that points at it, and its environment override.
CHECK = {
    "kafka": "check that the brokers are up and that kafka.bootstrap_servers (SLUICE_KAFKA__BOOTSTRAP_SERVERS) "
             "points at them",
    "registry": "check that the schema registry is up and that registry.url (SLUICE_REGISTRY__URL) points at it",
    "elasticsearch": "check that Elasticsearch is up and that elasticsearch.url (SLUICE_ELASTICSEARCH__URL) "
                     "points at it",
    "object_store": "check that the object store is up and that object_store.endpoint_url "
                    "(SLUICE_OBJECT_STORE__ENDPOINT_URL) points at it",
}
NAME = {"kafka": "Kafka", "registry": "the schema registry", "elasticsearch": "Elasticsearch",
        "object_store": "the object store"}

# librdkafka errors that mean "no broker answers" (or refuses us), as opposed to "no answer yet".
_KAFKA_FATAL = frozenset({"_ALL_BROKERS_DOWN", "_AUTHENTICATION", "_SSL", "_RESOLVE"})


def address(settings: Settings, server: str) -> str:
    return {
        "kafka": settings.kafka.bootstrap_servers,
        "registry": settings.registry.url,
        "elasticsearch": settings.elasticsearch.url,
        "object_store": settings.object_store.endpoint_url,
    }[server]


def unreachable(settings: Settings, server: str, detail: str) -> Unreachable:
    return Unreachable(NAME[server], address(settings, server), detail, CHECK[server])


def check_kafka(settings: Settings, timeout_s: float = 10.0) -> Any:
    """The cluster's metadata, or :class:`Unreachable` as soon as every broker refused us (usually
    well under a second), or after ``timeout_s`` without an answer."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    errors: list[Any] = []
    # The probe reports its own one line: librdkafka's lines about the same failure are not wanted.
    conf: dict[str, Any] = {**settings.kafka.client_config(), "error_cb": errors.append, "logger": _SILENT}
    admin = AdminClient(conf)
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            return admin.list_topics(timeout=min(0.5, max(0.05, deadline - time.monotonic())))
        except KafkaException as exc:
            last = exc.args[0].str() if exc.args else str(exc)
        admin.poll(0)  # serves error_cb
        fatal = [e for e in errors if e.name() in _KAFKA_FATAL]
        if fatal:
            # "1/1 brokers are down" says less than the reason a connection failed: prefer the reason.
            reasons = [e.str() for e in errors if e.name() != "_ALL_BROKERS_DOWN"] or [fatal[0].str()]
            raise unreachable(settings, "kafka", _last_part(reasons[-1]))
    raise unreachable(settings, "kafka", f"{last}; no answer in {timeout_s:g} s")


def _last_part(text: str) -> str:
    """librdkafka prefixes the broker name: ``127.0.0.1:1/bootstrap: Connect to ... failed: X``."""
    return text.split("/bootstrap: ", 1)[-1]


def check_registry(settings: Settings, timeout_s: float = 10.0) -> None:
    import httpx

    try:
        httpx.get(settings.registry.url.rstrip("/") + "/subjects", timeout=timeout_s).raise_for_status()
    except httpx.HTTPStatusError as exc:
        raise unreachable(settings, "registry", f"HTTP {exc.response.status_code}") from exc
    except httpx.HTTPError as exc:
        raise unreachable(settings, "registry", _short(exc)) from exc


def check_elasticsearch(settings: Settings, timeout_s: float = 10.0) -> None:
    from streams.clients import es_client

    client = es_client(settings.elasticsearch.model_copy(update={"request_timeout_s": timeout_s}))
    try:
        # Not GET / : a minimal server (the integ-test zip) answers only the APIs it has.
        client.options(max_retries=0).cluster.health()
    except Exception as exc:
        raise unreachable_from(exc, settings) or unreachable(settings, "elasticsearch", _short(exc)) from exc


def check_object_store(settings: Settings, timeout_s: float = 10.0) -> None:
    from streams.clients import s3_client

    try:
        s3_client(settings.object_store, timeout_s=timeout_s).list_buckets()
    except Exception as exc:
        raise unreachable_from(exc, settings) or unreachable(settings, "object_store", _short(exc)) from exc


CHECKS: dict[str, Callable[[Settings, float], Any]] = {
    "kafka": check_kafka, "registry": check_registry, "elasticsearch": check_elasticsearch,
    "object_store": check_object_store,
}


def check(settings: Settings, servers: tuple[str, ...], timeout_s: float = 10.0) -> None:
    """Raise :class:`Unreachable` for the first of ``servers`` that does not answer."""
    for server in servers:
        CHECKS[server](settings, timeout_s)


def _short(exc: BaseException) -> str:
    """The innermost reason, one line (connection errors nest three or four deep)."""
    cur: BaseException = exc
    seen = {id(cur)}
    while (nxt := cur.__cause__ or cur.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        cur = nxt
    text = str(cur) or type(cur).__name__
    return " ".join(text.split())[:200]


# (modules an exception comes from, its class names that mean "no connection", the server behind it)
_CONNECTION_ERRORS: tuple[tuple[tuple[str, ...], frozenset[str], str], ...] = (
    (("elasticsearch", "elastic_transport"),
     frozenset({"ConnectionError", "ConnectionTimeout", "TransportError", "SSLError"}), "elasticsearch"),
    (("botocore", "urllib3"),
     frozenset({"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
                "SSLError"}), "object_store"),
    # The schema registry client speaks HTTP through httpx; no other command-side client does.
    (("httpx", "httpcore", "requests"), frozenset({"ConnectError", "ConnectTimeout", "ReadTimeout",
                                                   "ConnectionError"}), "registry"),
)
_KAFKA_DOWN = frozenset({"_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT", "_RESOLVE", "_AUTHENTICATION", "_SSL"})


def _server_of(exc: BaseException) -> tuple[str, str] | None:
    """(server, reason) when ``exc`` itself is a failure to reach a server."""
    name, module = type(exc).__name__, type(exc).__module__
    for modules, names, server in _CONNECTION_ERRORS:
        if module.startswith(modules) and name in names:
            return server, _short(exc)
    if module.startswith(("confluent_kafka", "cimpl")):  # KafkaException is defined in the C module cimpl
        first: Any = exc.args[0] if exc.args else None
        if first is not None and hasattr(first, "name") and first.name() in _KAFKA_DOWN:
            return "kafka", _last_part(first.str())
        if name == "SchemaRegistryError" and getattr(exc, "http_status_code", None) in (-1, 502, 503, 504):
            return "registry", _short(exc)
    return None


def unreachable_from(exc: BaseException, settings: Settings) -> Unreachable | None:
    """The server behind a connection failure that escaped a command, or None if it is not one."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, Unreachable):
            return cur
        found = _server_of(cur)
        if found is not None:
            return unreachable(settings, *found)
        cur = cur.__cause__ or cur.__context__
    return None
