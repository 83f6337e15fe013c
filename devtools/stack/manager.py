"""`python -m devtools stack up|down|status`: the four servers, in dependency order."""

from __future__ import annotations

import time

from devtools.stack.base import Log, Service, ServiceStatus
from devtools.stack.elasticsearch import ElasticsearchService
from devtools.stack.kafka import KafkaService
from devtools.stack.objectstore import ObjectStoreService
from devtools.stack.registry import RegistryService
from streams.config import Settings

SERVICE_TYPES: tuple[type[Service], ...] = (KafkaService, RegistryService, ElasticsearchService, ObjectStoreService)


def services(settings: Settings, log: Log = print) -> list[Service]:
    return [cls(settings, log) for cls in SERVICE_TYPES]


def up(settings: Settings, log: Log = print, only: list[str] | None = None) -> float:
    """Start whatever is not running; returns the wall time in seconds."""
    started = time.monotonic()
    for service in services(settings, log):
        if only and service.name not in only:
            continue
        service.up()
    return time.monotonic() - started


def down(settings: Settings, log: Log = print, only: list[str] | None = None) -> None:
    for service in reversed(services(settings, log)):
        if only and service.name not in only:
            continue
        service.down()


def status(settings: Settings) -> list[ServiceStatus]:
    return [service.status() for service in services(settings, lambda _msg: None)]
