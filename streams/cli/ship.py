"""`sluice ship`: tail training logs on this node and send them to Kafka in batches."""

from __future__ import annotations

from pathlib import Path

import click

from streams.cli.main import settings_of
from streams.errors import ConfigError, SluiceError


def _labels(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--label")
        out[key] = value
    return out


@click.command()
@click.option("--path", "paths", multiple=True, help="Glob of files to tail (repeatable; `**` = any depth). "
              "Default: ship.paths.")
@click.option("--checkpoint", type=click.Path(path_type=Path), help="Checkpoint file (default: ship.checkpoint_path).")
@click.option("--topic", help="Kafka topic (default: topics.raw).")
@click.option("--interval", type=float, help="Seconds between scheduled sends (default: ship.interval_s).")
@click.option("--stagger-window", type=float,
              help="Seconds over which nodes' send phases spread (default: ship.stagger_window_s).")
@click.option("--label", "labels", multiple=True, help="KEY=VALUE label on every batch (repeatable).")
@click.option("--node-name", help="This node's name (default: $NODE_NAME, else the host name).")
@click.option("--gpu", type=click.Choice(["auto", "on", "off"]),
              help="Sample this node's GPUs into logs.metrics (default: ship.gpu.enabled, auto: where a GPU is found).")
@click.option("-v", "--verbose", is_flag=True, help="Log every rotation and checkpoint.")
@click.pass_context
def ship(ctx: click.Context, paths: tuple[str, ...], checkpoint: Path | None, topic: str | None,
         interval: float | None, stagger_window: float | None, labels: tuple[str, ...], node_name: str | None,
         gpu: str | None, verbose: bool) -> None:
    """Tail log files and ship their lines to Kafka as Avro RawBatch records.

    Settings come from the `ship:` section of the configuration (or SLUICE_SHIP__<FIELD>, e.g.
    SLUICE_SHIP__LABELS__PROJECT=llama); options given here win. Offsets are checkpointed only
    after Kafka acknowledged the lines, so a restart resumes without loss. SIGTERM finishes the
    batches in flight and exits.
    """
    from streams.gpu.run import build_sampler
    from streams.logs import configure
    from streams.ship.run import build_shipper, run_until_signalled
    from streams.ship.settings import ShipSettings

    settings = settings_of(ctx)
    configure("info" if verbose else "warning", settings.observability.log_format)
    overrides: dict[str, object] = {}
    if paths:
        overrides["paths"] = list(paths)
    if checkpoint:
        overrides["checkpoint_path"] = checkpoint
    if topic:
        overrides["topic"] = topic
    if interval is not None:
        overrides["interval_s"] = interval
    if stagger_window is not None:
        overrides["stagger_window_s"] = stagger_window
    if node_name:
        overrides["node_name"] = node_name
    if labels:
        overrides["labels"] = {**settings.ship.labels, **_labels(labels)}
    if gpu:
        overrides["gpu"] = {**settings.ship.gpu.model_dump(), "enabled": gpu}
    try:
        ship_settings = ShipSettings.model_validate({**settings.ship.model_dump(), **overrides})
    except ValueError as exc:
        raise ConfigError(f"invalid ship settings: {exc}") from exc
    shipper = build_shipper(settings, ship_settings)
    try:
        sampler = build_sampler(settings, ship_settings, shipper)
    except SluiceError as exc:
        raise ConfigError(f"ship.gpu.enabled is on: {exc}") from exc
    click.echo(f"shipping {', '.join(ship_settings.paths)} to {ship_settings.topic or settings.topics.raw} "
               f"every {ship_settings.interval_s:g}s (phase {shipper.phase_ms / 1000:.1f}s), "
               f"checkpoint {ship_settings.checkpoint_path}"
               + (f", metrics on port {ship_settings.metrics_port}" if ship_settings.metrics_port else ""), err=True)
    if sampler is not None:
        click.echo(f"sampling GPUs ({sampler.reader.name}) every {ship_settings.gpu.interval_s:g}s into "
                   f"{ship_settings.gpu.topic or settings.topics.metrics}", err=True)
    run_until_signalled(shipper, settings, [sampler] if sampler is not None else [])


COMMANDS = [ship]
