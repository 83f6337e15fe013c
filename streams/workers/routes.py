"""Events for a project the assemble stage cannot write yet become dead letters, not a stopped stage.

A project in the routing table needs its topic (``logs.events.<project>``) and that topic's schema
subject (``<topic>-value``); `sluice project add` makes both. Until it has run, an event routed there
could only fail its whole transaction, turn after turn, for every project. :class:`RouteGuard` checks
each event topic once (and a missing one again every ``retry_s``), and turns the events it cannot
write into dead letters of error type ``unroutable``: the event itself, wire-encoded with the
LogEvent contract's schema id, addressed to the topic it was meant for. Once the project is added,
`sluice dlq redrive --error-type unroutable` delivers them there, with their event ids unchanged.
"""

from __future__ import annotations

import json
import logging
import struct
import time
from collections.abc import Callable
from typing import Any

from streams.assemble.pipeline import Output
from streams.avro_writer import body_writer
from streams.config import Settings
from streams.contracts import schema_text
from streams.registry_cache import is_not_found

log = logging.getLogger(__name__)

ERROR_TYPE = "unroutable"
RETRY_S = 30.0


class RouteGuard:
    def __init__(self, settings: Settings, encoder: Any, registry: Any,
                 topic_exists: Callable[[str], bool] | None = None, clock: Callable[[], float] = time.monotonic,
                 retry_s: float = RETRY_S) -> None:
        self.settings = settings
        self.encoder = encoder
        self.registry = registry
        self.topic_exists = topic_exists
        self.clock = clock
        self.retry_s = retry_s
        self._good: set[str] = set()
        self._bad: dict[str, tuple[float, str]] = {}  # topic -> (when to look again, why it cannot be written)
        self._told: set[str] = set()
        self._event_schema_id: int | None = None

    def encode_all(self, outputs: list[Output]) -> tuple[list[Output], list[tuple[str, bytes | None, bytes]]]:
        """The outputs as they will be sent (events for an unwritable topic replaced by their dead
        letters), and each one encoded as (topic, key, value)."""
        sent: list[Output] = []
        encoded: list[tuple[str, bytes | None, bytes]] = []
        for output in outputs:
            out = output
            if out.kind == "event":
                topic = self.encoder.topic_of(out)
                reason = self.problem(topic)
                if reason is None:
                    try:
                        encoded.append(self.encoder.encode(out))
                        sent.append(out)
                        continue
                    except Exception as exc:
                        if not is_not_found(exc):
                            raise  # the registry is down: the turn fails and is taken again
                        reason = self._mark_bad(topic, f"its schema subject {topic}-value is not registered")
                out = self.letter(out, topic, reason)
            encoded.append(self.encoder.encode(out))
            sent.append(out)
        return sent, encoded

    def problem(self, topic: str) -> str | None:
        """Why ``topic`` cannot be written now, or None."""
        if topic in self._good:
            return None
        bad = self._bad.get(topic)
        if bad is not None and bad[0] > self.clock():
            return bad[1]
        if self.topic_exists is not None and not self.topic_exists(topic):
            return self._mark_bad(topic, f"topic {topic} does not exist")
        self._bad.pop(topic, None)
        self._good.add(topic)  # its subject is checked by the first encode
        return None

    def _mark_bad(self, topic: str, reason: str) -> str:
        self._good.discard(topic)
        self._bad[topic] = (self.clock() + self.retry_s, reason)
        if topic not in self._told:
            self._told.add(topic)
            log.warning("assemble: %s; events for it go to %s as error type %s until the project is added "
                        "(`sluice project add %s`), then re-drive them (`sluice dlq redrive --error-type %s`)",
                        reason, self.settings.topics.dlq, ERROR_TYPE, self._project_of(topic), ERROR_TYPE)
        return reason

    def _project_of(self, topic: str) -> str:
        prefix = self.settings.topics.events_prefix
        return topic[len(prefix):] if topic.startswith(prefix) else topic

    def letter(self, out: Output, topic: str, reason: str) -> Output:
        event = out.value
        raw = event.get("raw") or {}
        where = f"{raw.get('topic')}/{raw.get('partition')}@{raw.get('first_offset')}"
        original, form = self._event_bytes(out)
        project = self._project_of(topic)
        value = {
            "original": original, "key": out.key, "topic": topic, "partition": -1, "offset": -1,
            "stage": "assemble",
            "error": f"project {project}: {reason}: run `sluice project add {project}`, then `sluice dlq redrive "
                     f"--error-type {ERROR_TYPE}` (from {where})",
            # When the record came in (as the other stages' letters), not the log line's own time.
            "error_type": ERROR_TYPE, "timestamp": event.get("ingest_ts") or event["timestamp"], "attempts": 1,
            "headers": {"original": form, "raw": where},
        }
        return Output("dead_letter", self.settings.topics.dlq, out.key, value)

    def _event_bytes(self, out: Output) -> tuple[bytes, str]:
        """The event as its topic would have held it (wire format), or as JSON when no subject of the
        LogEvent contract is registered at all."""
        sid = self._log_event_schema_id()
        if sid is None:
            return json.dumps(out.value, default=str).encode(), "json"
        return struct.pack(">bI", 0, sid) + body_writer("log_event")(out.value), "log_event"

    def _log_event_schema_id(self) -> int | None:
        if self._event_schema_id is None and self.registry is not None:
            from confluent_kafka.schema_registry import Schema

            subject = f"{self.settings.topics.events_topic(self.settings.routing.default_project)}-value"
            try:
                found = self.registry.lookup_schema(subject, Schema(schema_text("log_event"), "AVRO"),
                                                    normalize_schemas=True)
            except Exception as exc:  # noqa: BLE001 - no registered LogEvent subject: the letter holds JSON
                log.warning("assemble: the LogEvent contract is not registered under %s (%s); unroutable events "
                            "are dead-lettered as JSON", subject, exc)
                return None
            self._event_schema_id = int(found.schema_id)
        return self._event_schema_id
