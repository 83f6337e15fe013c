"""``python -m devtools``: the developer's commands (local stack, demo, benchmarks, generated docs), run from a
checkout.

None of this is in the ``sluice`` wheel: it installs and starts servers, reads the corpus under
``corpus/`` and measures the product; the product's own commands are ``sluice ...``.
"""

from __future__ import annotations

from pathlib import Path

import click

from devtools.bench import bench
from devtools.demo import run_demo
from devtools.stack import manager
from streams.cli.main import CONTEXT_SETTINGS, CliState, SluiceGroup, child_environment, global_options, settings_of


@click.group(cls=SluiceGroup, context_settings=CONTEXT_SETTINGS)
@global_options
@click.pass_context
def main(ctx: click.Context, config: Path | None, log_format: str | None) -> None:
    """Sluice developer tools: the local stack, the demo, the benchmarks and the generated reference."""
    ctx.obj = CliState(config, log_format)


@main.group()
def stack() -> None:
    """The local Kafka, schema registry, Elasticsearch and object store (no Docker needed)."""


def _only(names: tuple[str, ...]) -> list[str] | None:
    return list(names) or None


SERVICE_NAMES = click.Choice(["kafka", "registry", "elasticsearch", "objectstore"])


@stack.command()
@click.argument("services", nargs=-1, type=SERVICE_NAMES)
@click.pass_context
def up(ctx: click.Context, services: tuple[str, ...]) -> None:
    """Install (first time) and start the servers; a no-op for those already healthy."""
    settings = settings_of(ctx)
    click.echo(f"stack directory: {settings.stack.dir}")
    seconds = manager.up(settings, log=click.echo, only=_only(services))
    click.echo(f"stack up in {seconds:.1f}s")


@stack.command()
@click.argument("services", nargs=-1, type=SERVICE_NAMES)
@click.pass_context
def down(ctx: click.Context, services: tuple[str, ...]) -> None:
    """Stop the servers (data is kept under the stack directory)."""
    manager.down(settings_of(ctx), log=click.echo, only=_only(services))


@stack.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Each server: running, healthy, endpoint, resident memory."""
    rows = manager.status(settings_of(ctx))
    click.echo(f"{'service':<14}{'state':<12}{'pid':>8}{'rss MB':>9}  endpoint")
    for row in rows:
        state = "healthy" if row.healthy else ("starting" if row.running else "stopped")
        rss = f"{row.rss_mb:.0f}" if row.rss_mb else "-"
        click.echo(f"{row.name:<14}{state:<12}{row.pid or '-':>8}{rss:>9}  {row.endpoint}")
    if not all(r.healthy for r in rows):
        raise SystemExit(3)



@main.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the pipeline on a real burst from the corpus (needs `python -m devtools stack up`)."""
    run_demo(settings_of(ctx), say=click.echo, child_env=child_environment(ctx))



@main.command(name="config-reference")
@click.option("--check", is_flag=True, help="exit 1 if a file is stale, writing nothing")
def config_reference(check: bool) -> None:
    """Regenerate deploy/sluice.reference.yaml and docs/configuration.md from the settings models."""
    from devtools.config_reference import stale_files, write_files

    if check:
        stale = stale_files()
        for path in stale:
            click.echo(f"stale: {path} (run `python -m devtools config-reference`)", err=True)
        raise SystemExit(1 if stale else 0)
    for path in write_files():
        click.echo(f"wrote {path}")


main.add_command(bench)


@main.command(name="incident-latency")
@click.option("--quiet-s", type=float, default=60.0, show_default=True, help="watch.incident_quiet_s")
@click.option("--tick-s", type=float, default=5.0, show_default=True, help="watch.incident_tick_s")
@click.option("--gap-s", type=float, default=2.0, show_default=True, help="pause between two jobs sent")
@click.pass_context
def incident_latency(ctx: click.Context, quiet_s: float, tick_s: float, gap_s: float) -> None:
    """Job incidents through the real workers (needs the stack): how long after a job's last line its
    incident is out, per job of devtools/testing/jobs.py."""
    from devtools.incident_latency import report, run

    click.echo(report(run(settings_of(ctx), quiet_s, tick_s, gap_s)))


@main.group()
def agents() -> None:
    """The real node agents the integration tests run (rsyslog, the OpenTelemetry Collector)."""


@agents.command("install")
@click.pass_context
def agents_install(ctx: click.Context) -> None:
    """rsyslog with omkafka (apt-get, when missing) and the collector (built once into the stack dir)."""
    from devtools.agents.install import ensure_otelcol, ensure_rsyslog

    settings = settings_of(ctx)
    click.echo(f"rsyslogd: {ensure_rsyslog(click.echo)}")
    click.echo(f"otelcol: {ensure_otelcol(settings.stack.dir, click.echo)}")
