"""Clients for the servers, built from settings in one place (secrets stay inside)."""

from __future__ import annotations

from typing import Any

from streams.config import ElasticsearchSettings, KafkaSettings, ObjectStoreSettings, RegistrySettings


def s3_client(settings: ObjectStoreSettings, timeout_s: float = 30.0) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=settings.secret_access_key.get_secret_value(),
        verify=settings.ca_bundle,  # None: the system's CAs (https) or nothing to verify (http)
        config=Config(
            connect_timeout=timeout_s,
            read_timeout=timeout_s,
            retries={"max_attempts": 2, "mode": "standard"},
            s3={"addressing_style": "path"},  # local servers have no per-bucket DNS names
        ),
    )


def _es_kwargs(settings: ElasticsearchSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"request_timeout": settings.request_timeout_s}
    if settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.get_secret_value()
    elif settings.username:
        password = settings.password.get_secret_value() if settings.password else ""
        kwargs["basic_auth"] = (settings.username, password)
    if settings.ca_certs:
        kwargs["ca_certs"] = settings.ca_certs
    return kwargs


def es_client(settings: ElasticsearchSettings) -> Any:
    from elasticsearch import Elasticsearch

    return Elasticsearch(settings.url, **_es_kwargs(settings))


def async_es_client(settings: ElasticsearchSettings) -> Any:
    from elasticsearch import AsyncElasticsearch

    return AsyncElasticsearch(settings.url, **_es_kwargs(settings))


def registry_client(settings: RegistrySettings) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient({"url": settings.url})


def faust_broker_credentials(settings: KafkaSettings) -> Any:
    """``broker_credentials`` for a faust.App (aiokafka) matching ``settings.client_config()``.

    None for PLAINTEXT. The TLS context trusts ``ssl_cafile`` (else the system's CAs) and checks
    the broker's host name, as librdkafka does.
    """
    import ssl

    import faust

    protocol = settings.security_protocol.upper()
    if protocol == "PLAINTEXT":
        return None
    context = ssl.create_default_context(cafile=settings.ssl_cafile) if protocol.endswith("SSL") else None
    if protocol.startswith("SASL_"):
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=settings.sasl_password.get_secret_value() if settings.sasl_password else None,
            ssl_context=context,
            mechanism=settings.sasl_mechanism or "PLAIN",
        )
    return faust.SSLCredentials(context)


def faust_consumers() -> None:
    """Faust's aiokafka consumers as the Faust workers (assemble, watch) need them, process-wide:
    ``read_committed`` (the events topics are written in transactions), each fetched message
    handed to its stream without four tasks (:mod:`streams.faust_delivery`), and stream partitions
    resumed after a rebalance only once they are sought and their queues emptied
    (:mod:`streams.faust_recovery`)."""
    from streams.faust_delivery import faust_eager_delivery
    from streams.faust_recovery import faust_resume_without_gaps

    faust_read_committed()
    faust_eager_delivery()
    faust_resume_without_gaps()


def faust_read_committed() -> None:
    """Make Faust's aiokafka consumers read only committed records (idempotent, process-wide).

    Faust picks ``read_committed`` only for its own exactly-once mode; the events topics are written
    in transactions by the assemble stage, and a Faust agent over them (watch) must not see what a
    rolled-back transaction wrote. aiokafka passes ``_isolation_level`` to its fetcher at start().
    """
    from faust.transport.drivers import aiokafka as driver

    thread = driver.AIOKafkaConsumerThread
    if getattr(thread, "_sluice_read_committed", False):
        return
    create = thread._create_worker_consumer

    def create_read_committed(self: Any, transport: Any) -> Any:
        consumer = create(self, transport)
        consumer._isolation_level = "read_committed"
        return consumer

    thread._create_worker_consumer = create_read_committed  # type: ignore[method-assign]
    thread._sluice_read_committed = True  # type: ignore[attr-defined]
