"""Where alerts go: Avro ``Alert`` records on logs.alerts, and the per-project alerts index."""

from __future__ import annotations

import asyncio
import io
import logging
import struct
from typing import Any

import fastavro

from streams.contracts import parsed_schema, schema_text

log = logging.getLogger(__name__)

ALERT_MAPPINGS = {
    "dynamic": True,
    "properties": {
        "alert_id": {"type": "keyword"}, "rule": {"type": "keyword"}, "severity": {"type": "keyword"},
        "project": {"type": "keyword"}, "task_id": {"type": "keyword"}, "summary": {"type": "text"},
        "count": {"type": "integer"}, "event_ids": {"type": "keyword"},
        "timestamp": {"type": "date", "format": "epoch_millis"},
        "first_seen": {"type": "date", "format": "epoch_millis"},
        "last_seen": {"type": "date", "format": "epoch_millis"},
        "status": {"type": "keyword"},
        "resolved_at": {"type": "date", "format": "epoch_millis"},
        "details": {"type": "object", "dynamic": True},
    },
}


class AlertEncoder:
    """alert dict -> Confluent wire-format Avro for ``<alerts topic>``; the schema id looked up once."""

    def __init__(self, topic: str, registry: Any) -> None:
        self.topic = topic
        self._registry = registry
        self._id: int | None = None

    def schema_id(self) -> int:
        if self._id is None:
            from confluent_kafka.schema_registry import Schema

            # Registered by `sluice schemas register`; the lookup fails loudly if the contract drifted.
            found = self._registry.lookup_schema(f"{self.topic}-value", Schema(schema_text("alert"), "AVRO"),
                                                 normalize_schemas=True)
            self._id = int(found.schema_id)
        return self._id

    def encode(self, alert: dict[str, Any]) -> tuple[bytes, bytes]:
        buf = io.BytesIO()
        buf.write(struct.pack(">bI", 0, self.schema_id()))
        fastavro.schemaless_writer(buf, parsed_schema("alert"), alert)
        return alert["alert_id"].encode(), buf.getvalue()


class AlertIndexer:
    """Index alerts by ``_id = alert_id`` into ``<prefix><project>`` (re-raised alerts overwrite)."""

    def __init__(self, client: Any, prefix: str, attempts: int = 4, backoff_s: float = 0.5) -> None:
        self.client = client
        self.prefix = prefix
        self.attempts = attempts
        self.backoff_s = backoff_s
        self._ready: set[str] = set()

    def index_of(self, project: str) -> str:
        return f"{self.prefix}{project}"

    async def _ensure(self, index: str) -> None:
        if index in self._ready:
            return
        if not await self.client.indices.exists(index=index):
            from elasticsearch import BadRequestError

            try:
                await self.client.indices.create(index=index, mappings=ALERT_MAPPINGS)
            except BadRequestError as exc:
                if "resource_already_exists" not in str(exc):
                    raise
        self._ready.add(index)

    async def index(self, alert: dict[str, Any]) -> bool:
        """True once stored. False after the retries: the alert is still on logs.alerts."""
        index = self.index_of(alert["project"])
        for attempt in range(self.attempts):
            try:
                await self._ensure(index)
                await self.client.index(index=index, id=alert["alert_id"], document=alert)
            except Exception as exc:  # noqa: BLE001 - any server or transport failure is retried the same way
                log.warning("alerts index %s: %s (attempt %d)", index, exc, attempt + 1)
                await asyncio.sleep(self.backoff_s * (2 ** attempt))
            else:
                return True
        log.error("alert %s not indexed into %s after %d attempts", alert["alert_id"], index, self.attempts)
        return False
