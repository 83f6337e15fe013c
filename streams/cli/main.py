"""`sluice` entry point: command groups of DESIGN.md, each a thin layer over the library.

Errors end a command with one line on stderr and an exit status from :mod:`streams.cli.exits`;
the traceback only with ``--debug``. A connection failure that escaped a command is reported as the
server it came from (:func:`streams.reach.unreachable_from`), never as "nothing found".
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from streams.cli import exits
from streams.config import Settings, config_path, load_settings
from streams.errors import ConfigError, SluiceError


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

    settings = ctx.find_root().obj
    if settings is None:
        try:
            settings = load_settings()
        except SluiceError:
            return None
    return unreachable_from(exc, settings)


@click.group(cls=SluiceGroup)
@click.option("--debug", is_flag=True, help="print the traceback of an error (to report a bug)")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Sluice: Kafka-buffered processing of GPU training-cluster logs.

    Exit status: 0 done, 1 failed, 2 usage, 3 configuration, 4 a server unreachable, 5 not found,
    6 partly done (docs/operator-guide.md, "Exit status").
    """
    ctx.obj = None
    ctx.meta["sluice.debug"] = debug


def settings_of(ctx: click.Context) -> Settings:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = load_settings()
    settings: Settings = root.obj
    return settings


def require(ctx: click.Context, *servers: str, timeout_s: float = 10.0) -> Settings:
    """The settings, once each of ``servers`` (streams.reach.SERVERS) has answered."""
    from streams.reach import check

    settings = settings_of(ctx)
    check(settings, servers, timeout_s)
    return settings


def _register_commands() -> None:
    from streams.cli import dlq, project, rehydrate, replay, schemas, ship, summary, top, topics, worker

    for module in (topics, schemas, project, worker, ship, replay, dlq, rehydrate, top, summary):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
