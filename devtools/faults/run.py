"""One fault run end to end: private servers, the run's topics, a corpus burst, faults, drain, check.

The whole pipeline runs on servers of its own (a private Kafka broker, Elasticsearch and object
store, started by ``make_private`` as the ``private_server`` fixture does), so that every one of them
can be stopped or restarted; only the schema registry is the shared stack's (subjects are the run's
own). ``make_private(kind) -> (settings, service)`` is that fixture's factory.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.faults import injectors
from devtools.faults.burst import BurstBuilder, Expected, Unit, corpus_files
from devtools.faults.check import Figures, Load, check
from devtools.faults.network import Network
from devtools.faults.pipeline import Pipeline, cold_group, run_settings
from devtools.faults.ship import ShippedFiles, check_shipped
from devtools.faults.toxiproxy import KINDS
from streams.config import Settings

STAGES = ("assemble", "hot", "cold")


@dataclass
class Plan:
    """What to inject. ``faults`` is a fixed list (shuffled by ``seed``), or empty and ``minutes`` > 0
    for a soak that picks faults at random until the time is up."""

    kills_per_stage: int = 3
    rebalances: int = 1
    es_outage_s: float = 10.0
    store_outage_s: float = 10.0
    broker_restarts: int = 1
    # Faults a clean stop does not show: the registry unreachable, Elasticsearch frozen (SIGSTOP), the
    # cold sink's link to the store silently dropping everything (0: not in the fixed list).
    registry_outage_s: float = 0.0
    es_hang_s: float = 0.0
    store_blackhole_s: float = 0.0
    fault_s: float = 10.0  # how long the soak's network, hang and status faults last
    ship_poison: bool = False  # a node shipper tails a corpus file named rank99999999999.log (and one more)
    kill_between: bool = False  # soak: a kill -9 of a random stage after every other fault
    minutes: float = 0.0  # > 0: soak mode
    gap_s: tuple[float, float] = (2.0, 6.0)  # random pause before each fault
    rebalance_hold_s: float = 10.0
    waves: tuple[tuple[str, ...], ...] = (("training", "loghub"), ("training",))  # corpus kinds per wave
    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 30))

    def fixed_faults(self, rng: random.Random) -> list[str]:
        faults = [f"kill:{stage}" for stage in STAGES for _ in range(self.kills_per_stage)]
        faults += ["rebalance"] * self.rebalances + ["broker"] * self.broker_restarts
        faults += ["es_outage"] * (self.es_outage_s > 0) + ["store_outage"] * (self.store_outage_s > 0)
        faults += ["registry_outage"] * (self.registry_outage_s > 0) + ["es_hang"] * (self.es_hang_s > 0)
        faults += ["net:cold-store:blackhole"] * (self.store_blackhole_s > 0)
        rng.shuffle(faults)
        return faults

    def duration_of(self, name: str) -> float:
        fixed = {"registry_outage": self.registry_outage_s, "es_hang": self.es_hang_s,
                 "net:cold-store:blackhole": self.store_blackhole_s}
        return fixed.get(name) or self.fault_s


# Each stage's kill -9 three times as often as any other fault; every other kind once.
NET_LINKS = ("assemble-registry", "hot-registry", "hot-elasticsearch", "cold-registry", "cold-store")
SOAK_CHOICES = (
    *[f"kill:{stage}" for stage in STAGES for _ in range(3)],
    "rebalance", "rebalance_kill", "es_outage", "store_outage", "broker", "broker_hard",
    "registry_outage", "es_hang", "store_hang", "broker_hang", "es_kill", "store_kill",
    "es_429", "es_503", "es_401",
    *[f"net:{link}:{kind}" for link in ("hot-elasticsearch", "cold-store") for kind in KINDS],
    *[f"net:{link}:{kind}" for link in ("assemble-registry", "cold-registry") for kind in ("blackhole", "reset")],
)


@dataclass
class Servers:
    kafka: Any
    elasticsearch: Any
    objectstore: Any


def start_private(base: Settings, make_private: Callable[..., tuple[Settings, Any]],
                  say: Callable[[str], None]) -> tuple[Settings, Servers]:
    """The three private servers, started side by side; settings point the run at them."""
    t0 = time.monotonic()
    with ThreadPoolExecutor(3) as pool:
        kafka, es, store = (pool.submit(make_private, kind) for kind in ("kafka", "elasticsearch", "objectstore"))
        (ks, kafka_service), (es_settings, es_service) = kafka.result(), es.result()
        ss, store_service = store.result()
    settings = base.model_copy(update={"kafka": ks.kafka, "elasticsearch": es_settings.elasticsearch,
                                       "object_store": ss.object_store})
    say(f"private Kafka {ks.kafka.bootstrap_servers}, Elasticsearch {es_settings.elasticsearch.url}, "
        f"object store {ss.object_store.endpoint_url} up in {time.monotonic() - t0:.0f} s")
    return settings, Servers(kafka_service, es_service, store_service)


class Feeder(threading.Thread):
    """Produces units paced over time, in order; each unit's records go back to back.

    ``expected`` grows with what was built, so it always covers what was (or is about to be) produced.
    """

    def __init__(self, settings: Settings, waves: Iterator[list[Unit]],
                 builder_expected: Callable[[list[Unit]], Expected], units_per_s: float) -> None:
        super().__init__(daemon=True, name="fault-feeder")
        from confluent_kafka import Producer

        self.settings = settings
        self.waves = waves
        self.expected_of = builder_expected
        self.units_per_s = units_per_s
        self.expected = Expected()
        self.produced_units = 0
        self.errors: list[str] = []
        self.stop_after_wave = threading.Event()
        self.producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True, "linger.ms": 5,
                                  "compression.type": "zstd", "message.max.bytes": 16 * 1024 * 1024,
                                  "log_level": 2})  # broker restarts are expected: no connection noise

    def _on_delivery(self, err: Any, _msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))

    def run(self) -> None:
        topic = self.settings.topics.raw
        for units in self.waves:
            self.expected.add(self.expected_of(units))
            for unit in units:
                for key, value in unit.records:
                    while True:
                        try:
                            self.producer.produce(topic, value, key, on_delivery=self._on_delivery)
                            break
                        except BufferError:
                            self.producer.poll(0.1)
                self.producer.poll(0)
                self.produced_units += 1
                time.sleep(1.0 / self.units_per_s)
            if self.stop_after_wave.is_set():
                break
        while self.producer.flush(5.0):
            pass


def _waves(builder: BurstBuilder, project: str, kinds: tuple[tuple[str, ...], ...], endless: bool,
           rng: random.Random) -> Iterator[list[Unit]]:
    n = 0
    while True:
        for wave_kinds in kinds:
            host = f"{project}-w{n}"
            units = [builder.file_unit(path, host) for path in corpus_files(kinds=wave_kinds)]
            rng.shuffle(units)
            bad = builder.bad_units(f"w{n}")
            for i, unit in enumerate(bad):  # spread the bad records over the wave
                units.insert((i + 1) * len(units) // (len(bad) + 1), unit)
            yield units
            n += 1
        if not endless:
            return


def inject(name: str, pipeline: Pipeline, servers: Servers, plan: Plan, network: Network) -> str:
    seconds = plan.duration_of(name)
    if name.startswith("kill:"):
        return injectors.kill_worker(pipeline, name.split(":", 1)[1])
    if name.startswith("net:"):
        _net, link, kind = name.split(":")
        return injectors.net_fault(pipeline, network, [link], kind, seconds)
    if name.startswith("es_") and name[3:].isdigit():
        return injectors.es_answers(pipeline, network, int(name[3:]), seconds)
    simple: dict[str, Callable[[], str]] = {
        "rebalance": lambda: injectors.rebalance(pipeline, plan.rebalance_hold_s),
        "rebalance_kill": lambda: injectors.rebalance(pipeline, plan.rebalance_hold_s, kill_it=True),
        "es_outage": lambda: injectors.outage(pipeline, servers.elasticsearch, plan.es_outage_s, "Elasticsearch"),
        "store_outage": lambda: injectors.outage(pipeline, servers.objectstore, plan.store_outage_s, "object store"),
        "broker": lambda: injectors.broker_restart(pipeline, servers.kafka),
        "broker_hard": lambda: injectors.broker_restart(pipeline, servers.kafka, hard=True),
        "registry_outage": lambda: injectors.net_fault(pipeline, network, network.links_to("registry"), "down",
                                                       seconds),
        "es_hang": lambda: injectors.hang(pipeline, servers.elasticsearch, seconds, "Elasticsearch"),
        "store_hang": lambda: injectors.hang(pipeline, servers.objectstore, seconds, "object store"),
        "broker_hang": lambda: injectors.hang(pipeline, servers.kafka, seconds, "Kafka broker"),
        "es_kill": lambda: injectors.kill_server(pipeline, servers.elasticsearch, "Elasticsearch"),
        "store_kill": lambda: injectors.kill_server(pipeline, servers.objectstore, "object store"),
    }
    if name not in simple:
        raise ValueError(f"no fault named {name}")
    return simple[name]()


def inject_faults(plan: Plan, rng: random.Random, pipeline: Pipeline, servers: Servers, network: Network,
                  log: Callable[[str], None]) -> Counter:
    """The plan's fixed faults in random order; or, for a soak, every kind once in random order, then
    random kinds until the time is up, with a kill -9 of a random stage after each (``kill_between``)."""
    faults: Counter = Counter()
    soak = plan.minutes > 0
    todo = plan.fixed_faults(rng) if not soak else rng.sample(sorted(set(SOAK_CHOICES)), len(set(SOAK_CHOICES)))
    deadline = time.monotonic() + plan.minutes * 60
    while todo or (soak and time.monotonic() < deadline):
        name = todo.pop(0) if todo else rng.choice(SOAK_CHOICES)
        log(inject(name, pipeline, servers, plan, network))
        faults[name] += 1
        if soak and plan.kill_between and not name.startswith("kill:"):
            injectors.hold(pipeline, rng.uniform(*plan.gap_s) / 2)
            kill = f"kill:{rng.choice(STAGES)}"
            log(inject(kill, pipeline, servers, plan, network))
            faults[kill] += 1
        injectors.hold(pipeline, rng.uniform(*plan.gap_s))
    return faults


def check_run(settings: Settings, expected: Expected, shipped: ShippedFiles | None) -> Figures:
    fig = check(settings, expected)
    if shipped is not None:
        check_shipped(settings, shipped, fig)
        fig.lines_in += shipped.lines()
    return fig


def drain(settings: Settings, pipeline: Pipeline, timeout_s: float, say: Callable[[str], None]) -> None:
    """Until every stage has committed everything (or ``timeout_s``), restarting workers that die."""
    deadline = time.monotonic() + timeout_s
    while not drained(settings):
        if time.monotonic() > deadline:
            say(f"  not drained within {timeout_s:.0f} s; checking what arrived")
            return
        injectors.hold(pipeline, 2.0)


def end_lag(settings: Settings) -> dict[str, int]:
    """Records each group has not committed yet, per stage (after the drain: 0 when everything is out)."""
    from devtools.testing.elasticsearch import group_lag

    t = settings.topics
    events = t.events_topic(settings.routing.default_project)
    return {"assemble": group_lag(settings, settings.assemble.app_id, [t.raw]),
            "hot": group_lag(settings, settings.hot.group_id, [events, t.metrics]),
            "cold": group_lag(settings, cold_group(settings), [events])}


def drained(settings: Settings) -> bool:
    from devtools.testing.elasticsearch import committed_to_end
    from streams.workers.assemble import open_sources

    t = settings.topics
    events = t.events_topic(settings.routing.default_project)
    return (committed_to_end(settings, settings.assemble.app_id, [t.raw])
            and open_sources(settings) == 0  # the last blocks of each source flushed (idle timer)
            and committed_to_end(settings, settings.hot.group_id, [events, t.metrics])
            and committed_to_end(settings, cold_group(settings), [events]))


def run_scenario(base: Settings, make_private: Callable[..., tuple[Settings, Any]], plan: Plan, workdir: Path,
                 say: Callable[[str], None] = print, drain_timeout_s: float = 180.0,
                 before_check: Callable[[Settings, Expected], None] | None = None) -> Figures:
    from streams.contracts import register_all
    from streams.topics import create_topics, topic_specs

    t_start = time.monotonic()
    rng = random.Random(plan.seed)
    project = f"flt-{uuid.uuid4().hex[:10]}"
    say(f"fault run {project}, seed {plan.seed}, logs in {workdir}")
    private, servers = start_private(base, make_private, say)
    settings = run_settings(private, project)
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    builder = BurstBuilder(settings, project)
    network = Network(settings).start()
    pipeline = Pipeline(settings, workdir, say, network=network)
    soak = plan.minutes > 0
    # Paced so that the input keeps coming for most of the fault phase (about 1.5 files a second).
    feeder = Feeder(settings, _waves(builder, project, plan.waves, soak, rng), builder.expected_of, units_per_s=1.5)
    shipped = ShippedFiles(workdir.parent / "ship-logs").write(builder) if plan.ship_poison else None
    if shipped is not None:
        pipeline.env_by_stage["ship"] = shipped.env(settings)
    try:
        for stage in (*STAGES, *(("ship",) if shipped is not None else ())):
            pipeline.start(stage)
        feeder.start()
        feed_started = time.monotonic()
        injectors.hold(pipeline, rng.uniform(*plan.gap_s) + 4)  # let the workers start and take load
        faults = inject_faults(plan, rng, pipeline, servers, network, lambda what: say(
            f"  [{time.monotonic() - t_start:5.0f} s] {what}; {feeder.produced_units} units produced"))
        feeder.stop_after_wave.set()
        while feeder.is_alive():
            injectors.hold(pipeline, 1.0)
        if feeder.errors:
            raise RuntimeError(f"producing the burst failed: {feeder.errors[:3]}")
        feed_ended = time.monotonic()
        say(f"  [{time.monotonic() - t_start:5.0f} s] input done: {feeder.expected.lines} lines in "
            f"{feeder.expected.records} records; draining")
        drain(settings, pipeline, drain_timeout_s, say)
        drain_ended = time.monotonic()
        lag = end_lag(settings)
        pipeline.stop_all()
        say(f"  [{time.monotonic() - t_start:5.0f} s] drained; checking")
        if before_check is not None:
            before_check(settings, feeder.expected)
        fig = check_run(settings, feeder.expected, shipped)
    finally:
        pipeline.stop_all()
        network.stop()
    fig.faults = faults
    fig.refused_stops = pipeline.refused_stops
    fig.load = Load(lines=feeder.expected.lines, events=len(feeder.expected.events), feed_s=feed_ended - feed_started,
                    out_s=drain_ended - feed_started, lag_at_end=lag)
    fig.unplanned_exits = pipeline.unplanned_exits
    fig.seconds = time.monotonic() - t_start
    for note in pipeline.exit_notes[:5]:
        fig.examples.append(f"unplanned exit: {note}")
    return fig
