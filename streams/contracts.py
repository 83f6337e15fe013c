"""Avro contracts: load ``schemas/*.avsc``, register them as ``<topic>-value``, check compatibility."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import fastavro

from streams.config import REPO_ROOT, Settings
from streams.errors import SchemaError
from streams.topics import topic_specs


def _schema_dir() -> Path:
    """$SLUICE_SCHEMA_DIR, else the checkout's schemas/, else the copy the wheel installs under
    <prefix>/share/sluice/schemas (pyproject.toml's data-files)."""
    if os.environ.get("SLUICE_SCHEMA_DIR"):
        return Path(os.environ["SLUICE_SCHEMA_DIR"])
    checkout = REPO_ROOT / "schemas"
    installed = Path(sys.prefix) / "share" / "sluice" / "schemas"
    return checkout if checkout.is_dir() or not installed.is_dir() else installed


SCHEMA_DIR = _schema_dir()


@cache
def schema_text(name: str) -> str:
    path = SCHEMA_DIR / f"{name}.avsc"
    try:
        # Stripped: the Confluent serializer strips the text it looks up, and Apicurio compares
        # schema text exactly unless asked to normalise.
        text = path.read_text().strip()
        fastavro.parse_schema(json.loads(text))
    except FileNotFoundError:
        known = sorted(p.stem for p in SCHEMA_DIR.glob("*.avsc"))
        raise SchemaError(f"no contract {path}; the known ones are {known}") from None
    except (ValueError, fastavro.schema.SchemaParseException) as exc:
        raise SchemaError(f"{path} is not a valid Avro schema: {exc}") from exc
    return text


@cache
def parsed_schema(name: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_text(name)))


@dataclass(frozen=True)
class Registration:
    subject: str
    schema_id: int
    version: int


def subjects(settings: Settings) -> dict[str, str]:
    """``<topic>-value`` -> contract name, for every Avro topic."""
    return {f"{s.name}-value": s.schema for s in topic_specs(settings) if s.schema}


def register_all(settings: Settings, client: Any | None = None, only: set[str] | None = None) -> list[Registration]:
    """Register every contract (or the subjects in ``only``) under its topic's subject; idempotent."""
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    from streams.clients import registry_client

    client = client or registry_client(settings.registry)
    done = []
    for subject, name in subjects(settings).items():
        if only is not None and subject not in only:
            continue
        schema = Schema(schema_text(name), "AVRO")
        try:
            # Set the level first so that the very first version is already guarded.
            client.set_compatibility(subject_name=subject, level=settings.registry.compatibility)
            schema_id = client.register_schema(subject, schema)
            version = client.lookup_schema(subject, schema).version
        except SchemaRegistryError as exc:
            raise SchemaError(
                f"registering schemas/{name}.avsc as {subject} at {settings.registry.url} failed "
                f"(HTTP {exc.http_status_code}): {exc.error_message}. If the change is incompatible, "
                "add defaults to new fields or use a new topic"
            ) from exc
        done.append(Registration(subject, schema_id, int(version or 0)))
    return done


@dataclass(frozen=True)
class Compatibility:
    subject: str
    compatible: bool
    detail: str


def check_all(settings: Settings, client: Any | None = None) -> list[Compatibility]:
    """Would the local contracts be accepted? Each is tested against every registered version.

    The registry's compatibility endpoint tests one version at a time (as Confluent's does), so
    backward-transitive means asking it about each version in turn.
    """
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    from streams.clients import registry_client
    from streams.registry import subject_registered

    client = client or registry_client(settings.registry)
    results = []
    for subject, name in subjects(settings).items():
        if not subject_registered(client, subject):
            results.append(Compatibility(subject, True, "not registered yet"))
            continue
        schema = Schema(schema_text(name), "AVRO")
        try:
            failing = [v for v in client.get_versions(subject)
                       if not client.test_compatibility(subject, schema, version=v)]
        except SchemaRegistryError as exc:
            results.append(Compatibility(subject, False, f"HTTP {exc.http_status_code}: {exc.error_message}"))
            continue
        detail = f"INCOMPATIBLE with version(s) {failing}" if failing else "compatible with every version"
        results.append(Compatibility(subject, not failing, detail))
    return results


def load_schema_file(path: Path) -> str:
    text = path.read_text()
    fastavro.parse_schema(json.loads(text))
    return text
