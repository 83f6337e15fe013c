"""`sluice topics create|list`."""

from __future__ import annotations

import click

from streams.cli.main import require
from streams.cli.output import emit, output_option
from streams.topics import create_topics, describe_topics, topic_specs


def _config(conf: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(conf.items()))


@click.group()
def topics() -> None:
    """Kafka topics: raw, per-project events, metrics, alerts, dead letters."""


@topics.command()
@output_option
@click.pass_context
def create(ctx: click.Context, output: str) -> None:
    """Create the missing topics (partitions, retention, compaction) and register the schema subjects of
    the ones created. Existing topics are left as they are."""
    from streams.contracts import register_all

    settings = require(ctx, "kafka", "registry")
    specs = topic_specs(settings)
    created = create_topics(settings, specs)
    subjects = {f"{s.name}-value" for s in specs if s.schema and s.name in created}
    registered = register_all(settings, only=subjects) if subjects else []
    lines = [f"{'created' if s.name in created else 'exists '} {s.name:<28} partitions={s.partitions} "
             f"{_config(s.config)}" for s in specs]
    lines += [f"registered {r.subject} (schema id {r.schema_id}, version {r.version})" for r in registered]
    lines.append(f"{len(created)} topic(s) created, {len(specs) - len(created)} existed")
    emit(output, lines, {"created": created, "existed": [s.name for s in specs if s.name not in created],
                         "registered": [r.subject for r in registered]})


@topics.command(name="list")
@output_option
@click.pass_context
def list_(ctx: click.Context, output: str) -> None:
    """The topics of the configuration as the broker sees them (missing ones say so)."""
    settings = require(ctx, "kafka")
    found = describe_topics(settings, [s.name for s in topic_specs(settings)])
    missing = [n for n, conf in found.items() if conf is None]
    lines = [f"{name:<28} " + (_config(conf) if conf is not None else "missing: run `sluice topics create`")
             for name, conf in found.items()]
    if missing:
        lines.append(f"{len(missing)} of {len(found)} topic(s) missing on {settings.kafka.bootstrap_servers}")
    emit(output, lines, {"topics": found, "missing": missing})


COMMANDS = [topics]
