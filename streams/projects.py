"""Adding a project: everything a project of the routing table needs before events can reach it.

A project listed under ``routing.projects`` needs its events topic (``logs.events.<project>``), that
topic's schema subject (``<topic>-value``, the LogEvent contract) and, for the hot tier, index
templates that cover its ``index_prefix``. :func:`add_project` makes whatever is missing and says
what it found; running it again changes nothing. :func:`project_status` reports the same without
changing anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from streams.config import Settings, config_path
from streams.errors import ConfigError


@dataclass(frozen=True)
class ProjectStatus:
    project: str
    topic: str
    topic_exists: bool
    subject: str
    subject_registered: bool
    index_prefix: str
    templates_cover: bool  # the installed events template matches the project's indices


def require_routed(settings: Settings, project: str) -> None:
    if project not in settings.projects():
        where = config_path() or "the defaults (no configuration file)"
        raise ConfigError(
            f"project {project!r} is not in the routing table of {where} (routing.projects: "
            f"{', '.join(settings.projects())}); add it there (routing: {{projects: {{{project}: {{}}}}}}), run this "
            "again, then restart the workers, which read the routing table at start")


def project_status(settings: Settings, project: str) -> ProjectStatus:
    from confluent_kafka.admin import AdminClient

    from streams.clients import es_client, registry_client
    from streams.registry import subject_registered
    from streams.sinks.elasticsearch.request import IndexNamer
    from streams.sinks.elasticsearch.templates import LOGS_TEMPLATE

    topic = settings.topics.events_topic(project)
    meta = AdminClient(settings.kafka.client_config()).list_topics(topic, timeout=10).topics.get(topic)
    subject = f"{topic}-value"
    registered = subject_registered(registry_client(settings.registry), subject)
    prefix = IndexNamer.of(settings.routing, settings.hot).events_prefix(project)
    found = es_client(settings.elasticsearch).options(ignore_status=404).indices.get_index_template(name=LOGS_TEMPLATE)
    patterns = [p for t in found.get("index_templates", []) for p in t["index_template"]["index_patterns"]]
    covered = any(_matches(f"{prefix}-general-2000.01.01", p) for p in patterns)
    return ProjectStatus(project, topic, meta is not None and meta.error is None, subject, registered, prefix,
                         covered)


def _matches(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


@dataclass(frozen=True)
class ProjectAdded:
    before: ProjectStatus
    after: ProjectStatus
    schema_id: int


def add_project(settings: Settings, project: str) -> ProjectAdded:
    """Create the project's topic, register its subject, install the hot tier's templates (idempotent)."""
    from streams.contracts import register_all
    from streams.sinks.objectstore.rehydrate import install_templates
    from streams.topics import create_topics, topic_specs

    require_routed(settings, project)
    before = project_status(settings, project)
    spec = next(s for s in topic_specs(settings) if s.name == before.topic)
    create_topics(settings, [spec])
    (registration,) = register_all(settings, only={before.subject})
    install_templates(settings)
    return ProjectAdded(before, project_status(settings, project), registration.schema_id)
