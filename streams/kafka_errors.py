"""Kafka failures, classified once (librdkafka's error codes, as confluent-kafka reports them).

- credentials: SASL authentication failed, a TLS handshake refused, an ACL denying the topic, the group,
  the cluster or the transactional id. Every record would fail alike: the stage stops with the reason;
- permanent: this one record can never be written (too large for the topic, refused by a policy). It
  is cut or dead-lettered, never retried;
- transient: everything else librdkafka reports (brokers down or restarting, timeouts, a leader
  moving, a coordinator loading). librdkafka retries these itself; the stage waits.
"""

from __future__ import annotations

from typing import Any

from streams.errors import Failure

# Names, not numbers: confluent-kafka's KafkaError attributes, read once at import.
CREDENTIAL_CODES = (
    "_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED", "UNSUPPORTED_SASL_MECHANISM", "ILLEGAL_SASL_STATE", "_SSL",
    "TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
)
PERMANENT_CODES = ("MSG_SIZE_TOO_LARGE", "RECORD_LIST_TOO_LARGE", "INVALID_RECORD", "POLICY_VIOLATION")


def _codes(names: tuple[str, ...]) -> frozenset[int]:
    from confluent_kafka import KafkaError

    return frozenset(int(getattr(KafkaError, n)) for n in names if hasattr(KafkaError, n))


_CREDENTIALS = _codes(CREDENTIAL_CODES)
_PERMANENT = _codes(PERMANENT_CODES)


def kafka_failure(err: Any) -> Failure:
    """``err``: a confluent_kafka.KafkaError (or a KafkaException holding one)."""
    if hasattr(err, "args") and err.args and hasattr(err.args[0], "code"):
        err = err.args[0]
    code = err.code() if callable(getattr(err, "code", None)) else None
    if code in _CREDENTIALS:
        return Failure.REFUSED
    if code in _PERMANENT:
        return Failure.PERMANENT
    return Failure.TRANSIENT


def is_message_too_large(err: Any) -> bool:
    from confluent_kafka import KafkaError

    code = err.code() if callable(getattr(err, "code", None)) else None
    return code in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE)
