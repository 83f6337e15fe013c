"""Where alerts and incidents go: Avro records on logs.alerts and logs.incidents, and the
per-project alerts and incidents indices."""

from __future__ import annotations

import asyncio
import io
import logging
import struct
from typing import Any

import fastavro

from streams.contracts import parsed_schema, schema_text
from streams.registry import checked

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


_DATE = {"type": "date", "format": "epoch_millis"}
# An incident document, and one document per rank of its timeline (``doc: rank``) for the per-task
# timeline chart: Kibana cannot pair the fields of an array of objects, separate documents it can.
INCIDENT_MAPPINGS = {
    "dynamic": False,
    "properties": {
        "doc": {"type": "keyword"}, "incident_id": {"type": "keyword"}, "alert_id": {"type": "keyword"},
        "project": {"type": "keyword"}, "task_id": {"type": "keyword"}, "task_key": {"type": "keyword"},
        "severity": {"type": "keyword"}, "summary": {"type": "text"},
        "opened": _DATE, "last_error": _DATE, "decided": _DATE, "decided_wall": _DATE, "last_error_seen": _DATE,
        "root_time": _DATE,
        "first_collateral_time": _DATE, "blocked_since": _DATE,
        "root_known": {"type": "boolean"}, "root_class": {"type": "keyword"}, "root_role": {"type": "keyword"},
        "root_error_class": {"type": "keyword"}, "root_error_type": {"type": "keyword"},
        "root_signal": {"type": "keyword"}, "root_message": {"type": "text"}, "root_event_id": {"type": "keyword"},
        "first_rank": {"type": "integer"}, "first_node": {"type": "keyword"}, "first_process": {"type": "keyword"},
        "time_to_first_collateral_ms": {"type": "long"}, "ranks": {"type": "integer"},
        "collateral_ranks": {"type": "integer"}, "collateral_kinds": {"type": "object", "dynamic": True},
        "timeline": {"type": "object", "enabled": False}, "evidence": {"type": "keyword"},
        "failures": {"type": "integer"}, "repeats": {"type": "keyword"}, "clock_corrected": {"type": "boolean"},
        # rank documents
        "rank_label": {"type": "keyword"}, "host": {"type": "keyword"}, "rank": {"type": "integer"},
        "time": _DATE, "kind": {"type": "keyword"}, "role": {"type": "keyword"}, "event_id": {"type": "keyword"},
        "headline": {"type": "text"},
    },
}


def index_templates(alerts_prefix: str, incidents_prefix: str) -> dict[str, dict[str, Any]]:
    """Index templates for the watch stage's indices (deploy/elasticsearch/index_template/): the same
    mappings the stage gives an index it creates, for clusters where indices are made by template."""
    def body(prefix: str, mappings: dict[str, Any], what: str) -> dict[str, Any]:
        return {"index_patterns": [f"{prefix}*"], "priority": 200,
                "template": {"settings": {"index": {"number_of_shards": 1}}, "mappings": mappings},
                "_meta": {"description": f"{what} of the Sluice watch stage, one index per project"}}

    return {"sluice-alerts": body(alerts_prefix, ALERT_MAPPINGS, "Alerts"),
            "sluice-incidents": body(incidents_prefix, INCIDENT_MAPPINGS, "Job incidents (first failure across ranks)")}


def incident_documents(record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(_id, document) pairs of one incident: itself, and its timeline's ranks (ids stable across updates)."""
    docs = [(record["incident_id"], {**record, "doc": "incident"})]
    for entry in record["timeline"]:
        docs.append((f"{record['incident_id']}|{entry['rank_label']}", {
            **entry, "doc": "rank", "incident_id": record["incident_id"], "project": record["project"],
            "task_id": record["task_id"], "task_key": record["task_key"], "root_class": record["root_class"],
            "opened": record["opened"]}))
    return docs


class AlertEncoder:
    """alert dict -> Confluent wire-format Avro for ``<alerts topic>``; the schema id looked up once.
    With ``contract="incident"`` and ``key="incident_id"`` it encodes incidents the same way."""

    def __init__(self, topic: str, registry: Any, contract: str = "alert", key: str = "alert_id",
                 url: str = "the schema registry") -> None:
        self.topic = topic
        self._registry = registry
        self._id: int | None = None
        self.contract = contract
        self.key = key
        self.url = url

    @property
    def ready(self) -> bool:
        """Is the schema id known (encoding needs no registry call)?"""
        return self._id is not None

    def schema_id(self) -> int:
        """The subject's schema id, looked up once; a registry that does not answer raises
        :class:`~streams.errors.DependencyUnavailable` (streams/registry.py)."""
        if self._id is None:
            from confluent_kafka.schema_registry import Schema

            subject = f"{self.topic}-value"
            # Registered by `sluice schemas register`; the lookup fails loudly if the contract drifted.
            found = checked(lambda: self._registry.lookup_schema(subject, Schema(schema_text(self.contract), "AVRO"),
                                                                 normalize_schemas=True),
                            f"the lookup of {subject}", self.url)
            self._id = int(found.schema_id)
        return self._id

    def encode(self, alert: dict[str, Any]) -> tuple[bytes, bytes]:
        buf = io.BytesIO()
        buf.write(struct.pack(">bI", 0, self.schema_id()))
        fastavro.schemaless_writer(buf, parsed_schema(self.contract), alert)
        return str(alert[self.key]).encode(), buf.getvalue()


class AlertIndexer:
    """Index alerts by ``_id = alert_id`` into ``<prefix><project>`` (re-raised alerts overwrite).
    With ``mappings=INCIDENT_MAPPINGS`` it indexes incidents (:meth:`index_incident`)."""

    def __init__(self, client: Any, prefix: str, attempts: int = 4, backoff_s: float = 0.5,
                 mappings: dict[str, Any] | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.mappings = mappings or ALERT_MAPPINGS
        self._ready: set[str] = set()

    def index_of(self, project: str) -> str:
        return f"{self.prefix}{project}"

    async def _ensure(self, index: str) -> None:
        if index in self._ready:
            return
        if not await self.client.indices.exists(index=index):
            from elasticsearch import BadRequestError

            try:
                await self.client.indices.create(index=index, mappings=self.mappings)
            except BadRequestError as exc:
                if "resource_already_exists" not in str(exc):
                    raise
        self._ready.add(index)

    async def index(self, alert: dict[str, Any]) -> bool:
        """True once stored. False after the retries: the alert is still on logs.alerts."""
        return await self._index_all(alert["project"], [(alert["alert_id"], alert)])

    async def index_incident(self, record: dict[str, Any]) -> bool:
        """The incident and its rank documents. False after the retries: it is still on logs.incidents."""
        return await self._index_all(record["project"], incident_documents(record))

    async def _write(self, index: str, docs: list[tuple[str, dict[str, Any]]]) -> None:
        if len(docs) == 1:
            await self.client.index(index=index, id=docs[0][0], document=docs[0][1])
            return
        body: list[dict[str, Any]] = []
        for doc_id, doc in docs:
            body += [{"index": {"_index": index, "_id": doc_id}}, doc]
        response = await self.client.bulk(operations=body)
        if response.get("errors"):
            failed = next(i["index"] for i in response["items"] if i["index"].get("error"))
            raise RuntimeError(f"bulk item {failed['_id']}: {failed['error']}")

    async def _index_all(self, project: str, docs: list[tuple[str, dict[str, Any]]]) -> bool:
        index = self.index_of(project)
        for attempt in range(self.attempts):
            try:
                await self._ensure(index)
                await self._write(index, docs)
            except Exception as exc:  # noqa: BLE001 - any server or transport failure is retried the same way
                log.warning("index %s: %s (attempt %d)", index, exc, attempt + 1)
                await asyncio.sleep(self.backoff_s * (2 ** attempt))
            else:
                return True
        log.error("%s not indexed into %s after %d attempts", docs[0][0], index, self.attempts)
        return False
