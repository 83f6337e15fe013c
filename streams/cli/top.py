"""`sluice top`."""

from __future__ import annotations

import json
import time
from dataclasses import asdict

import click

from streams.cli.main import require
from streams.top import Reader, compare, render


@click.command()
@click.option("--group", "groups", multiple=True,
              help="consumer groups to show (default: every stage's, as configured); an unknown one is an error")
@click.option("--metrics", "metrics_urls", multiple=True,
              help="a worker's metrics URL (e.g. http://127.0.0.1:9109/metrics): throttling, budgets, readiness, "
                   "unrouted projects")
@click.option("--interval", default=2.0, show_default=True, help="seconds between refreshes")
@click.option("--once", is_flag=True, help="two snapshots --interval apart, print once, exit")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: one JSON document per refresh, one a line (with --once: one in all)")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="the same as -o json")
@click.pass_context
def top(ctx: click.Context, groups: tuple[str, ...], metrics_urls: tuple[str, ...], interval: float,
        once: bool, output: str, as_json: bool) -> None:
    """Live lag per group, topic and partition, offsets in, dead letters, worker metrics."""
    settings = require(ctx, "kafka")
    as_json = as_json or output == "json"
    reader = Reader(settings, list(groups) or None, list(metrics_urls))
    try:
        prev = reader.snapshot()
        while True:
            time.sleep(interval)
            cur = reader.snapshot()
            view = compare(prev, cur)
            if as_json:
                click.echo(json.dumps(asdict(view), default=str))
            else:
                if not once:
                    click.clear()
                    click.echo(f"sluice top - {time.strftime('%H:%M:%S')} - every {interval:g}s, Ctrl-C to quit\n")
                click.echo(render(view))
            if once:
                return
            prev = cur
    finally:
        reader.close()


COMMANDS = [top]
