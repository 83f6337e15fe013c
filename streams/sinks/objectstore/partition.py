"""Where a record goes in the cold tier: a pure function of the record (no I/O, no clock).

``<bucket>/<project>/<task_id>/<yyyy-mm-dd>/<node_role>/<topic>+<partition>+<first offset>.avro``

The date is the event's own time in UTC, so one job's day is one prefix whatever the upload time.
The first offset is zero-padded to 20 digits (a long's width) so keys list in offset order and a
replay of the same records lands on the same key: it overwrites instead of duplicating.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any

from streams.config import Settings

UNKNOWN = "unknown"
DAY_SECONDS = 86_400
DAY_MS = DAY_SECONDS * 1000
OFFSET_WIDTH = 20
# Path separators, control characters (C0 and C1), and the invisible format characters (bidi overrides and
# isolates, zero-width characters, soft hyphen, BOM, line and paragraph separators): a task id of
# "run\u202e1" would list as another name than it is, "a\u200bb" look like "ab".
_UNSAFE = re.compile("[/\\\\\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                     "\ufeff\ufff9-\ufffb]+")


@dataclass(frozen=True, slots=True, order=True)
class GroupKey:
    """The objects of one segment: one per (project, task, date, node role)."""

    project: str
    task_id: str
    day: str  # yyyy-mm-dd, UTC
    node_role: str

    def prefix(self) -> str:
        return f"{self.project}/{self.task_id}/{self.day}/{self.node_role}/"


def path_part(value: object) -> str:
    """One path component: no slashes or control characters, never empty."""
    if value is None:
        return UNKNOWN
    return _path_part(str(value))


# A key component longer than this keeps its start and a hash of the whole: stores on a filesystem refuse
# a name over 255 bytes (s3proxy answers 500, retried for ever), and S3 a key over 1,024.
MAX_PART_BYTES = 200


@lru_cache(maxsize=4096)  # a handful of projects, tasks and roles: sanitise each once
def _path_part(value: str) -> str:
    text = _UNSAFE.sub("_", value).strip()
    if len(text.encode()) > MAX_PART_BYTES:
        digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        text = text.encode()[:MAX_PART_BYTES - 17].decode("utf-8", "ignore") + "~" + digest
    return text if text and text not in (".", "..") else UNKNOWN


def epoch_ms(value: object) -> int:
    """Avro ``timestamp-millis`` as the registry decoder returns it (datetime), as written (int), or as
    NDJSON objects hold it (ISO-8601 text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, int | float):
        return int(value)
    raise TypeError(f"not a timestamp: {value!r}")


@lru_cache(maxsize=1024)
def _day(day_number: int) -> str:
    return datetime.fromtimestamp(day_number * DAY_SECONDS, tz=UTC).strftime("%Y-%m-%d")


def group_of(event: dict[str, Any], fallback_project: str) -> GroupKey:
    source = event.get("source") or {}
    return _group(event.get("project") or fallback_project, event.get("task_id"),
                  epoch_ms(event["timestamp"]) // DAY_MS, source.get("node_role"))


@lru_cache(maxsize=4096)  # per record on the sink's hot path; few distinct groups
def _group(project: str, task_id: str | None, day_number: int, node_role: str | None) -> GroupKey:
    return GroupKey(project=path_part(project), task_id=path_part(task_id), day=_day(day_number),
                    node_role=path_part(node_role))


def object_key(group: GroupKey, topic: str, partition: int, first_offset: int, extension: str = "avro",
               key_prefix: str = "") -> str:
    """``key_prefix`` sets a record kind apart (``metrics/`` for metric points): lifecycle rules and listings
    can take it alone."""
    return f"{key_prefix}{group.prefix()}{topic}+{partition}+{first_offset:0{OFFSET_WIDTH}d}.{extension}"


def day_prefixes(project: str, task_id: str, first: date, last: date, key_prefix: str = "") -> list[str]:
    """The prefixes to list to find a task's objects between two days (inclusive)."""
    out = []
    day = first
    while day <= last:
        out.append(f"{key_prefix}{path_part(project)}/{path_part(task_id)}/{day.isoformat()}/")
        day = date.fromordinal(day.toordinal() + 1)
    return out


def bucket_for(settings: Settings, project: str) -> str:
    """The routing table's bucket for a project, else the default bucket."""
    route = settings.routing.projects.get(project)
    return (route.bucket if route and route.bucket else None) or settings.object_store.default_bucket


def stagger_s(topic: str, partition: int, interval_s: float) -> float:
    """A stable per-partition shift of the rotation boundaries, in [0, interval).

    blake2b rather than ``hash()``: Python salts string hashes per process, and a restarted worker
    must cut at the same boundaries as the one that died.
    """
    digest = hashlib.blake2b(f"{topic}\x00{partition}".encode(), digest_size=8).digest()
    interval_ms = max(1, int(interval_s * 1000))
    return (int.from_bytes(digest, "big") % interval_ms) / 1000.0
