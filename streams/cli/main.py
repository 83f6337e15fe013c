"""`sluice` entry point: the command groups, each a thin layer over the library.

Global options (before the command): ``--config PATH``, ``--log-format text|json``, ``--version``,
``-h``/``--help``. Settings are loaded once, on first use, by :func:`settings_of`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from streams import __version__
from streams.config import Settings, load_settings
from streams.errors import SluiceError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


class SluiceGroup(click.Group):
    """Turns a SluiceError into a one-line message and exit code 1 instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SluiceError as exc:
            click.echo(f"sluice: {exc}", err=True)
            sys.exit(1)


@dataclass
class CliState:
    """What the global options chose, and the settings once loaded."""

    config: Path | None = None
    log_format: str | None = None
    settings: Settings | None = None


def global_options(fn: Any) -> Any:
    """``--config`` and ``--log-format``, shared by ``sluice`` and ``python -m devtools``."""
    fn = click.option("--log-format", type=click.Choice(["text", "json"]), default=None,
                      help="Log lines as text or as one JSON object per line "
                           "(default: observability.log_format).")(fn)
    return click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="YAML configuration file (default: $SLUICE_CONFIG, else ./sluice.yaml). "
                             "See `sluice config show`.")(fn)


@click.group(cls=SluiceGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="sluice", message="%(prog)s %(version)s")
@global_options
@click.pass_context
def cli(ctx: click.Context, config: Path | None, log_format: str | None) -> None:
    """Sluice: Kafka-buffered processing of GPU training-cluster logs.

    Every command reads one configuration: the defaults, then the YAML file (--config), then
    SLUICE_<SECTION>__<FIELD> environment variables. `sluice config show` prints it.
    """
    ctx.obj = CliState(config, log_format)


def state_of(ctx: click.Context) -> CliState:
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    state: CliState = root.obj
    return state


def settings_of(ctx: click.Context) -> Settings:
    """The settings of this invocation, loaded on first use (commands that need none never load them)."""
    state = state_of(ctx)
    if state.settings is None:
        settings = load_settings(config=state.config)
        if state.log_format is not None:
            settings.observability.log_format = state.log_format  # type: ignore[assignment]
        state.settings = settings
    return state.settings


def child_environment(ctx: click.Context) -> dict[str, str]:
    """Environment entries that give a child process (`sluice worker all`) this invocation's choices."""
    state = state_of(ctx)
    env = {}
    if state.config is not None:
        env["SLUICE_CONFIG"] = str(state.config.resolve())
    if state.log_format is not None:
        env["SLUICE_OBSERVABILITY__LOG_FORMAT"] = state.log_format
    return env


def _register_commands() -> None:
    from streams.cli import config, dlq, rehydrate, replay, schemas, ship, summary, top, topics, worker

    for module in (config, topics, schemas, worker, ship, replay, dlq, rehydrate, top, summary):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
