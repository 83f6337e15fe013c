"""Tomorrow's daily indices, named ahead of midnight (UTC): pure logic, the hot sink creates them.

At 00:00 UTC every (project, task type) that is logging writes to a new daily index, all at once.
Each index creation is a cluster-state update, which Elasticsearch's master applies one at a time,
and a write that needs a new index waits until its turn: a quiet project's first write of a new day
queues behind every index another project's burst is creating (tests/perf/hot_sink_bench.py shows
the difference). So in the last ``precreate_ahead_s`` of a day the
hot sink creates tomorrow's index of every family it wrote today, one at a time, in the background:
at midnight the writes find their indices there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from streams.sinks.elasticsearch.request import day_of

DAY_MS = 86_400_000
_DAY = re.compile(r"\d{4}\.\d{2}\.\d{2}")


def family_and_day(index: str) -> tuple[str, str] | None:
    """``sluice-logs-p-sft-2026.11.30`` -> (``sluice-logs-p-sft``, ``2026.11.30``); None for a name without a day."""
    family, sep, day = index.rpartition("-")
    return (family, day) if sep and family and _DAY.fullmatch(day) else None


def precreate_due(now_ms: int, ahead_ms: int) -> bool:
    """Is ``now`` within ``ahead`` of the end of its UTC day?"""
    return ahead_ms > 0 and (now_ms // DAY_MS + 1) * DAY_MS - now_ms <= ahead_ms


def tomorrows_indices(written: Mapping[str, str], now_ms: int) -> dict[str, str]:
    """``{index written: its project}`` -> ``{tomorrow's index of the same family: that project}``, for
    the families written today (an index of another day is left out: a replay of old data does not make
    its families daily)."""
    today, tomorrow = day_of(now_ms), day_of((now_ms // DAY_MS + 1) * DAY_MS)
    out = {}
    for name, project in sorted(written.items()):
        parsed = family_and_day(name)
        if parsed is not None and parsed[1] == today:
            out[f"{parsed[0]}-{tomorrow}"] = project
    return out
