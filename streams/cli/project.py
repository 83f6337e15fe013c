"""`sluice project add|list`."""

from __future__ import annotations

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.projects import ProjectStatus, add_project, project_status, require_routed


@click.group()
def project() -> None:
    """Projects of the routing table: what each needs (topic, schema subject, index templates)."""


@project.command()
@click.argument("name")
@output_option
@click.pass_context
def add(ctx: click.Context, name: str, output: str) -> None:
    """Make what project NAME of the routing table needs: its events topic, the topic's schema subject and
    the index templates covering its index prefix. Idempotent. Then restart (roll) the workers."""
    settings = require(ctx, "kafka", "registry", "elasticsearch")
    require_routed(settings, name)
    done = add_project(settings, name)
    b, a = done.before, done.after
    lines = [
        f"project {name} is ready: topic {a.topic} {'existed' if b.topic_exists else 'created'}, subject {a.subject} "
        f"{'was registered' if b.subject_registered else 'registered'} (schema id {done.schema_id}), index "
        f"templates cover {a.index_prefix}-*",
        "next: restart the workers (they read the routing table at start); events dead-lettered as unroutable "
        "meanwhile come back with `sluice dlq redrive --error-type unroutable`",
    ]
    emit(output, lines, {"project": name, "before": _json(b), "after": _json(a), "schema_id": done.schema_id})


@project.command(name="list")
@output_option
@click.pass_context
def list_(ctx: click.Context, output: str) -> None:
    """Every project of the routing table and what it still lacks."""
    settings = require(ctx, "kafka", "registry", "elasticsearch")
    statuses = [project_status(settings, p) for p in settings.projects()]
    lines = []
    for st in statuses:
        missing = _missing(st)
        lines.append(f"{st.project:<24} {st.topic:<36} " + (f"missing: {', '.join(missing)} (`sluice project add "
                                                              f"{st.project}`)" if missing else "ready"))
    emit(output, lines, [_json(st) for st in statuses])


def _missing(st: ProjectStatus) -> list[str]:
    return [what for what, ok in (("topic", st.topic_exists), ("schema subject", st.subject_registered),
                                  ("index template", st.templates_cover)) if not ok]


def _json(st: ProjectStatus) -> dict[str, object]:
    return {"project": st.project, "topic": st.topic, "topic_exists": st.topic_exists, "subject": st.subject,
            "subject_registered": st.subject_registered, "index_prefix": st.index_prefix,
            "templates_cover": st.templates_cover}


COMMANDS = [project]
