"""`sluice config show|validate|reference`: the effective configuration, a file checked, every setting."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import click

from streams.cli import exits
from streams.cli.main import settings_of, state_of


@click.group(name="config")
def config_group() -> None:
    """The configuration: what is in effect, whether a file is valid, and every setting there is."""


@config_group.command()
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--changed", is_flag=True, help="only the settings that do not have their default")
@click.pass_context
def show(ctx: click.Context, output: str, changed: bool) -> None:
    """Every effective setting, its value and where it came from (default, file, or environment
    variable). Secrets are masked."""
    from pydantic_settings import EnvSettingsSource

    from streams.config import ENV_PREFIX, Settings, config_file, config_path, read_config_file
    from streams.config_show import Row, effective_rows, render_table

    settings = settings_of(ctx)
    state = state_of(ctx)
    with config_file(state.config):
        path = config_path()
    file_data = read_config_file(path) if path is not None else {}
    env_data = EnvSettingsSource(Settings, env_prefix=ENV_PREFIX, env_nested_delimiter="__")()
    rows = effective_rows(settings, file_data, env_data, os.environ, ENV_PREFIX, str(path) if path else None)
    if state.log_format is not None:
        rows = [Row(r.key, r.value, "option --log-format") if r.key == "observability.log_format" else r
                for r in rows]
    if changed:
        rows = [r for r in rows if r.source != "default"]
    if output == "json":
        click.echo(json.dumps({"file": str(path) if path else None, "settings": [asdict(r) for r in rows]},
                              indent=1, default=str))
    else:
        click.echo(f"# configuration file: {path or 'none'}")
        click.echo(render_table(rows))


@config_group.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate(path: Path) -> None:
    """Check the configuration file PATH on its own (no environment): exit 3 naming each bad setting."""
    from streams.config import InvalidConfig, read_config_file, validate_file

    try:
        validate_file(path)
    except InvalidConfig as exc:
        click.echo(f"{path}: invalid", err=True)
        for line in exc.problems:
            click.echo(f"  {line}", err=True)
        raise SystemExit(exits.CONFIG) from None
    sections = ", ".join(read_config_file(path)) or "no sections: all defaults"
    click.echo(f"{path}: valid ({sections})")


@config_group.command()
@click.option("--format", "fmt", type=click.Choice(["yaml", "markdown"]), default="yaml", show_default=True)
def reference(fmt: str) -> None:
    """Print every setting with its default and description (a complete, commented sluice.yaml)."""
    from streams.config import Settings
    from streams.config_reference import reference_markdown, reference_yaml

    click.echo(reference_yaml(Settings) if fmt == "yaml" else reference_markdown(Settings), nl=False)


COMMANDS = [config_group]
