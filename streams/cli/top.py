"""`sluice top`."""

from __future__ import annotations

import json
import time
from dataclasses import asdict

import click

from streams.cli.main import settings_of
from streams.top import compare, default_groups, render, take_snapshot


@click.command()
@click.option("--group", "groups", multiple=True, help="consumer groups to show (default: every stage's)")
@click.option("--metrics", "metrics_urls", multiple=True,
              help="a worker's metrics URL (e.g. http://127.0.0.1:9108/metrics), for throttling and budgets")
@click.option("--interval", default=2.0, show_default=True, help="seconds between refreshes")
@click.option("--once", is_flag=True, help="two snapshots --interval apart, print once, exit")
@click.option("--json", "as_json", is_flag=True, help="with --once: JSON instead of a table")
@click.pass_context
def top(ctx: click.Context, groups: tuple[str, ...], metrics_urls: tuple[str, ...], interval: float,
        once: bool, as_json: bool) -> None:
    """Live lag per topic and partition, rates in and out, throttling, dead-letter growth."""
    settings = settings_of(ctx)
    chosen = list(groups) or default_groups(settings)
    prev = take_snapshot(settings, chosen, list(metrics_urls))
    while True:
        time.sleep(interval)
        cur = take_snapshot(settings, chosen, list(metrics_urls))
        view = compare(prev, cur, settings.topics.dlq)
        if once:
            click.echo(json.dumps(asdict(view), default=str) if as_json else render(view))
            return
        click.clear()
        click.echo(f"sluice top - {time.strftime('%H:%M:%S')} - every {interval:g}s, Ctrl-C to quit\n")
        click.echo(render(view))
        prev = cur


COMMANDS = [top]
