"""``-o text|json``: what a command reports, in words for a person or as one JSON document for a script."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

output_option = click.option(
    "-o", "--output", "output", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text: words for a person; json: one JSON document for a script",
)


def emit(output: str, lines: Iterable[str], document: Any) -> None:
    """Print ``lines`` (text) or ``document`` (json) on stdout."""
    if output == "json":
        click.echo(json.dumps(document, ensure_ascii=False, default=str))
    else:
        for line in lines:
            click.echo(line)
