"""The daily summary per project, from what the hot tier holds: `sluice summary --day D`.

The fold is pure (:mod:`streams.watch.summary`); this module reads one UTC day of events and
metric points back from Elasticsearch (search_after over timestamp and event_id), the GPU-idle
alerts that began that day (``sluice-alerts-<project>``), and which of the day's tasks logged
before it (one aggregation), folds them, adds links into Kibana, and optionally indexes each
report into ``sluice-summary-<project>`` with ``_id`` = ``<project>/<day>`` so a rerun overwrites.
Run it once a day (a cron job, or deploy/k8s/report-cronjob.yaml) for yesterday, with ``--send``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from streams.clients import es_client
from streams.config import Settings
from streams.watch.summary import incidents_by_root_class, summaries

PAGE = 2000
RISON_SAFE = "=&(),:'!"  # rison's own punctuation stays as it is in the URL


def day_bounds(day: str) -> tuple[int, int]:
    start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    return int(start.timestamp() * 1000), int((start + timedelta(days=1)).timestamp() * 1000)


def day_indices(settings: Settings, project: str | None) -> list[str]:
    """Index patterns the hot tier writes a project's (or every project's) events and metric points to,
    the routing table's ``index_prefix`` included."""
    from streams.sinks.elasticsearch.request import IndexNamer
    from streams.sinks.elasticsearch.templates import events_patterns

    namer = IndexNamer.of(settings.routing, settings.hot)
    if project is not None:
        return [f"{namer.events_prefix(project)}-*", f"{namer.metrics_prefix(project)}-*"]
    return [*events_patterns(settings.routing, settings.hot), f"{namer.metrics_base}-*"]


def read_day(settings: Settings, day: str, project: str | None = None) -> Iterator[dict[str, Any]]:
    """Every LogEvent and MetricPoint document of ``day`` (UTC), for one project or all, each once.

    An event held twice (the same ``_id`` in two indices, e.g. an old rehydrated copy) is read once:
    hits come sorted by time and event id, so the copies are neighbours. Times are taken from the
    sort value, epoch milliseconds however the document spells them."""
    es = es_client(settings.elasticsearch)
    start, end = day_bounds(day)
    indices = ",".join(day_indices(settings, project))
    query: dict[str, Any] = {"range": {"timestamp": {"gte": start, "lt": end}}}
    if project is not None:
        query = {"bool": {"filter": [query, {"term": {"project": project}}]}}
    after: list[Any] | None = None
    last: tuple[Any, Any] | None = None
    while True:
        body: dict[str, Any] = {"size": PAGE, "query": query, "sort": [{"timestamp": "asc"}, {"event_id": "asc"}]}
        if after is not None:
            body["search_after"] = after
        hits = es.search(index=indices, allow_no_indices=True, ignore_unavailable=True, **body)["hits"]["hits"]
        for hit in hits:
            key = (hit["sort"][0], hit["sort"][1])
            if key == last:
                continue
            last = key
            source = hit["_source"]
            source["timestamp"] = hit["sort"][0]
            yield source
        if len(hits) < PAGE:
            return
        after = hits[-1]["sort"]


def read_alerts(settings: Settings, day: str, project: str | None = None) -> list[dict[str, Any]]:
    """The GPU-idle alerts whose incident began on ``day``."""
    es = es_client(settings.elasticsearch)
    start, end = day_bounds(day)
    index = f"{settings.watch.alerts_index_prefix}{project or '*'}"
    query = {"bool": {"filter": [{"term": {"rule": "gpu_idle"}},
                                 {"range": {"first_seen": {"gte": start, "lt": end}}}]}}
    hits = es.search(index=index, allow_no_indices=True, ignore_unavailable=True, size=1000, query=query,
                     sort=[{"first_seen": "asc"}])["hits"]["hits"]
    return [hit["_source"] for hit in hits]


def seen_before(settings: Settings, day: str, project: str, tasks: list[str]) -> set[str]:
    """The tasks among ``tasks`` that have a record before ``day``: they did not start that day."""
    if not tasks:
        return set()
    es = es_client(settings.elasticsearch)
    start, _ = day_bounds(day)
    query = {"bool": {"filter": [{"range": {"timestamp": {"lt": start}}}, {"terms": {"task_id": tasks}}]}}
    result = es.search(index=day_indices(settings, project), allow_no_indices=True, ignore_unavailable=True,
                       size=0, query=query, aggs={"tasks": {"terms": {"field": "task_id", "size": len(tasks)}}})
    return {b["key"] for b in result.get("aggregations", {}).get("tasks", {}).get("buckets", [])}


def kibana_links(base: str | None, project: str, day: str, tasks: list[str]) -> dict[str, Any]:
    """The training dashboard for the project and the day, and for each task."""
    if not base:
        return {}
    start, end = day_bounds(day)

    def iso(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def link(query: str) -> str:
        # Kibana's URL state is rison: strings in single quotes, ' and ! escaped with !.
        rison_query = query.replace("!", "!!").replace("'", "!'")
        state = (f"_g=(time:(from:'{iso(start)}',to:'{iso(end)}'))"
                 f"&_a=(query:(language:kuery,query:'{rison_query}'))")
        return f"{base.rstrip('/')}/app/dashboards#/view/sluice-training?{quote(state, safe=RISON_SAFE)}"

    return {"dashboard": link(f'project : "{project}"'),
            "tasks": {t: link(f'project : "{project}" and task_id : "{t}"') for t in tasks}}


def read_incidents(settings: Settings, day: str, project: str | None = None) -> list[dict[str, Any]]:
    """The job incidents whose first failure falls in ``day`` (UTC)."""
    es = es_client(settings.elasticsearch)
    start, end = day_bounds(day)
    query = {"bool": {"filter": [{"term": {"doc": "incident"}}, {"range": {"opened": {"gte": start, "lt": end}}}]}}
    index = f"{settings.watch.incidents_index_prefix}{project or '*'}"
    hits = es.search(index=index, query=query, size=10_000, allow_no_indices=True,
                     ignore_unavailable=True)["hits"]["hits"]
    return [h["_source"] for h in hits]


def summarize_day(settings: Settings, day: str, project: str | None = None, top: int = 10,
                  index: bool = False) -> list[dict[str, Any]]:
    folded = [s for s in summaries(list(read_day(settings, day, project)), read_alerts(settings, day, project))
              if s.day == day]
    incidents = incidents_by_root_class(read_incidents(settings, day, project))
    empty = {"incidents": 0, "tasks_with_incidents": 0, "incidents_by_root_class": {}}
    reports = []
    for summary in folded:
        tasks = sorted(summary.tasks)
        report = summary.report(top, seen_before(settings, day, summary.project, tasks),
                                kibana_links(settings.watch.report.kibana_url, summary.project, day, tasks))
        report.update(incidents.get((report["project"], day), empty))
        reports.append(report)
    if index and reports:
        es = es_client(settings.elasticsearch)
        for report in reports:
            es.index(index=f"sluice-summary-{report['project']}", id=f"{report['project']}/{day}",
                     document=report, refresh="wait_for")
    return reports
