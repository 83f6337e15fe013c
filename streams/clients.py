"""Clients for the servers, built from settings in one place (secrets stay inside)."""

from __future__ import annotations

from typing import Any

from streams.config import ElasticsearchSettings, ObjectStoreSettings, RegistrySettings


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
