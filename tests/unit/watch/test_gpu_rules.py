"""The GPU rules over samples the sampler made from recorded devices: idle (per GPU, per task, while the
task runs; one alert and one clear per incident), XID and ECC errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import MIN, T0

from devtools.testing.gpu import RecordedNvml, recorded_xids
from devtools.testing.watch import MemoryWatchStore
from streams.gpu.attribution import KnownSource
from streams.gpu.nvml import NvmlReader
from streams.gpu.sampler import GpuSampler
from streams.gpu.settings import GpuSettings
from streams.watch import WatchEngine, WatchSettings
from streams.watch.observation import from_record

SEC = 1000


class Node:
    """A recorded node whose sampler the test steps; the task's log lines are arranged separately."""

    def __init__(self, gpus: int = 2, task: str = "run-7", shipper_of_the_job: bool = False) -> None:
        self.nvml = RecordedNvml(count=gpus)
        self.now = T0 / 1000
        self.file_grew: float | None = None  # None: the task's file grows as the samples are taken

        def files() -> list[KnownSource]:
            grew = self.now if self.file_grew is None else self.file_grew
            return [KnownSource(f"/var/log/train/llm/{task}/rank0.log", {"host": "n1"},
                                {"project": "llm", "task_id": task}, grew)]

        # A shipper run for one job names the task in its own labels; a node's shipper tells it from files.
        labels = {"project": "llm", "task_id": task} if shipper_of_the_job else {"project": "llm"}
        self.sampler = GpuSampler(NvmlReader(self.nvml), None, GpuSettings(), host="n1",  # type: ignore[arg-type]
                                  node_labels=labels, known_sources=files, cgroups=None,
                                  send_interval_s=30, phase_ms=0)

    def samples(self, start_ms: int, end_ms: int, every_ms: int = 10 * SEC) -> list[dict[str, Any]]:
        out = []
        for t in range(start_ms, end_ms, every_ms):
            self.now = t / 1000
            out += self.sampler.sample(t / 1000)
        return out


def line(task: str, ts_ms: int, n: int) -> dict[str, Any]:
    return {"event_id": f"{task}/{n}", "timestamp": ts_ms, "project": "llm", "task_id": task, "message": "data batch",
            "source": {"host": "n1", "rank": 0}, "labels": {}}


def lines(task: str, start_ms: int, end_ms: int, every_ms: int = 30 * SEC) -> list[dict[str, Any]]:
    return [line(task, t, t) for t in range(start_ms, end_ms, every_ms)]


class Run:
    def __init__(self, conf: WatchSettings | None = None) -> None:
        self.conf = conf or WatchSettings()
        self.engine, self.store = WatchEngine(self.conf), MemoryWatchStore(self.conf)
        self.alerts: list[dict[str, Any]] = []

    def feed(self, records: list[dict[str, Any]]) -> None:
        for record in sorted(records, key=lambda r: r["timestamp"]):
            self.alerts += [c.alert for c in self.engine.observe(from_record(record), self.store) if c.new]

    def of(self, rule: str, status: str | None = None) -> list[dict[str, Any]]:
        return [a for a in self.alerts if a["rule"] == rule and (status is None or a["status"] == status)]


def test_a_six_minute_idle_stretch_of_one_gpu_is_one_alert_and_one_clear() -> None:
    node, run = Node(), Run()
    run.feed(node.samples(T0, T0 + 10 * MIN) + lines("run-7", T0, T0 + 30 * MIN))
    node.nvml.set_state(1, "idle")
    node.nvml.set_processes(1, ((11345, 16_452_157_440),))  # arranged: the job still holds the idle GPU
    run.feed(node.samples(T0 + 10 * MIN, T0 + 16 * MIN))
    node.nvml.set_state(1, "load")
    node.nvml.set_processes(1, None)
    run.feed(node.samples(T0 + 16 * MIN, T0 + 25 * MIN))
    [fired] = run.of("gpu_idle", "firing")
    [cleared] = run.of("gpu_idle", "resolved")
    assert fired["alert_id"] == cleared["alert_id"] and fired["task_id"] == "run-7"
    assert fired["details"]["window_start"] == str(T0 + 10 * MIN) and fired["details"]["avg_pct"] == "0.00"
    assert "n1 GPU 1" in fired["summary"] and cleared["resolved_at"] >= T0 + 16 * MIN
    assert cleared["summary"].startswith("[resolved] gpu_idle in run-7")
    assert len(run.alerts) == 2


def test_the_gpus_of_a_task_that_stopped_logging_are_free_not_idle() -> None:
    node, run = Node(shipper_of_the_job=True), Run()
    run.feed(lines("run-7", T0 - 60 * MIN, T0 - 40 * MIN))  # the job's last line, 40 minutes before
    node.file_grew = (T0 - 40 * MIN) / 1000
    node.nvml.set_state(1, "idle")
    node.nvml.set_processes(1, ((11345, 1 << 30),))
    run.feed(node.samples(T0, T0 + 12 * MIN))
    assert run.of("gpu_idle") == []
    run.feed(lines("run-7", T0 + 12 * MIN, T0 + 13 * MIN) + node.samples(T0 + 12 * MIN, T0 + 15 * MIN))
    assert len(run.of("gpu_idle", "firing")) == 1, "it logs again: its idle GPU is an incident"


def test_samples_that_reach_the_watch_before_the_tasks_lines_still_count() -> None:
    """Lines and samples come through different topics: a lagging events topic must not hide an idle GPU."""
    node, run = Node(), Run()
    node.nvml.set_state(1, "idle")
    node.nvml.set_processes(1, ((11345, 1 << 30),))
    samples = node.samples(T0, T0 + 10 * MIN)
    assert {s["gpu"]["task_log_ms"] for s in samples if s["gpu"]["index"] == 1} >= {T0 + 9 * MIN}
    run.feed(samples)  # no line of the task has reached the watch yet
    assert len(run.of("gpu_idle", "firing")) == 1
    run.feed(lines("run-7", T0, T0 + 10 * MIN))
    assert len(run.alerts) == 1


def test_several_idle_gpus_of_a_task_are_one_incident_cleared_by_the_last_one() -> None:
    node, run = Node(gpus=3), Run()
    run.feed(lines("run-7", T0, T0 + 40 * MIN))
    for gpu in (0, 2):
        node.nvml.set_state(gpu, "idle")
        node.nvml.set_processes(gpu, ((11345, 1 << 30),))
    run.feed(node.samples(T0, T0 + 8 * MIN))
    node.nvml.set_state(0, "load")
    run.feed(node.samples(T0 + 8 * MIN, T0 + 16 * MIN))
    assert len(run.of("gpu_idle", "firing")) == 1 and run.of("gpu_idle", "resolved") == []
    node.nvml.set_state(2, "load")
    run.feed(node.samples(T0 + 16 * MIN, T0 + 24 * MIN))
    [cleared] = run.of("gpu_idle", "resolved")
    assert cleared["count"] >= 2 and cleared["details"]["ranks"] == "n1"


def test_an_idle_gpu_that_holds_no_task_raises_nothing() -> None:
    node, run = Node(), Run()
    run.feed(lines("run-7", T0, T0 + 20 * MIN))
    node.nvml.set_state(1, "idle")  # as recorded: no process, no memory in use
    run.feed(node.samples(T0, T0 + 20 * MIN))
    assert run.alerts == []


@pytest.mark.parametrize(("xid", "severity"), [(79, "critical"), (48, "critical"), (13, "warning"), (45, "info")])
def test_a_sample_with_an_xid_raises_gpu_xid(xid: int, severity: str) -> None:
    node, run = Node(), Run()
    assert xid in {x for _bus, x, _ in recorded_xids()} | {79, 45}
    node.nvml.inject_xid(1, xid)
    run.feed(node.samples(T0, T0 + 30 * SEC))
    [alert] = run.of("gpu_xid")
    assert alert["severity"] == severity and alert["details"]["xid"] == str(xid) and "GPU 1" in alert["summary"]


def test_an_xid_storm_is_one_incident_per_task() -> None:
    node, run = Node(), Run()
    for n in range(4):
        node.nvml.inject_xid(n % 2, 13)
        run.feed(node.samples(T0 + n * 10 * SEC, T0 + (n + 1) * 10 * SEC))
    [alert] = run.of("gpu_xid")
    assert run.store.incidents["llm/run-7|gpu_xid"]["count"] == 4 and alert["count"] == 1


def test_uncorrected_ecc_errors_going_up_raise_gpu_ecc_once() -> None:
    node, run = Node(), Run()
    node.nvml.add_ecc(0, uncorrected=2)  # errors from before the watch saw the GPU: the baseline
    run.feed(node.samples(T0, T0 + 30 * SEC))
    assert run.of("gpu_ecc") == []
    node.nvml.add_ecc(0, uncorrected=1)
    node.nvml.inject_xid(0, 48)
    samples = node.samples(T0 + 30 * SEC, T0 + 60 * SEC)
    run.feed(samples + samples)  # redelivered
    [ecc] = run.of("gpu_ecc")
    assert ecc["severity"] == "critical" and ecc["details"]["added"] == "1" and ecc["details"]["gpu"] == "0"
    assert len(run.of("gpu_xid")) == 1


def test_gpu_samples_do_not_count_as_the_task_logging() -> None:
    node, run = Node(), Run()
    steps = [{**line("run-7", T0 + n * MIN, n), "step": n} for n in range(5)]
    run.feed(steps + node.samples(T0 + 5 * MIN, T0 + 40 * MIN))
    assert [a for a in run.alerts if a["rule"] == "training_stalled"] == []
    assert run.store.state["llm/run-7"]["line_ms"] == T0 + 4 * MIN


def test_samples_without_a_task_are_watched_per_node(tmp_path: Path) -> None:
    node, run = Node(), Run()
    node.nvml.inject_xid(1, 79)
    run.feed([s for s in node.samples(T0, T0 + 10 * SEC) if s["gpu"]["index"] == 1])
    [alert] = run.of("gpu_xid")
    assert alert["task_id"] is not None, "GPU 1 holds the recorded load processes, so the node's task"
