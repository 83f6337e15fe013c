"""`sluice worker <stage>`, `sluice parse` and `sluice produce`."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import click

from streams.cli.main import child_environment, settings_of
from streams.parse_output import kind_of


@click.command()
@click.argument("stage", type=click.Choice(["assemble", "hot", "cold", "watch", "all"]))
@click.option("--loglevel", default="info", type=click.Choice(["crit", "error", "warn", "info", "debug"]))
@click.pass_context
def worker(ctx: click.Context, stage: str, loglevel: str) -> None:
    """Run a stage worker until SIGTERM (`all` runs the four stages as child processes, for a demo)."""
    settings = settings_of(ctx)
    if stage != "all":  # `all` starts each stage as a worker of its own, which checks for itself
        from streams.message_size import check_message_sizes

        check_message_sizes(settings, stage)
    if stage == "assemble":
        from streams.workers.assemble import run_assemble_worker

        run_assemble_worker(settings, loglevel=loglevel)
        return
    if stage == "watch":
        from streams.workers.watch import run_watch_worker

        run_watch_worker(settings, loglevel=loglevel)
        return
    if stage == "hot":
        from streams.workers.hot import run_hot_worker

        run_async_worker(run_hot_worker, settings, loglevel, "hot")
        return
    if stage == "cold":
        from streams.workers.cold import run_cold_worker

        run_async_worker(run_cold_worker, settings, loglevel, "cold")
        return
    run_all(settings, loglevel, child_environment(ctx))


STAGES = ("assemble", "hot", "cold", "watch")


def run_all(settings: Any, loglevel: str, child_env: dict[str, str]) -> None:
    """Every stage as a child process of this one (each stage keeps its own event loop and group);
    a signal stops them all, and one dying stops the rest, so a supervisor sees the failure."""
    import os
    import subprocess

    from streams import observability as obs

    base = settings.observability.port
    procs = {}
    for i, stage in enumerate(STAGES):
        # Each stage its own port: the configured one counted up, else the stages' defaults.
        env = {**os.environ, **child_env}
        if base is not None:
            env["SLUICE_OBSERVABILITY__PORT"] = str(base + i if base else 0)
        procs[stage] = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", stage, "--loglevel", loglevel],
                                        env=env)
        port = obs.port_for(stage, base + i if base else base)
        click.echo(f"{stage}: pid {procs[stage].pid}, " + (f"metrics on :{port}" if port else "metrics on a free port "
                                                          "(in its log)"))
    stopping = {"yes": False}

    def stop(_sig: int, _frame: Any) -> None:
        stopping["yes"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping["yes"] and all(p.poll() is None for p in procs.values()):
        time.sleep(0.5)
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for stage, p in procs.items():
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
        if p.returncode not in (0, -signal.SIGINT, -signal.SIGTERM):
            click.echo(f"{stage} exited with {p.returncode}", err=True)


@click.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--label", "labels", multiple=True, help="KEY=VALUE label put on every event (e.g. project=llm)")
@click.option("--metrics/--no-metrics", default=True, help="also print step metric points")
@click.option("--idle-timeout-ms", default=5000, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="json", show_default=True,
              help="json: one object per line, with its kind and no null fields; text: one block per event")
@click.option("--stats", is_flag=True, help="after the events, print to stderr how many events of each multiline "
              "kind were made and how many lines they merged")
@click.pass_context
def parse(ctx: click.Context, files: tuple[Path, ...], labels: tuple[str, ...], metrics: bool,
          idle_timeout_ms: int, fmt: str, stats: bool) -> None:
    """The assemble stage offline over FILES (`-`: standard input), as the workers would see them.

    Plain text and the envelopes of docker, CRI, Fluent Bit, the OpenTelemetry Collector (OTLP JSON),
    rsyslog (JSON, RFC 5424), Vector and Filebeat are recognised per line. Check how your own logs
    will come out before shipping them (--stats sums up the multiline events: a traceback split in
    two shows up as fewer lines than you expect). What the worker would send to the dead-letter topic is
    printed too, as a dead letter with "kind": "dead_letter" (its reason also on stderr), and parsing goes
    on: the exit status is 0 unless a file cannot be read.
    """
    from streams.assemble.outputs import encode_body
    from streams.assemble.pipeline import parse_files
    from streams.assemble.route import ProjectRouter
    from streams.assemble.trust import LabelTrust
    from streams.parse_output import as_json, as_text

    settings = settings_of(ctx)
    label_map = {}
    for item in labels:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--label")
        label_map[key] = value

    def told(wanted: str, used: str) -> None:
        click.echo(f"sluice parse: project {wanted!r} is not in the routing table (routing.projects): the workers "
                   f"would route its events to {used!r}, as shown", err=True)

    refused: set[str] = set()

    def not_trusted() -> None:
        for project in trust.take_refused():
            if project not in refused:
                refused.add(project)
                click.echo(f"sluice parse: a project label {project!r} from this source is not trusted "
                           "(routing.claims): the workers would route its events as unlabelled, as shown", err=True)

    routing = settings.routing
    trust = LabelTrust(routing.claims, topic=settings.topics.raw, trust_all=routing.trust_all_labels,
                       known=settings.projects())
    router = ProjectRouter(routing.default_project, topic_prefix=settings.topics.events_prefix,
                           known=settings.projects(), trust=trust, on_fold=told)
    out = sys.stdout
    counts = MultilineCounts()
    letters = 0
    engine = settings.assemble.engine  # native where built; the same outputs either way (docs/native.md)
    for n, event in enumerate(parse_files(list(files), labels=label_map, router=router,
                                          default_ts_ms=int(time.time() * 1000), include_metrics=metrics,
                                          idle_timeout_ms=idle_timeout_ms, encode=partial(encode_body, engine=engine),
                                          engine=engine)):
        counts.add(event)
        not_trusted()
        if fmt == "text":
            out.write(("\n" if n else "") + as_text(event) + "\n")
        else:
            out.write(as_json(event) + "\n")
        if event.get("kind") == "dead_letter":
            letters += 1
            if fmt != "text":  # the text format prints the reason in place
                click.echo(f"sluice parse: dead letter ({event['error_type']}): {event['error']}", err=True)
    if letters:
        click.echo(f"sluice parse: {letters} dead letter(s) among the outputs; the workers would send them to the "
                   "dead-letter topic", err=True)
    if stats:
        out.flush()
        click.echo(counts.report(), err=True)


class MultilineCounts:
    """Events of ``sluice parse`` summed up: per multiline kind, the events and the lines they merged."""

    def __init__(self) -> None:
        self.events = 0
        self.metrics = 0
        self.lines = 0
        self.kinds: dict[str, list[int]] = {}  # kind -> [events, lines]

    def add(self, event: dict) -> None:
        kind = kind_of(event)
        if kind != "event":  # a step-metric point (one line), or a dead letter
            if kind == "metric":
                self.metrics += 1
                self.lines += 1
            return
        self.events += 1
        n = event.get("line_count") or 1
        self.lines += n
        if n > 1:
            acc = self.kinds.setdefault(event.get("multiline_kind") or "multiline", [0, 0])
            acc[0] += 1
            acc[1] += n

    def report(self) -> str:
        merged = sum(lines for _e, lines in self.kinds.values())
        multi = sum(e for e, _l in self.kinds.values())
        rows = [f"{self.events} events and {self.metrics} metric points from {self.lines} lines",
                f"{multi} multiline events merged {merged} lines:"]
        width = max((len(k) for k in self.kinds), default=0)
        for kind, (events, lines) in sorted(self.kinds.items(), key=lambda kv: (-kv[1][0], kv[0])):
            rows.append(f"  {kind:<{width}}  {events:>6} events  {lines:>7} lines")
        return "\n".join(rows)


def run_async_worker(run: Any, settings: Any, loglevel: str, stage: str) -> None:
    """Run ``run(settings, stop)`` until SIGTERM or SIGINT, then let it drain and commit."""
    from streams.logs import configure, quiet_libraries

    configure(loglevel, settings.observability.log_format)
    quiet_libraries(loglevel)

    async def main() -> None:
        from streams import observability as obs

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        conf = settings.observability
        obs.HEALTH.stuck_after_s = conf.stuck_after_s
        endpoints = obs.serve(stage, obs.port_for(stage, conf.port), host=conf.host)
        beat = asyncio.create_task(obs.heartbeat())
        try:
            await run(settings, stop)
        finally:
            beat.cancel()
            await endpoints.cleanup()

    asyncio.run(main())


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", default=None, help="project label on every line (default: the default route)")
@click.option("--batch-lines", default=200, show_default=True, help="lines per Avro RawBatch record")
@click.option("--passes", default=1, show_default=True, help="send the files this many times (new sources)")
@click.pass_context
def produce(ctx: click.Context, files: tuple[Path, ...], project: str | None, batch_lines: int, passes: int) -> None:
    """FILES as one burst into logs.raw, one source per file (e.g. `sluice produce corpus/training/*.log`)."""
    from streams.cli.main import require
    from streams.produce import produce_files

    settings = require(ctx, "kafka", "registry")
    paths = list(files)
    label = project or settings.routing.default_project
    total = sum(p.stat().st_size for p in paths) * passes
    sent = 0
    with click.progressbar(length=total, label="produce", show_eta=True) as bar:
        for n in range(passes):
            for path in paths:
                sent += produce_files(settings, [path], lambda p: {"project": label, "task_id": p.stem[:60]},
                                      host=f"produce-{time.time_ns()}-{n}", batch_lines=batch_lines)
                bar.update(path.stat().st_size)
    click.echo(f"{sent} lines from {len(paths)} files x {passes} to {settings.topics.raw}")


COMMANDS = [worker, parse, produce]
