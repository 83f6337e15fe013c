"""`sluice topics create|list`."""

from __future__ import annotations

import click

from streams.cli.main import settings_of
from streams.topics import create_topics, describe_topics, topic_specs


@click.group()
def topics() -> None:
    """Kafka topics: raw, per-project events, metrics, alerts, dead letters."""


@topics.command()
@click.pass_context
def create(ctx: click.Context) -> None:
    """Create the missing topics with their partitions, retention and compaction."""
    settings = settings_of(ctx)
    created = create_topics(settings)
    for spec in topic_specs(settings):
        mark = "created" if spec.name in created else "exists "
        click.echo(f"{mark} {spec.name:<28} partitions={spec.partitions} {spec.config}")


@topics.command(name="list")
@click.pass_context
def list_(ctx: click.Context) -> None:
    """The topics as the broker sees them."""
    settings = settings_of(ctx)
    for name, conf in describe_topics(settings, [s.name for s in topic_specs(settings)]).items():
        click.echo(f"{name:<28} {conf}")


COMMANDS = [topics]
