"""`sluice worker <stage>` and the operator commands still to come, each naming its issue."""

from __future__ import annotations

import click

PLANNED = {
    "assemble": "issue 3",
    "hot": "issue 4",
    "cold": "issue 5",
    "watch": "issue 7",
}


@click.command()
@click.argument("stage", type=click.Choice(["assemble", "hot", "cold", "watch", "all"]))
def worker(stage: str) -> None:
    """Run a stage worker (`all` runs every stage in one process, for a demo)."""
    missing = list(PLANNED) if stage == "all" else [stage]
    raise click.ClickException(
        f"stage(s) {', '.join(missing)} not built yet ({', '.join(PLANNED[s] for s in missing)})"
    )


def _planned(name: str, issue: str, help_text: str) -> click.Command:
    @click.command(name=name, help=f"{help_text} (not built yet: {issue})",
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def command() -> None:
        raise click.ClickException(f"`sluice {name}` is not built yet; it is tracked as {issue}")

    return command


COMMANDS = [
    worker,
    _planned("produce", "issue 9", "a realistic burst workload from the corpus into logs.raw"),
    _planned("parse", "issue 3", "the assemble stage offline over files, events as JSON lines"),
    _planned("replay", "issue 6", "re-run history from offsets or timestamps"),
    _planned("dlq", "issue 6", "list, show and re-drive dead letters"),
    _planned("rehydrate", "issue 5", "read cold objects back into Elasticsearch"),
    _planned("top", "issue 6", "live rates, lag and throttling"),
    _planned("bench", "issue 9", "the benchmark report"),
    _planned("ship", "issue 8", "the node-side shipper"),
]
