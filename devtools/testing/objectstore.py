"""Test helpers shipped with the cold tier: real corpus events and an in-memory object store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streams.assemble.pipeline import parse_files
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.store import LifecycleStatus, cut_key

# A fixed default time for lines that carry none (parse_files would use the file's mtime).
DEFAULT_TS_MS = 1_764_400_000_000  # 2025-11-29T07:06:40Z
NODE_ROLES = ("trainer", "launcher", None)


def corpus_events(corpus: Path, project: str, task_id: str, limit: int | None = None,
                  ingest_start_ms: int = DEFAULT_TS_MS, ingest_step_ms: int = 1000,
                  pattern: str = "training/*.log") -> list[dict[str, Any]]:
    """LogEvents parsed from the real corpus, as the assemble stage makes them.

    Adapted for a multi-file test: event ids are prefixed with the file name (parse_files numbers
    lines per file), each file gets a node role in turn, and ingest times advance ``ingest_step_ms``
    per event (what Kafka's timestamps would do for a steady stream).
    """
    out: list[dict[str, Any]] = []
    for n, path in enumerate(sorted(corpus.glob(pattern))):
        role = NODE_ROLES[n % len(NODE_ROLES)]
        for event in parse_files([path], labels={"project": project, "task_id": task_id},
                                 default_ts_ms=DEFAULT_TS_MS, include_metrics=False):
            event["event_id"] = f"{path.stem}/{event['event_id']}"
            event["project"] = project
            event["source"]["node_role"] = role
            event["ingest_ts"] = ingest_start_ms + len(out) * ingest_step_ms
            out.append(event)
            if limit is not None and len(out) >= limit:
                return out
    return out


class MemoryObjectStore:
    """The ObjectStore interface over a dict; ``fail`` makes every call raise (a store outage)."""

    def __init__(self, conf: ColdSinkSettings | None = None) -> None:
        self.conf = conf or ColdSinkSettings()
        self.endpoint = "memory://"
        self.objects: dict[tuple[str, str], bytes] = {}
        self.meta: dict[tuple[str, str], dict[str, str]] = {}
        self.puts = 0
        self.fail = False

    def _check(self) -> None:
        if self.fail:
            raise ConnectionError("object store unreachable (test outage)")

    def ensure_bucket(self, bucket: str) -> None:
        self._check()

    def apply_lifecycle(self, bucket: str) -> LifecycleStatus:
        self._check()
        return LifecycleStatus(bucket, False, "in-memory store: no lifecycle API")

    def put(self, bucket: str, key: str, body: bytes, content_type: str = "",
            metadata: dict[str, str] | None = None) -> None:
        self._check()
        self.puts += 1
        self.objects[(bucket, key)] = body
        self.meta[(bucket, key)] = dict(metadata or {})

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        self._check()
        return dict(self.meta[(bucket, key)])

    def get(self, bucket: str, key: str) -> bytes:
        self._check()
        return self.objects[(bucket, key)]

    def list_keys(self, bucket: str, prefix: str, start_after: str | None = None) -> Iterator[str]:
        self._check()
        keys = sorted(k for b, k in self.objects if b == bucket and k.startswith(prefix))
        return iter([k for k in keys if start_after is None or k > start_after])

    def load_cuts(self, bucket: str, topic: str, partition: int, from_offset: int) -> dict[int, int]:
        self._check()
        prefix = f"{self.conf.cuts_prefix}{topic}+{partition}+"
        cuts = {}
        for key in self.list_keys(bucket, prefix):
            first, _, last = key[len(prefix):].partition("+")
            if int(first) >= from_offset:
                cuts[int(first)] = int(last)
        return cuts

    def record_cut(self, bucket: str, topic: str, partition: int, first: int, last: int) -> None:
        self.put(bucket, cut_key(self.conf.cuts_prefix, topic, partition, first, last), b"")

    def data_objects(self) -> dict[str, bytes]:
        return {k: v for (_b, k), v in self.objects.items() if not k.startswith(self.conf.cuts_prefix)}
