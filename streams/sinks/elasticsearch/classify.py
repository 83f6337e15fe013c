"""Retry classifier: reads a bulk response (or the error instead of one) and says, per item,
done / retry / give up. Pure: no I/O.

- 2xx: done.
- 429, any 5xx, ``es_rejected_execution_exception``, ``circuit_breaking_exception`` and cluster
  blocks (flood-stage disk): retry, and tell the rate controller the store pushed back.
- Everything else an item can answer (``mapper_parsing_exception``, ``document_parsing_exception``,
  ``illegal_argument_exception``, ...): the document itself is wrong and retrying cannot help; it
  goes to the dead-letter topic with Elasticsearch's reason.
- The whole request failed (connection refused or lost, timeout, 429/5xx on the request): retry all.
- 401 or 403 on the whole request, or ``security_exception`` on an item: the credentials are wrong or
  lack a privilege. Every document would be refused alike, so nothing is dead-lettered: the sink stops
  with the reason (``Verdict.STOP``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Error types that mean "not now", whatever status they come with.
TRANSIENT_TYPES = frozenset({
    "es_rejected_execution_exception",
    "circuit_breaking_exception",
    "cluster_block_exception",  # e.g. flood-stage disk watermark: clears when space is freed
    "unavailable_shards_exception",
    "no_shard_available_action_exception",
    "node_not_connected_exception",
    "node_closed_exception",
    "process_cluster_event_timeout_exception",
    "timeout_exception",
})
PUSHBACK_TYPES = frozenset({"es_rejected_execution_exception", "circuit_breaking_exception"})
# Refused for who we are, not for what the document holds.
CREDENTIAL_STATUS = frozenset({401, 403})
CREDENTIAL_TYPES = frozenset({"security_exception"})


class Verdict(enum.Enum):
    OK = "ok"
    RETRY = "retry"
    REJECT = "reject"
    STOP = "stop"  # credentials refused: stop the sink, dead-letter nothing


@dataclass(frozen=True, slots=True)
class ItemResult:
    verdict: Verdict
    status: int
    reason: str = ""
    error_type: str = ""
    throttled: bool = False  # the store pushed back (slow down), not just a passing failure


OK = ItemResult(Verdict.OK, 200)


def classify_item(item: Mapping[str, Any]) -> ItemResult:
    """One entry of a bulk response's ``items`` (``{"index": {"status": ..., "error": {...}}}``)."""
    body: Mapping[str, Any] = next(iter(item.values()), {}) if item else {}
    status = int(body.get("status", 0))
    if 200 <= status < 300:
        return OK
    error = body.get("error") or {}
    if isinstance(error, str):  # very old servers answered a plain string
        error = {"type": "", "reason": error}
    etype = str(error.get("type", ""))
    reason = describe(error, status)
    if status == 429 or status >= 500 or etype in TRANSIENT_TYPES:
        return ItemResult(Verdict.RETRY, status, reason, etype, throttled=status == 429 or etype in PUSHBACK_TYPES)
    if etype in CREDENTIAL_TYPES:
        return ItemResult(Verdict.STOP, status, reason, etype)
    return ItemResult(Verdict.REJECT, status, reason, etype or f"http_{status}")


def describe(error: Mapping[str, Any], status: int) -> str:
    """Elasticsearch's own words: type, reason and the cause underneath (where the detail is)."""
    parts = [f"{error.get('type', 'error')}: {error.get('reason', '')}".strip()]
    cause = error.get("caused_by")
    depth = 0
    while isinstance(cause, Mapping) and depth < 3:
        parts.append(f"caused by {cause.get('type', '')}: {cause.get('reason', '')}")
        cause = cause.get("caused_by")
        depth += 1
    return f"HTTP {status} " + "; ".join(parts)


def classify_bulk(response: Mapping[str, Any], count: int) -> list[ItemResult]:
    """Per-item verdicts for a bulk response of ``count`` actions.

    A response that does not answer every action (it should never happen) retries them all rather
    than guessing which ones landed: a retry of an ``index`` action is harmless.
    """
    items = response.get("items") or []
    if len(items) != count:
        reason = f"bulk response answered {len(items)} of {count} actions; retrying all"
        return [ItemResult(Verdict.RETRY, 0, reason, "incomplete_response")] * count
    if not response.get("errors"):
        return [OK] * count
    return [classify_item(item) for item in items]


def classify_request_error(status: int | None, error_type: str, reason: str) -> ItemResult:
    """The whole bulk request failed. ``status`` is None when no HTTP answer came (connection, timeout)."""
    if status is None:
        return ItemResult(Verdict.RETRY, 0, f"no answer from Elasticsearch: {reason}", error_type or "connection")
    if status == 429 or status >= 500 or error_type in TRANSIENT_TYPES:
        return ItemResult(Verdict.RETRY, status, f"HTTP {status} {error_type}: {reason}", error_type,
                          throttled=status in (429, 503) or error_type in PUSHBACK_TYPES)
    if status in CREDENTIAL_STATUS or error_type in CREDENTIAL_TYPES:
        return ItemResult(Verdict.STOP, status, f"HTTP {status} {error_type}: {reason}", error_type or f"http_{status}")
    if status == 413:
        # Request too large for http.max_content_length: the batch byte limit is set too high. Retrying
        # the same body cannot succeed, but the records are fine, so this is the operator's to fix.
        return ItemResult(Verdict.RETRY, status,
                          f"HTTP 413 bulk too large: lower SLUICE_HOT__MAX_BATCH_BYTES; {reason}",
                          "request_too_large", throttled=True)
    return ItemResult(Verdict.REJECT, status, f"HTTP {status} {error_type}: {reason}", error_type or f"http_{status}")


def classify_exception(exc: BaseException) -> ItemResult:
    """Map the elasticsearch client's exceptions onto :func:`classify_request_error`."""
    from elastic_transport import ConnectionError as TransportConnectionError
    from elastic_transport import ConnectionTimeout, TransportError
    from elasticsearch import ApiError

    if isinstance(exc, ApiError):
        info = exc.info if isinstance(exc.info, Mapping) else {}
        raw_err = info.get("error")
        err: Mapping[str, Any] = raw_err if isinstance(raw_err, Mapping) else {}
        return classify_request_error(int(exc.meta.status), str(err.get("type", "")),
                                      str(err.get("reason", exc.message)))
    if isinstance(exc, ConnectionTimeout | TransportConnectionError | TransportError | OSError | TimeoutError):
        return classify_request_error(None, type(exc).__name__, str(exc))
    return classify_request_error(None, type(exc).__name__, repr(exc))
