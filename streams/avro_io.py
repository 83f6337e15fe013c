"""Confluent wire-format Avro producers and deserializers bound to our contracts."""

from __future__ import annotations

from typing import Any

from streams.config import Settings
from streams.contracts import schema_text


def avro_serializer(settings: Settings, contract: str) -> Any:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    from streams.clients import registry_client

    client = registry_client(settings.registry)
    # auto.register off: contracts are registered by `sluice schemas register`, never by a producer.
    conf = {"auto.register.schemas": False, "use.latest.version": False, "normalize.schemas": True}
    return AvroSerializer(client, schema_text(contract), conf=conf)


def avro_deserializer(settings: Settings) -> Any:
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    from streams.clients import registry_client

    return AvroDeserializer(registry_client(settings.registry))
