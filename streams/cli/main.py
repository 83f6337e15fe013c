"""`sluice` entry point: the command groups, each a thin layer over the library.

Global options (before the command): ``--config PATH``, ``--log-format text|json``, ``--debug``,
``--version``, ``-h``/``--help``. Settings are loaded once, on first use, by :func:`settings_of`.

Errors end a command with one line on stderr and an exit status from :mod:`streams.cli.exits`;
the traceback only with ``--debug``. A connection failure that escaped a command is reported as the
server it came from (:func:`streams.reach.unreachable_from`), never as "nothing found".
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from streams import __version__
from streams.cli import exits
from streams.config import Settings, config_path, load_settings
from streams.errors import ConfigError, SluiceError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


class SluiceGroup(click.Group):
    """Turns any error into one line and an exit status instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("sluice: interrupted", err=True)
            sys.exit(exits.INTERRUPTED)
        except SluiceError as exc:
            _fail(ctx, exc, exits.status_of(exc))
        except Exception as exc:  # noqa: BLE001 - the one place an unexpected error becomes a line
            if _is_yaml_error(exc):
                _fail(ctx, ConfigError(f"invalid configuration ({config_path()}): the YAML does not parse: {exc}"),
                      exits.CONFIG, cause=exc)
            found = _server_behind(ctx, exc)
            if found is not None:
                _fail(ctx, found, exits.UNREACHABLE, cause=exc)
            _fail(ctx, exc, exits.FAILED, prefix=f"unexpected {type(exc).__name__}: ",
                  hint="" if _debug(ctx) else " (run `sluice --debug ...` for the traceback)")


def _is_yaml_error(exc: BaseException) -> bool:
    import yaml

    return isinstance(exc, yaml.YAMLError)


def _debug(ctx: click.Context) -> bool:
    return bool((ctx.find_root().meta or {}).get("sluice.debug"))


def _fail(ctx: click.Context, exc: BaseException, status: int, prefix: str = "", hint: str = "",
          cause: BaseException | None = None) -> None:
    if _debug(ctx):
        traceback.print_exception(cause or exc, file=sys.stderr)
    text = " ".join(str(exc).split()) or type(exc).__name__
    click.echo(f"sluice: {prefix}{text}{hint}", err=True)
    sys.exit(status)


def _server_behind(ctx: click.Context, exc: BaseException) -> SluiceError | None:
    from streams.reach import unreachable_from

    state = ctx.find_root().obj
    settings = state.settings if isinstance(state, CliState) else None
    if settings is None:
        try:
            settings = load_settings(config=state.config if isinstance(state, CliState) else None)
        except SluiceError:
            return None
    return unreachable_from(exc, settings)


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
@click.option("--debug", is_flag=True, help="Print the traceback of an error (to report a bug).")
@click.pass_context
def cli(ctx: click.Context, config: Path | None, log_format: str | None, debug: bool) -> None:
    """Sluice: Kafka-buffered processing of GPU training-cluster logs.

    Every command reads one configuration: the defaults, then the YAML file (--config), then
    SLUICE_<SECTION>__<FIELD> environment variables. `sluice config show` prints it.

    Exit status: 0 done, 1 failed, 2 usage, 3 configuration, 4 a server unreachable, 5 not found,
    6 partly done (docs/operator-guide.md, "Exit status").
    """
    ctx.obj = CliState(config, log_format)
    ctx.meta["sluice.debug"] = debug


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


def require(ctx: click.Context, *servers: str, timeout_s: float = 10.0) -> Settings:
    """The settings, once each of ``servers`` (streams.reach.SERVERS) has answered."""
    from streams.reach import check

    settings = settings_of(ctx)
    check(settings, servers, timeout_s)
    return settings


def _register_commands() -> None:
    from streams.cli import (
        config,
        dlq,
        incident,
        project,
        rehydrate,
        replay,
        schemas,
        ship,
        summary,
        top,
        topics,
        worker,
    )

    for module in (config, topics, schemas, project, worker, ship, replay, dlq, rehydrate, top, summary, incident):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
