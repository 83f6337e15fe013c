"""Clients for the servers, built from settings in one place (secrets stay inside)."""

from __future__ import annotations

import ssl
from typing import Any

from streams.config import ElasticsearchSettings, KafkaSettings, ObjectStoreSettings, RegistrySettings


def s3_client(settings: ObjectStoreSettings, timeout_s: float = 30.0) -> Any:
    """An S3 client: with the static key of ``settings`` when one is set, else with whatever boto3's
    default credential chain finds (environment, ``profile`` or AWS_PROFILE in the shared files, IRSA
    web identity, container or instance metadata), so that a pod's own role is used as it is."""
    import boto3
    from botocore.config import Config

    static: dict[str, Any] = {}
    if settings.access_key_id is not None and settings.secret_access_key is not None:
        static = {"aws_access_key_id": settings.access_key_id,
                  "aws_secret_access_key": settings.secret_access_key.get_secret_value()}
    session = boto3.session.Session(profile_name=settings.profile)
    return session.client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        verify=settings.ca_bundle,  # None: the system's CAs (https) or nothing to verify (http)
        config=Config(
            connect_timeout=timeout_s,
            read_timeout=timeout_s,
            retries={"max_attempts": 2, "mode": "standard"},
            s3={"addressing_style": "path"},  # local servers have no per-bucket DNS names
        ),
        **static,
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
    """The schema registry client, with the registry's auth and TLS settings (every caller uses this one)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient(settings.client_config())


def kafka_ssl_context(settings: KafkaSettings) -> ssl.SSLContext:
    """The TLS context of ``settings`` for Python Kafka clients (aiokafka under Faust), matching
    ``client_config()``: trusts ``ssl_cafile`` (else the system's CAs), checks the broker's host name
    as librdkafka does, and presents the client certificate when one is set (mutual TLS)."""
    context = ssl.create_default_context(cafile=settings.ssl_cafile)
    if settings.ssl_certfile and settings.ssl_keyfile:
        password = settings.ssl_key_password.get_secret_value() if settings.ssl_key_password else None
        context.load_cert_chain(settings.ssl_certfile, settings.ssl_keyfile, password=password)
    return context


def faust_broker_credentials(settings: KafkaSettings) -> Any:
    """``broker_credentials`` for a faust.App (aiokafka) matching ``settings.client_config()``:
    None for PLAINTEXT, TLS (and a client certificate) for SSL, SASL user and password for PLAIN and
    SCRAM, and tokens from the OIDC token endpoint for OAUTHBEARER."""
    import faust

    if settings.security_protocol == "PLAINTEXT":
        return None
    context = kafka_ssl_context(settings) if settings.uses_tls() else None
    if settings.uses_sasl() and settings.sasl_mechanism == "OAUTHBEARER":
        from streams.oauth import AiokafkaTokenProvider, ClientCredentials

        grant = ClientCredentials(
            token_url=settings.sasl_oauthbearer_token_endpoint_url or "",
            client_id=settings.sasl_oauthbearer_client_id or "",
            client_secret=settings.sasl_oauthbearer_client_secret,
            scope=settings.sasl_oauthbearer_scope)
        return faust.OAuthCredentials(oauth_cb=AiokafkaTokenProvider(grant), ssl_context=context)
    if settings.uses_sasl():
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
