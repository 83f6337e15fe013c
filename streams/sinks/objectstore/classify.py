"""Object-store failures, classified once: a table of S3 error codes (botocore's ``Error.Code``; a HEAD
answer has no body, so its code is the HTTP status). Pure: no I/O.

- transient: no answer (connection refused or reset, timeout), throttling (503 SlowDown, 429), a
  server error (500, 502, 504), an upload cut or corrupted on the way, a conflicting operation
  still running. The segment keeps its built bytes and is tried again after a backoff;
- refused: the credentials or the clock (AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch,
  RequestTimeTooSkewed), or a bucket that does not exist or lives elsewhere. Every object would fail
  alike: the sink stops with the reason instead of retrying forever with a warning;
- permanent: the object itself can never be stored (a key too long, an object too large, an argument
  the store refuses). Its records are dead-lettered with the store's reason, the rest go on.

An error code not in the tables is transient when its HTTP status is 5xx, else permanent.
"""

from __future__ import annotations

import socket
from typing import Any

from streams.errors import Failure

THROTTLE_CODES = frozenset({"SlowDown", "503", "ServiceUnavailable", "RequestLimitExceeded", "TooManyRequests",
                            "429", "Throttling", "ThrottlingException"})
TRANSIENT_CODES = THROTTLE_CODES | frozenset({
    "InternalError", "500", "502", "504", "RequestTimeout", "RequestTimeoutException", "OperationAborted",
    "PriorRequestNotComplete", "Busy", "BadDigest", "IncompleteBody", "XAmzContentSHA256Mismatch",
    "ExpiredRequest",  # a request signed long before it was sent: sent again, it is signed anew
})
REFUSED_CODES = frozenset({
    "AccessDenied", "403", "401", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
    "TokenRefreshRequired", "AccountProblem", "AllAccessDisabled", "InvalidSecurity", "NotSignedUp",
    "RequestTimeTooSkewed", "AuthorizationHeaderMalformed", "NoSuchBucket", "InvalidBucketName",
    "PermanentRedirect", "301", "InvalidBucketState",
})
# Everything else with a 4xx status, for instance KeyTooLongError, EntityTooLarge, InvalidArgument,
# InvalidObjectName, MetadataTooLarge: the object's fault.

_NO_ANSWER = frozenset({"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError",
                        "ConnectionClosedError", "ResponseStreamingError", "ProxyConnectionError"})


def error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def http_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return int(status) if isinstance(status, int) else None
    return None


def is_throttle(exc: BaseException) -> bool:
    return error_code(exc) in THROTTLE_CODES


def store_failure(exc: BaseException) -> Failure:
    """Transient, refused or permanent (see the module's docstring)."""
    cause: BaseException | None = exc
    while cause is not None and not error_code(cause) and cause.__cause__ is not None:
        cause = cause.__cause__  # ours wrap the store's own error (ObjectStoreError from a ClientError)
    if cause is not None and error_code(cause):
        exc = cause
    code = error_code(exc)
    if code:
        if code in TRANSIENT_CODES:
            return Failure.TRANSIENT
        if code in REFUSED_CODES:
            return Failure.REFUSED
        status = http_status(exc)
        return Failure.TRANSIENT if status is None or status >= 500 else Failure.PERMANENT
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:  # no answer at all: the store is away, not the object wrong
        seen.add(id(cur))
        if isinstance(cur, ConnectionError | TimeoutError | socket.gaierror | OSError) or type(
                cur).__name__ in _NO_ANSWER:
            return Failure.TRANSIENT
        cur = cur.__cause__ or cur.__context__
    return Failure.TRANSIENT if _botocore_http(exc) else Failure.PERMANENT


def _botocore_http(exc: Any) -> bool:
    """botocore's transport errors (HTTPClientError and its kind) carry no code and are the network's."""
    return any(t.__name__ == "HTTPClientError" for t in type(exc).__mro__)
