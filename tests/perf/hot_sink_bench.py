"""Hot sink benchmarks (a script, not a test): writes bench-results/hot_sink.md and PNG plots.

    .venv/bin/python tests/perf/hot_sink_bench.py [--burst-s 20] [--skip throughput,smoothing,fairness,incidents]

(i)   throughput: HotSink (documents built from decoded events, pre-serialised NDJSON, one bulk in
      flight) against the client's own ``helpers.async_bulk`` on pre-serialised documents, same
      Elasticsearch, same documents, same run; plus Kafka -> worker -> Elasticsearch end to end.
(ii)  smoothing: one project bursts at 10x the budget (declared capacity 500 events/s, budget
      400/s) over a 10%-of-budget baseline; per second: input, indexed (the sink's own acks),
      budget and lag; max per-second write rate / budget, and drain time vs backlog/(budget-baseline).
(iii) fairness: a second, quiet project at a steady rate while the first bursts; the quiet
      project's end-to-end latency (produce -> acknowledged by Elasticsearch) against the window.
      Up to three runs (``--fairness``): events stamped as they are produced (a running job's burst
      goes to today's indices); the corpus's own event times (40 days of daily indices) with every
      index created beforehand; and with the burst creating the noisy project's indices
      (Elasticsearch's master applies those cluster-state updates one at a time, the quiet
      project's own among them).
(iv)  incidents (``--incidents``): bursts shaped like training incidents (every rank's CUDA OOM
      traceback at once, an NCCL retry flood, the 9:00 start wave), the documents from corpus files
      that logged such incidents; one plot each, the busiest second against the budget and the time
      until the backlog is gone against a perfect sink's.

The paced producer stands in for node agents on other machines and runs at ``--producer-nice`` (15).
Nothing is asserted: the figures are reported. Runs against the shared local stack.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from devtools import CORPUS_DIR
from devtools.testing.elasticsearch import EventProducer, corpus_events, prepare_topics
from streams.config import REPO_ROOT, ProjectRoute, RoutingSettings, Settings, load_settings
from streams.sinks.base import SinkRecord
from streams.sinks.elasticsearch.request import IndexNamer, document, encode, epoch_ms, is_metric
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.elasticsearch.sink import HotSink
from streams.sinks.ratecontrol import Capacity
from streams.workers.hot import build_runner, hot_topics

CORPUS = CORPUS_DIR / "training"
OUT = REPO_ROOT / "bench-results"


def base_events() -> list[dict[str, Any]]:
    return list(corpus_events(sorted(CORPUS.glob("*.log")), "bench", task_types=("sft", None, "dpo")))


def copies(events: list[dict[str, Any]], n: int, project: str) -> list[dict[str, Any]]:
    """``n`` events cycling through the corpus, each with its own id."""
    out = []
    for i in range(n):
        v = dict(events[i % len(events)])
        v["project"] = project
        v["event_id"] = f"{project}/{i}"
        out.append(v)
    return out


def bench_settings(stack: Settings, projects: list[str], tag: str) -> Settings:
    routing = RoutingSettings(default_project=projects[0], projects={p: ProjectRoute() for p in projects})
    topics = stack.topics.model_copy(update={"dlq": f"bench.dlq.{tag}", "metrics": f"bench.metrics.{tag}"})
    return stack.model_copy(update={"routing": routing, "topics": topics})


def cleanup(settings: Settings, projects: list[str]) -> None:
    from streams.clients import es_client
    from streams.topics import topic_specs

    es = es_client(settings.elasticsearch)
    for p in projects:
        es.indices.delete(index=f"sluice-logs-{p}-*,sluice-metrics-{p}-*", ignore_unavailable=True,
                          allow_no_indices=True)
    from confluent_kafka.admin import AdminClient

    names = [s.name for s in topic_specs(settings) if s.name.startswith(("bench.", "logs.events.bench"))]
    # Keep the client and wait for the deletions: an AdminClient dropped at once destroys its handle before
    # they are sent, and a bench topic left under logs.events. is read by every cold worker's pattern
    # subscription (the README demo's among them, which then timed out).
    admin = AdminClient(settings.kafka.client_config())
    for future in admin.delete_topics(names).values():
        with contextlib.suppress(Exception):
            future.result(30)


# -- (i) throughput ----------------------------------------------------------------------------
async def raw_baseline(stack: Settings, docs: list[tuple[str, str, str]]) -> float:
    from elasticsearch.helpers import async_bulk

    from streams.clients import async_es_client

    es = async_es_client(stack.elasticsearch)
    actions = ({"_op_type": "index", "_index": i, "_id": d, "_source": src} for i, d, src in docs)
    t0 = time.perf_counter()
    ok, errors = await async_bulk(es, actions, chunk_size=1000, max_chunk_bytes=5 * 1024 * 1024,
                                  raise_on_error=False, stats_only=True)
    dt = time.perf_counter() - t0
    await es.close()
    assert ok == len(docs), f"baseline: {errors} errors"
    return len(docs) / dt


async def sink_only(stack: Settings, project: str, values: list[dict[str, Any]]) -> float:
    routing = RoutingSettings(default_project=project, projects={project: ProjectRoute()})
    sink = HotSink(stack.elasticsearch, routing, HotSinkSettings())
    await sink.start()
    recs = [SinkRecord("t", 0, i, None, v, b"", project, 1000) for i, v in enumerate(values)]
    t0 = time.perf_counter()
    acked = 0
    for rec in recs:
        sink.add(rec)
        if sink.due(0.0):
            acked += len((await sink.flush(0.0)).acked)
    while sink.buffered():
        acked += len((await sink.flush(0.0)).acked)
    dt = time.perf_counter() - t0
    await sink.close()
    assert acked == len(values), f"sink acked {acked} of {len(values)}"
    return len(values) / dt


def pre_serialised(values: list[dict[str, Any]], project: str) -> list[tuple[str, str, str]]:
    namer = IndexNamer(RoutingSettings(default_project=project, projects={project: ProjectRoute()}))
    out = []
    for v in values:
        doc, ts = document(v)
        out.append((namer.index_for(v, ts), v["event_id"], json.dumps(doc, separators=(",", ":"))))
    return out


def throughput(stack: Settings, events: list[dict[str, Any]], n: int, rounds: int) -> dict[str, Any]:
    rates: dict[str, list[float]] = {"raw": [], "sink": []}
    projects = []
    for r in range(rounds):
        for kind in ("raw", "sink"):
            project = f"bench-{kind}-{uuid.uuid4().hex[:6]}"
            projects.append(project)
            values = copies(events, n, project)
            if kind == "raw":
                docs = pre_serialised(values, project)  # outside the timing: that is what "pre-serialised" means
                rate = asyncio.run(raw_baseline(stack, docs))
            else:
                rate = asyncio.run(sink_only(stack, project, values))
            rates[kind].append(rate)
            print(f"  round {r + 1} {kind}: {rate:,.0f} docs/s")
    e2e = end_to_end(stack, events, n)
    for p in projects:
        cleanup(bench_settings(stack, [p], "x"), [p])
    raw, sink = statistics.median(rates["raw"]), statistics.median(rates["sink"])
    return {"raw": rates["raw"], "sink": rates["sink"], "ratio": sink / raw, "e2e": e2e, "n": n}


def end_to_end(stack: Settings, events: list[dict[str, Any]], n: int) -> float:
    """Kafka (Avro) -> SinkRunner -> HotSink -> Elasticsearch, capacity unbounded."""
    tag = uuid.uuid4().hex[:6]
    project = f"bench-e2e-{tag}"
    settings = bench_settings(stack, [project], tag)
    prepare_topics(settings)
    EventProducer(settings).send_all(copies(events, n, project))
    runner = build_runner(settings, Capacity(10**6, 10**10), f"bench-e2e-{tag}", HotSinkSettings())

    async def go() -> float:
        await runner.sink.start()
        stop = asyncio.Event()
        t0 = time.perf_counter()
        task = asyncio.create_task(runner.run(stop))
        while runner.stats["acked"] < n:
            await asyncio.sleep(0.02)
        dt = time.perf_counter() - t0
        stop.set()
        await task
        return n / dt

    rate = asyncio.run(go())
    runner.source.close()
    cleanup(settings, [project])
    print(f"  end to end (Kafka -> Elasticsearch): {rate:,.0f} docs/s")
    return rate


# -- (ii), (iii) smoothing and fairness ---------------------------------------------------------
@dataclass
class Load:
    project: str
    rate_at: Callable[[float], float]  # events/s at time t since start


@dataclass
class Trace:
    seconds: list[int] = field(default_factory=list)
    produced: dict[str, list[int]] = field(default_factory=dict)
    acked: dict[str, list[int]] = field(default_factory=dict)
    budget: list[float] = field(default_factory=list)
    lag: list[int] = field(default_factory=list)
    ack_times: list[float] = field(default_factory=list)  # every acked event, seconds since start
    latency: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (t, latency s)
    throttled: int = 0


@dataclass(frozen=True)
class Producing:
    """How the paced producer stands in for the node agents.

    ``nice``: its CPU priority. On a cluster the agents run on the training nodes; here they share two
    cores with Elasticsearch, Kafka and the sink, and at nice 0 the producer's serialising takes CPU
    from Elasticsearch at the moments measured, which inflates the quiet project's latency; at nice 15
    it still sends the same records in the same time.
    ``live_times``: every event's time is its produce time, as when a running job logs (the burst goes
    to today's indices); otherwise the corpus's own times, which span 40 days of daily indices."""

    nice: int = 15
    live_times: bool = False


def paced_run(  # noqa: PLR0915 - one scenario, read top to bottom: producer, sampler, runner
        stack: Settings, events: list[dict[str, Any]], loads: list[Load], duration_s: float,
        capacity: Capacity, drain_until_empty: bool, max_s: float, bulks_in_flight: int | None = None,
        producing: Producing = Producing()) -> Trace:
    tag = uuid.uuid4().hex[:6]
    settings = bench_settings(stack, [ld.project for ld in loads], tag)
    prepare_topics(settings)
    trace = Trace(produced={ld.project: [] for ld in loads}, acked={ld.project: [] for ld in loads},
                  latency={ld.project: [] for ld in loads})
    acked = {ld.project: 0 for ld in loads}
    # The paced producer runs in a process of its own (forked before the runner's Kafka clients exist):
    # serialising thousands of events per second in a thread of this process held the GIL away from the
    # sink and showed up as stalls of the sink itself.
    fork = multiprocessing.get_context("fork")
    counts = fork.Array("q", len(loads))
    stop_producing = fork.Event()
    t0 = time.time()

    def on_acked(records: list[SinkRecord], _mono: float) -> None:
        now = time.time()
        for rec in records:
            acked[rec.project] += 1
            trace.ack_times.append(now - t0)
            sent_ms = rec.value.get("ingest_ts") or rec.value["timestamp"]  # metric points carry no ingest_ts
            trace.latency[rec.project].append((now - t0, now - epoch_ms(sent_ms) / 1000))

    def produce() -> None:
        os.nice(producing.nice)
        producer = EventProducer(settings, linger_ms=1)
        owed = [0.0] * len(loads)
        tick = 0.05
        while not stop_producing.is_set():
            t = time.time() - t0
            if t >= duration_s:
                break
            for k, ld in enumerate(loads):
                owed[k] += ld.rate_at(t) * tick
                while owed[k] >= 1:
                    i = counts[k]
                    v = dict(events[i % len(events)])
                    v["project"] = ld.project
                    v["event_id"] = f"{ld.project}/{i}"
                    v["ingest_ts"] = int(time.time() * 1000)
                    if producing.live_times:
                        v["timestamp"] = v["ingest_ts"]
                    producer.send(v)
                    counts[k] = i + 1
                    owed[k] -= 1
            producer.producer.poll(0)
            time.sleep(max(0.0, tick - ((time.time() - t0) - t)))
        producer.flush()

    producer_proc = fork.Process(target=produce, daemon=True)
    producer_proc.start()

    def produced_now() -> dict[str, int]:
        return {ld.project: int(counts[k]) for k, ld in enumerate(loads)}

    # The sink is told the capacity the runner's controller gets (its bulks are one window's budget at most).
    hot = HotSinkSettings(max_batch_age_s=0.1, capacity_events_per_s=capacity.events_per_s,
                          capacity_bytes_per_s=capacity.bytes_per_s,
                          bulks_in_flight=bulks_in_flight or HotSinkSettings().bulks_in_flight)
    runner = build_runner(settings, capacity, f"bench-{tag}", hot,
                          sink=HotSink(settings.elasticsearch, settings.routing, hot, on_acked=on_acked))
    # Metrics go to their own (empty here) topic; only events are produced.
    topics = hot_topics(settings)
    print(f"  topics {topics}, budget {runner.controller.events_budget}/window of {hot.window_s} s")

    async def go() -> None:
        await runner.sink.start()
        stop = asyncio.Event()
        task = asyncio.create_task(runner.run(stop))
        last = dict.fromkeys(acked, 0)
        last_acked = dict.fromkeys(acked, 0)
        second = 0
        while True:
            await asyncio.sleep(max(0.0, t0 + second + 1 - time.time()))
            second += 1
            if task.done():
                task.result()  # the runner died: show why
            trace.seconds.append(second)
            produced = produced_now()
            for p, n_produced in produced.items():
                trace.produced[p].append(n_produced - last[p])
                trace.acked[p].append(acked[p] - last_acked[p])
            last, last_acked = dict(produced), dict(acked)
            trace.budget.append(runner.controller.events_budget / hot.window_s)  # per second, as plotted
            trace.lag.append(sum(produced.values()) - sum(acked.values()))
            done = second >= duration_s and not producer_proc.is_alive()
            if done and (not drain_until_empty or trace.lag[-1] == 0):
                break
            if second >= max_s:
                print("  stopped at the time limit")
                break
            if second % 10 == 0:
                print(f"  t={second}s produced={sum(produced.values())} acked={sum(acked.values())} "
                      f"lag={trace.lag[-1]} budget={trace.budget[-1]}")
        stop_producing.set()
        stop.set()
        await task

    asyncio.run(go())
    producer_proc.join(30)
    trace.throttled = runner.stats["throttled"]
    runner.source.close()
    cleanup(settings, [ld.project for ld in loads])
    return trace


def sliding_max(times: list[float], width: float = 1.0) -> int:
    times = sorted(times)
    best = j = 0
    for i, t in enumerate(times):
        while times[j] < t - width + 1e-9:
            j += 1
        best = max(best, i - j + 1)
    return best


# The store as declared to the bursts' rate controller, and the budget it gets of it (80%).
BURST_CAPACITY = Capacity(500, 50_000_000)
BURST_BUDGET = 400


def ack_peaks(trace: Trace, project: str, budget: float) -> dict[str, Any]:
    """The most documents acknowledged in one wall-clock second and in any sliding second."""
    per_second = trace.acked[project]
    return {"max_per_second": max(per_second), "max_ratio": max(per_second) / budget,
            "sliding_max": sliding_max(trace.ack_times)}


def smoothing(stack: Settings, events: list[dict[str, Any]], burst_s: float,
              bulks_in_flight: int | None = None, nice: int = Producing.nice) -> dict[str, Any]:
    capacity, budget = BURST_CAPACITY, BURST_BUDGET
    base_rate, burst_rate, pre = 0.1 * budget, 10 * budget, 5.0
    project = f"bench-burst-{uuid.uuid4().hex[:6]}"

    def rate(t: float) -> float:
        return burst_rate if pre <= t < pre + burst_s else base_rate

    backlog_est = burst_s * (burst_rate - budget)
    duration = pre + burst_s + backlog_est / (budget - base_rate) + 30
    events = [v for v in events if not is_metric(v)]
    trace = paced_run(stack, events, [Load(project, rate)], duration, capacity, drain_until_empty=False,
                      max_s=duration + 60, bulks_in_flight=bulks_in_flight, producing=Producing(nice))
    burst_end = int(pre + burst_s)
    backlog = trace.lag[burst_end - 1]
    drained = next((s for s, lag in zip(trace.seconds, trace.lag, strict=True)
                    if s > burst_end and lag <= base_rate), None)
    drain_s = (drained - burst_end) if drained is not None else None
    return {"trace": trace, "project": project, "budget": budget, "burst_s": burst_s, "base_rate": base_rate,
            "burst_rate": burst_rate, "backlog": backlog, "drain_s": drain_s,
            "predicted_drain_s": backlog / (budget - base_rate), "burst_end": burst_end,
            **ack_peaks(trace, project, budget)}


@dataclass(frozen=True)
class Incident:
    """A burst shaped like a real training incident: input in multiples of the budget, ``t`` seconds from
    its start; the documents are the events of the corpus files that logged such an incident."""

    name: str
    what: str
    files: tuple[str, ...]
    length_s: float
    shape: Callable[[float], float]


def _oom_at_barrier(t: float) -> float:
    return 15.0 if t < 1 else 3.0 if t < 11 else 0.1


def _nccl_retry_flood(t: float) -> float:
    if t >= 30:
        return 0.1
    return 8.0 if t % 5 < 1 else 1.5


def _start_wave(t: float) -> float:
    if t < 10:
        return 0.1 + 3.9 * t / 10
    if t < 15:
        return 4.0
    return max(0.1, 4.0 - 3.9 * (t - 15) / 10)


INCIDENTS = (
    Incident("oom_at_barrier", "every rank of a job hits CUDA OOM at a barrier and prints its traceback in the same "
             "second (15x budget for 1 s), then the launcher's ChildFailedError boxes and the ranks' exit logs "
             "(3x for 10 s)",
             ("bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
              "accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log", "deepspeed_chat_dpo_8gpu_tail_exit.log"),
             11, _oom_at_barrier),
    Incident("nccl_retry_flood", "an NCCL watchdog timeout: every rank logs each retry, a wave of 8x budget for 1 s "
             "every 5 s over 1.5x between them, for 30 s",
             ("sglang_nccl_watchdog_timeout_hardwrapped.log", "verl_fsdp_ray_nccl_warn_cuda_failure_700.log",
              "vllm_ray_pp_nccl_info_warn_init_failure.log", "bigscience_meg_ds_3d_n16_nccl_bootstrap_interleaved.log"),
             30, _nccl_retry_flood),
    Incident("start_wave", "the 9:00 start wave: jobs start one after another and print their launch configuration, "
             "input rising to 4x budget over 10 s, 4x for 5 s, falling over 10 s",
             ("deepspeed_chat_dpo_8gpu_launch_init_config.log",
              "bigscience_deepspeed_zero3_offload_stage3_init_n16.log",
              "vllm_multiproc_startup_throughput_then_assertion.log", "ms_swift_sft_qwen2_7b_self_cognition_2024.log"),
             25, _start_wave),
)


def fluid_clear(produced: list[int], budget: float, threshold: float) -> int | None:
    """The second after which a perfect sink writing ``budget`` per second has at most ``threshold`` left."""
    backlog, last_over = 0.0, None
    for s, n in enumerate(produced, 1):
        backlog = max(0.0, backlog + n - budget)
        if backlog > threshold:
            last_over = s
    return None if last_over is None else last_over + 1


def incident(stack: Settings, inc: Incident, bulks_in_flight: int | None = None,
             nice: int = Producing.nice) -> dict[str, Any]:
    """One incident-shaped burst through the hot sink: the busiest second against the budget, and the time
    from the incident's start until the backlog is gone against a perfect sink's (``fluid_clear``)."""
    capacity, budget, pre = BURST_CAPACITY, BURST_BUDGET, 5.0
    base_rate = 0.1 * budget
    project = f"bench-{inc.name.replace('_', '-')}-{uuid.uuid4().hex[:4]}"
    events = list(corpus_events([CORPUS / f for f in inc.files], "bench", include_metrics=False))

    def rate(t: float) -> float:
        return budget * inc.shape(t - pre) if t >= pre else base_rate

    surplus = sum(max(0.0, rate(pre + i / 10) - budget) / 10 for i in range(int(inc.length_s * 10)))
    duration = pre + inc.length_s + surplus / (budget - base_rate) + 20
    trace = paced_run(stack, events, [Load(project, rate)], duration, capacity, drain_until_empty=False,
                      max_s=duration + 60, bulks_in_flight=bulks_in_flight, producing=Producing(nice))
    produced, lag = trace.produced[project], trace.lag
    theory = fluid_clear(produced, budget, base_rate)
    over = [s for s, n in zip(trace.seconds, lag, strict=True) if n > base_rate]
    cleared = over[-1] + 1 if over and over[-1] < trace.seconds[-1] else None
    start = int(pre)
    return {"incident": inc, "trace": trace, "project": project, "budget": budget, "base_rate": base_rate,
            "events": len(events), "peak_input": max(produced), **ack_peaks(trace, project, budget),
            "clear_s": None if cleared is None else cleared - start,
            "theory_clear_s": None if theory is None else theory - start}


def warm_indices(stack: Settings, events: list[dict[str, Any]], projects: list[str]) -> int:
    """Create every index the run will write to, one document each (ids ``warm/...``, not measured)."""
    written = 0
    for project in projects:
        namer = IndexNamer(RoutingSettings(default_project=project, projects={project: ProjectRoute()}))
        first: dict[str, dict[str, Any]] = {}
        for v in copies(events, len(events), project):
            first.setdefault(encode(v, namer).index, {**v, "event_id": f"warm/{v['event_id']}"})
        asyncio.run(sink_only(stack, project, list(first.values())))
        written += len(first)
    return written


FAIRNESS_KINDS = ("live", "warm", "new")


def fairness(stack: Settings, events: list[dict[str, Any]], burst_s: float, kind: str,
             bulks_in_flight: int | None = None, nice: int = Producing.nice) -> dict[str, Any]:
    """``kind``: ``live``, every event stamped with its produce time (a running job's burst: today's
    indices, created beforehand); ``warm``, the corpus's own event times, every one of their daily indices
    created beforehand (40 days of them); ``new``,
    corpus times with the burst's first documents creating the noisy project's indices (Elasticsearch's
    master applies those cluster-state updates one at a time, the quiet project's own among them)."""
    capacity, budget, quiet_rate = BURST_CAPACITY, BURST_BUDGET, 20.0
    noisy, quiet = f"bench-noisy-{uuid.uuid4().hex[:6]}", f"bench-quiet-{uuid.uuid4().hex[:6]}"
    pre = 6.0  # the quiet project alone first: its own latency without competition
    loads = [Load(noisy, lambda t: 10 * budget if pre <= t < pre + burst_s else 0.0),
             Load(quiet, lambda t: quiet_rate)]
    events = [v for v in events if not is_metric(v)]
    if kind == "live":  # today's indices, for the warm-up (the producer stamps each event as it sends it)
        events = [{**v, "timestamp": int(time.time() * 1000)} for v in events]
    warmed = warm_indices(stack, events, [noisy, quiet]) if kind != "new" else 0
    trace = paced_run(stack, events, loads, pre + burst_s + 5, capacity, drain_until_empty=False,
                      max_s=pre + burst_s + 10, bulks_in_flight=bulks_in_flight,
                      producing=Producing(nice, live_times=kind == "live"))
    lat = [lt for t, lt in trace.latency[quiet] if pre <= t <= pre + burst_s + 5]
    # The same project before the burst: what the pipeline costs without anyone competing. The
    # goal is on what the burst adds ("held back by no more than one window").
    calm = sorted(lt for t, lt in trace.latency[quiet] if 3.0 <= t < pre)  # after the runner has started

    def quantile(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

    def p(q: float) -> float:
        return quantile(lat, q)
    sent_quiet, acked_quiet = sum(trace.produced[quiet]), sum(trace.acked[quiet])
    return {"trace": trace, "quiet": quiet, "noisy": noisy, "window_s": HotSinkSettings().window_s, "n": len(lat),
            "quiet_sent": sent_quiet, "quiet_acked": acked_quiet, "kind": kind, "warmed_indices": warmed,
            "p50": p(0.50), "p99": p(0.99), "max": max(lat) if lat else 0.0, "pre": pre, "burst_s": burst_s,
            "nice": nice, "calm_n": len(calm), "calm_p99": quantile(calm, 0.99),
            "held_back_p99": p(0.99) - quantile(calm, 0.99)}


# -- report ---------------------------------------------------------------------------------------
def rate_plot(tr: Trace, project: str, title: str, name: str) -> None:
    """Input, indexed docs and budget per second (log scale), lag on the right axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    ax.plot(tr.seconds, tr.produced[project], label="input events/s", color="tab:gray")
    ax.plot(tr.seconds, tr.acked[project], label="indexed docs/s (sink acks)", color="tab:blue")
    ax.plot(tr.seconds, tr.budget, "--", label="budget/s", color="tab:red")
    ax.plot(tr.seconds, [b * 1.05 for b in tr.budget], ":", label="budget +5%", color="tab:red")
    ax.set_yscale("symlog", linthresh=500)
    ax.set_xlabel("second")
    ax.set_ylabel("events per second")
    ax2 = ax.twinx()
    ax2.plot(tr.seconds, tr.lag, label="lag (records)", color="tab:orange")
    ax2.set_ylabel("lag")
    ax.legend(loc="upper left")
    ax2.legend(loc="upper right")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(OUT / name, dpi=100)
    plt.close(fig)


def plots(sm: dict[str, Any] | None, fas: list[dict[str, Any]], tp: dict[str, Any] | None,
          incs: list[dict[str, Any]]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    if sm:
        title = f"burst at 10x budget for {sm['burst_s']:.0f} s (budget {sm['budget']}/s)"
        rate_plot(sm["trace"], sm["project"], title, "hot_sink_smoothing.png")
        files.append("hot_sink_smoothing.png")
    for inc in incs:
        name = f"hot_sink_incident_{inc['incident'].name}.png"
        rate_plot(inc["trace"], inc["project"], f"{inc['incident'].name} (budget {inc['budget']}/s)", name)
        files.append(name)
    if fas:
        fig, axes = plt.subplots(len(fas), 1, figsize=(10, 3.5 * len(fas)), sharex=True, squeeze=False)
        for ax, fa in zip(axes[:, 0], fas, strict=True):
            pts = fa["trace"].latency[fa["quiet"]]
            ax.scatter([t for t, _ in pts], [lt for _, lt in pts], s=4, label="quiet project: produce -> indexed")
            ax.axhline(fa["window_s"], color="tab:red", linestyle="--", label="one window")
            ax.axvspan(fa["pre"], fa["pre"] + fa["burst_s"], alpha=0.15, color="tab:orange",
                       label="other project bursts")
            ax.set_title(fairness_title(fa), fontsize=10)
            ax.set_ylabel("latency (s)")
            ax.legend(loc="upper right")
        axes[-1, 0].set_xlabel("second")
        fig.tight_layout()
        fig.savefig(OUT / "hot_sink_fairness.png", dpi=100)
        files.append("hot_sink_fairness.png")
        plt.close(fig)
    if tp:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.bar(["raw async_bulk", "HotSink", "Kafka -> worker"],
               [statistics.median(tp["raw"]), statistics.median(tp["sink"]), tp["e2e"]])
        ax.set_ylabel("docs/s")
        fig.tight_layout()
        fig.savefig(OUT / "hot_sink_throughput.png", dpi=100)
        files.append("hot_sink_throughput.png")
        plt.close(fig)
    return files


def fairness_title(fa: dict[str, Any]) -> str:
    """Each starts with the label ``python -m devtools bench`` reads back (streams/cli/bench.py, ``held_back``)."""
    if fa["kind"] == "live":
        return (f"live: events stamped as they are produced (a running job's burst), today's "
                f"{fa['warmed_indices']} indices of both projects exist")
    if fa["kind"] == "warm":
        return f"steady state: corpus event times, the {fa['warmed_indices']} daily indices of both projects exist"
    return "new indices: corpus event times, the burst's first documents create the noisy project's indices"


def report(tp: dict[str, Any] | None, sm: dict[str, Any] | None, fas: list[dict[str, Any]], cmd: str,
           incs: list[dict[str, Any]] | None = None) -> str:
    lines = ["# Hot sink benchmark", "", f"`{cmd}` on the shared local stack (Elasticsearch 9.5 integ-test-zip, "
             "512 MB heap; Kafka 4.1; 2 cores). Documents are real corpus events (parse_files), ~1 kB each.", ""]
    if tp:
        lines += ["## (i) Throughput against the raw bulk helper", "",
                  f"{tp['n']:,} documents per run, rounds alternating raw / sink on fresh indices.", "",
                  "| | docs/s (each round) | median |", "|---|---|---|",
                  f"| `helpers.async_bulk`, pre-serialised, chunks of 1,000 | "
                  f"{', '.join(f'{r:,.0f}' for r in tp['raw'])} | {statistics.median(tp['raw']):,.0f} |",
                  f"| HotSink (decoded events in: build, serialise, bulk, classify) | "
                  f"{', '.join(f'{r:,.0f}' for r in tp['sink'])} | {statistics.median(tp['sink']):,.0f} |",
                  f"| Kafka -> SinkRunner -> HotSink (Avro decode, admission, commits) | {tp['e2e']:,.0f} | |",
                  "", f"**Ratio sink / raw: {tp['ratio']:.2f}** (goal >= 0.8)", ""]
    if sm:
        lines += ["## (ii) Smoothing a burst", "",
                  f"Declared capacity 500 events/s, budget {sm['budget']}/s (80%), "
                  f"window {HotSinkSettings().window_s:g} s. Input: "
                  f"{sm['base_rate']:.0f}/s baseline, {sm['burst_rate']:.0f}/s (10x budget) for {sm['burst_s']:.0f} s"
                  + (" (the design's burst is 60 s: `--burst-s 60` drains for about 10 minutes)."
                     if sm["burst_s"] < 60 else "."), "",
                  f"- max indexed docs in one wall-clock second: {sm['max_per_second']} = "
                  f"**{sm['max_ratio']:.3f} x budget** (goal <= 1.05)",
                  f"- max docs acknowledged in any sliding 1 s interval: {sm['sliding_max']} = "
                  f"{sm['sliding_max'] / sm['budget']:.3f} x budget",
                  f"- backlog at the end of the burst: {sm['backlog']:,} records",
                  f"- drain time: {sm['drain_s']} s; backlog / (budget - baseline) = "
                  f"{sm['predicted_drain_s']:.0f} s",
                  f"- throttled flushes: {sm['trace'].throttled}", "",
                  "![smoothing](hot_sink_smoothing.png)", ""]
    if fas:
        lines += ["## (iii) A quiet project beside a bursting one", "",
                  "Budget 400/s shared max-min fair; the noisy project bursts at 4,000/s for "
                  f"{fas[0]['burst_s']:.0f} s, "
                  "the quiet one sends 20/s throughout. Latency = Elasticsearch ack time - produce time. Up to three "
                  "runs: events stamped live (a running job's burst goes to today's indices), the corpus's own "
                  "event times (40 days of daily indices) with every index already there, and with the burst "
                  "creating the noisy project's indices (cluster-state updates that Elasticsearch's master applies "
                  "one after the other, the quiet project's own among them). The producer runs at nice "
                  f"{fas[0]['nice']} (it stands in for agents on other machines).", ""]
        for fa in fas:
            lines += [f"**{fairness_title(fa)}**", "",
                      f"- quiet project during the burst: n={fa['n']}, p50 {fa['p50']:.3f} s, "
                      f"**p99 {fa['p99']:.3f} s**, max {fa['max']:.3f} s; window {fa['window_s']:.1f} s",
                      f"- the same project before the burst (t = 3 s to {fa['pre']:.0f} s): n={fa['calm_n']}, "
                      f"p99 {fa['calm_p99']:.3f} s; held back by the burst at p99: **{fa['held_back_p99']:.3f} s** "
                      f"({fa['held_back_p99'] / fa['window_s']:.1f} windows)",
                      f"- quiet records acknowledged by the end of the run: {fa['quiet_acked']} of {fa['quiet_sent']} "
                      "(the rest had no latency yet: the percentiles above leave them out, so they understate)", ""]
        lines += ["![fairness](hot_sink_fairness.png)", ""]
    if incs:
        lines += ["## (iv) Bursts shaped like training incidents", "",
                  f"Budget {incs[0]['budget']}/s, baseline {incs[0]['base_rate']:.0f}/s before and after; the "
                  "documents are the events of corpus files that logged such an incident. *Cleared*: seconds from the "
                  "incident's start until the lag is back at the baseline's one second; *a perfect sink*: the same "
                  "for a sink that writes exactly the budget every second from the same input (`fluid_clear`).", "",
                  "| incident | input peak/s | max indexed in one second / budget | sliding 1 s max / budget | "
                  "cleared | a perfect sink | ratio |", "|---|---|---|---|---|---|---|"]
        for inc in incs:
            ratio = (inc["clear_s"] / inc["theory_clear_s"]) if inc["clear_s"] and inc["theory_clear_s"] else None
            lines.append(f"| {inc['incident'].name} | {inc['peak_input']:,} | **{inc['max_ratio']:.3f}** | "
                         f"{inc['sliding_max'] / inc['budget']:.3f} | {inc['clear_s']} s | {inc['theory_clear_s']} s | "
                         f"**{'n/a' if ratio is None else f'{ratio:.2f}'}** |")
        lines.append("")
        for inc in incs:
            lines += [f"- **{inc['incident'].name}**: {inc['incident'].what}; {inc['events']} corpus events from "
                      f"{', '.join(inc['incident'].files)}; {inc['trace'].throttled} throttled flushes",
                      "", f"![{inc['incident'].name}](hot_sink_incident_{inc['incident'].name}.png)", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--burst-s", type=float, default=20.0)
    ap.add_argument("--docs", type=int, default=30_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip", default="")
    ap.add_argument("--fairness", default=",".join(FAIRNESS_KINDS),
                    help="which fairness runs: live (events stamped as produced), warm (corpus times, indices "
                         "exist), new (corpus times, the burst creates indices)")
    ap.add_argument("--producer-nice", type=int, default=Producing.nice,
                    help="CPU priority of the paced producer (it stands in for agents on other machines)")
    ap.add_argument("--bulks-in-flight", type=int, default=None, help="hot.bulks_in_flight for (ii) to (iv)")
    ap.add_argument("--incidents", default=",".join(i.name for i in INCIDENTS),
                    help="which incident-shaped bursts (iv) to run")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    stack = load_settings()
    OUT.mkdir(exist_ok=True)
    events = base_events()
    print(f"{len(events)} corpus events")
    tp = sm = None
    fas: list[dict[str, Any]] = []
    if "throughput" not in skip:
        print("(i) throughput")
        tp = throughput(stack, events, args.docs, args.rounds)
    if "smoothing" not in skip:
        print("(ii) smoothing")
        sm = smoothing(stack, events, args.burst_s, args.bulks_in_flight, args.producer_nice)
    if "fairness" not in skip:
        print("(iii) fairness")
        fas = [fairness(stack, events, args.burst_s, kind, args.bulks_in_flight, args.producer_nice)
               for kind in FAIRNESS_KINDS if kind in args.fairness.split(",")]
    incs: list[dict[str, Any]] = []
    if "incidents" not in skip:
        print("(iv) incidents")
        incs = [incident(stack, inc, args.bulks_in_flight, args.producer_nice)
                for inc in INCIDENTS if inc.name in args.incidents.split(",")]
    plots(sm, fas, tp, incs)
    runs = (("smoothing", sm), *((f"fairness-{f['kind']}", f) for f in fas),
            *((f"incident-{i['incident'].name}", i) for i in incs))
    dump = {name: {"seconds": r["trace"].seconds, "produced": r["trace"].produced, "acked": r["trace"].acked,
                   "budget": r["trace"].budget, "lag": r["trace"].lag} for name, r in runs if r}
    (OUT / "hot_sink_trace.json").write_text(json.dumps(dump))
    cmd = "python tests/perf/hot_sink_bench.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v not in ("", None))
    text = report(tp, sm, fas, cmd, incs)
    (OUT / "hot_sink.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
