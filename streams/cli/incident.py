"""`sluice incident TASK`: a job's first failure, read back from the incidents and events indices."""

from __future__ import annotations

from typing import Any

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.config import Settings
from streams.errors import NotFound
from streams.watch.incident_view import render, summary_line


def incident_index(settings: Settings, project: str | None) -> str:
    return f"{settings.watch.incidents_index_prefix}{project or '*'}"


def events_indices(settings: Settings, project: str | None) -> str:
    """The hot tier's event indices, of one project or of all (custom prefixes included)."""
    from streams.sinks.elasticsearch.request import IndexNamer

    namer = IndexNamer.of(settings.routing, settings.hot)
    if project is not None:
        return f"{namer.events_prefix(project)}-*"
    custom = [f"{namer.events_prefix(p)}-*" for p, r in settings.routing.projects.items() if r.index_prefix]
    return ",".join([f"{namer.events_base}-*", *custom])


def find_incidents(es: Any, settings: Settings, task: str, project: str | None, limit: int) -> list[dict[str, Any]]:
    """A task's incidents, newest first (by task id, or by task key ``<project>/<task>``)."""
    query = {"bool": {"filter": [{"term": {"doc": "incident"}}],
                      "should": [{"term": {"task_id": task}}, {"term": {"task_key": task}}],
                      "minimum_should_match": 1}}
    hits = es.search(index=incident_index(settings, project), query=query, size=limit,
                     sort=[{"opened": "desc"}], allow_no_indices=True, ignore_unavailable=True)["hits"]["hits"]
    return [h["_source"] for h in hits]


def root_event(es: Any, settings: Settings, record: dict[str, Any]) -> dict[str, Any] | None:
    """The whole root event from the events index (``_id`` = ``event_id``), or None."""
    event_id = record.get("root_event_id")
    if not event_id:
        return None
    hits = es.search(index=events_indices(settings, record.get("project")), query={"ids": {"values": [event_id]}},
                     size=1, allow_no_indices=True, ignore_unavailable=True)["hits"]["hits"]
    return hits[0]["_source"] if hits else None


@click.command()
@click.argument("task")
@click.option("--project", help="the task's project (default: look in every project's incidents)")
@click.option("--id", "incident_id", help="one incident of the task (default: its latest)")
@click.option("--all", "list_all", is_flag=True, help="list every incident of the task, newest first")
@output_option
@click.pass_context
def incident(ctx: click.Context, task: str, project: str | None, incident_id: str | None, list_all: bool,
             output: str) -> None:
    """A job's first failure across its ranks: the root cause event whole, the first error of every rank,
    the collateral. TASK is the task id (or <project>/<task id>). Exit 5 when the task has no incident."""
    from streams.clients import es_client

    settings = require(ctx, "elasticsearch")
    es = es_client(settings.elasticsearch)
    found = find_incidents(es, settings, task, project, 100 if list_all or incident_id else 1)
    if incident_id is not None:
        found = [r for r in found if r["incident_id"] == incident_id]
    if not found:
        raise NotFound(f"no incident of task {task!r} in {incident_index(settings, project)} at "
                       f"{settings.elasticsearch.url}" + (f" with id {incident_id}" if incident_id else "")
                       + ": the watch stage publishes one once the task has failed and gone quiet "
                         "(watch.incident_quiet_s)")
    if list_all:
        emit(output, [summary_line(r) for r in found], found)
        return
    record = found[0]
    event = root_event(es, settings, record)
    emit(output, [render(record, event)], {"incident": record, "root_event": event})


COMMANDS = [incident]
