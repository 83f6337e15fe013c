"""Retention where the server has no ILM: delete daily indices older than their project's retention.

The decision is pure (:func:`expired_indices`: index names and today's date in, names to delete
out); :func:`delete_expired` lists the indices and deletes. The worker runs it once at start
and then every ``retention_interval_s`` (hourly by default) through :func:`retention_loop`.

An index dated D holds events of day D (UTC). With ``retention_days`` N it is kept while
D >= today - N, i.e. today plus N full days back, and deleted the day after - and, as ILM counts
age from an index's creation, never before it is N days old itself: history replayed or
rehydrated today into indices dated years ago stays readable for N days instead of vanishing at
the next pass (and a pass can never race the writes that re-created an index). Only names of our
own layout are considered (``<events prefix>-<task>-YYYY.MM.DD``, ``<metrics prefix>-<project>-YYYY.MM.DD``);
projects missing from the routing table get the default retention.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from streams.config import RoutingSettings
from streams.sinks.elasticsearch.request import IndexNamer
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.templates import DEFAULT_RETENTION_DAYS

log = logging.getLogger(__name__)

_DAILY = re.compile(r"^(?P<base>.+)-(?P<day>\d{4}\.\d{2}\.\d{2})$")


@dataclass(frozen=True)
class RetentionTable:
    """Index prefix -> days to keep, from the routing table."""

    days_by_prefix: dict[str, int] = field(default_factory=dict)
    default_days: int = DEFAULT_RETENTION_DAYS
    # Only indices under these prefixes are ours to delete (sluice-logs-*, sluice-metrics-*, custom prefixes).
    owned_prefixes: tuple[str, ...] = ("sluice-logs-", "sluice-metrics-")
    metrics_prefix: str = "sluice-metrics-"

    @classmethod
    def from_routing(cls, routing: RoutingSettings, hot: HotSinkSettings | None = None,
                     default_days: int = DEFAULT_RETENTION_DAYS) -> RetentionTable:
        namer = IndexNamer.of(routing, hot or HotSinkSettings())
        metrics = f"{namer.metrics_base}-"
        table: dict[str, int] = {}
        owned = {f"{namer.events_base}-", metrics}
        for project, route in routing.projects.items():
            events = namer.events_prefix(project)
            table[events] = route.retention_days
            table[namer.metrics_prefix(project)] = route.retention_days
            owned.add(events + "-")
        return cls(table, default_days, tuple(sorted(owned)), metrics)

    def days_for(self, name: str) -> tuple[int, date] | None:
        """(days to keep, the index's day) for one of our daily indices, else None."""
        m = _DAILY.match(name)
        if m is None or not m["base"].startswith(self.owned_prefixes):  # the prefix and at least a project
            return None
        try:
            day = datetime.strptime(m["day"], "%Y.%m.%d").replace(tzinfo=UTC).date()
        except ValueError:
            return None
        base = m["base"]
        if base.startswith(self.metrics_prefix):
            return self.days_by_prefix.get(base, self.default_days), day
        # <events prefix>-<task>: the task segment never contains "-" (request.segment).
        prefix, sep, _task = base.rpartition("-")
        if not sep:
            return None
        return self.days_by_prefix.get(prefix, self.default_days), day


def expired_indices(names: Iterable[str], today: date, table: RetentionTable,
                    created: dict[str, date] | None = None) -> list[str]:
    """Indices past retention by their day and (when ``created`` is given) by their own age."""
    out = []
    for name in names:
        found = table.days_for(name)
        if found is None:
            continue
        days, day = found
        oldest_kept = today - timedelta(days=days)
        made = (created or {}).get(name)
        if day < oldest_kept and (made is None or made < oldest_kept):
            out.append(name)
    return sorted(out)


async def delete_expired(client: Any, table: RetentionTable, today: date | None = None) -> list[str]:
    patterns = ",".join(f"{p}*" for p in table.owned_prefixes)
    resp = await client.indices.get(index=patterns, expand_wildcards="open,closed", allow_no_indices=True,
                                    filter_path="*.settings.index.creation_date")
    body = resp.body or {}
    created = {
        name: datetime.fromtimestamp(int(info["settings"]["index"]["creation_date"]) / 1000, UTC).date()
        for name, info in body.items()
    }
    doomed = expired_indices(list(body), today or datetime.now(UTC).date(), table, created)
    # Explicit names, in chunks: a URL holds only so many, and wildcard deletes may be refused.
    for i in range(0, len(doomed), 50):
        await client.indices.delete(index=",".join(doomed[i:i + 50]), ignore_unavailable=True)
    if doomed:
        log.info("retention: deleted %d indices past their retention: %s", len(doomed), doomed[:5])
    return doomed


async def retention_loop(client: Any, table: RetentionTable, interval_s: float, stop: asyncio.Event) -> None:
    """:func:`delete_expired` every ``interval_s`` until ``stop`` (the worker runs the first pass itself,
    before it writes, so that a pass never races the first writes of the day). Errors are logged, not fatal.
    """
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        if stop.is_set():
            return
        try:
            await delete_expired(client, table)
        except Exception:
            log.exception("retention: pass failed; trying again in %.0f s", interval_s)
