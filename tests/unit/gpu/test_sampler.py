"""The sampling loop over a recorded 8-GPU node, a fake producer and a fake clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastavro.validation
import pytest

from devtools.testing.gpu import RecordedNvml, fake_proc
from streams.contracts import parsed_schema
from streams.gpu.attribution import KnownSource, ProcCgroups
from streams.gpu.nvml import NvmlReader
from streams.gpu.reading import GpuReadError, GpuReading
from streams.gpu.sampler import GpuSampler, PointDelivery
from streams.gpu.settings import GpuSettings
from streams.ship.sender import SendError

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeSender:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes, dict[str, Any], PointDelivery]] = []
        self.refuse = False

    def send(self, key: bytes, value: dict[str, Any], on_delivery: PointDelivery) -> None:
        if self.refuse:
            raise SendError("registry unreachable")
        self.sent.append((key, value, on_delivery))

    def poll(self, timeout_s: float) -> None:
        pass

    def flush(self, timeout_s: float) -> int:
        return 0


def sampler(nvml: RecordedNvml, clock: Clock, sender: FakeSender, tmp_path: Path, **conf: Any) -> GpuSampler:
    files = [KnownSource("/var/log/train/llm/run-7/rank0.log", {"host": "gpu-node-1"},
                         {"project": "llm", "task_id": "run-7", "node_role": "trainer"}, T0)]
    proc = fake_proc(tmp_path / "proc", {11327: "host-process.txt", 11328: "host-process.txt",
                                         11345: "host-process.txt"})
    s = GpuSampler(NvmlReader(nvml), sender, GpuSettings(**conf), host="gpu-node-1",
                   node_labels={"project": "llm", "node_role": "trainer"}, known_sources=lambda: files,
                   cgroups=ProcCgroups(proc), send_interval_s=30.0, phase_ms=7_000, clock=clock)
    s.start()
    return s


def run_for(s: GpuSampler, clock: Clock, seconds: float, step: float = 1.0) -> None:
    end = clock.now + seconds
    while clock.now < end:
        s.tick()
        clock.now += step


def test_eight_gpus_are_sampled_on_the_grid_and_sent_on_the_nodes_schedule(tmp_path: Path) -> None:
    nvml, clock, sender = RecordedNvml(count=8), Clock(T0 + 3.5), FakeSender()
    nvml.set_state(5, "idle")
    s = sampler(nvml, clock, sender, tmp_path)
    run_for(s, clock, 30.0)  # T0+3.5 .. T0+33.5: samples at +10, +20, +30; the send instant is +7 then +37
    assert s.stats.samples == 3 and len(s.pending) == 3 * 8 and not sender.sent
    run_for(s, clock, 5.0)
    assert not s.pending and len(sender.sent) == 24
    times = sorted({v["timestamp"] for _k, v, _cb in sender.sent})
    assert times == [int((T0 + n) * 1000) for n in (10, 20, 30)]
    schema = parsed_schema("metric_point")
    for key, point, _ in sender.sent:
        assert fastavro.validation.validate(point, schema)
        assert key == f"gpu-node-1/gpu{point['gpu']['index']}".encode()
    busy = next(v for _k, v, _cb in sender.sent if v["gpu"]["index"] == 0)
    assert busy["metrics"]["gpu_utilization_pct"] == 100.0 and busy["metrics"]["gpu_memory_total_mb"] == 81559.0
    assert (busy["task_id"], busy["gpu"]["attribution"], busy["source"]["node_role"]) == ("run-7", "only_task",
                                                                                          "trainer")
    free = next(v for _k, v, _cb in sender.sent if v["gpu"]["index"] == 5)
    assert free["task_id"] is None and free["gpu"]["throttle_reasons"] == ["gpu_idle"]
    assert len({v["event_id"] for _k, v, _cb in sender.sent}) == 24


def test_a_sample_sent_twice_keeps_its_event_id(tmp_path: Path) -> None:
    clock, sender = Clock(T0), FakeSender()
    s = sampler(RecordedNvml(count=1), clock, sender, tmp_path)
    (first,) = s.sample(T0 + 10)
    s2 = sampler(RecordedNvml(count=1), Clock(T0), FakeSender(), tmp_path)
    (again,) = s2.sample(T0 + 10)
    assert first["event_id"] == again["event_id"]


def test_undelivered_samples_are_sent_again_and_the_backlog_is_bounded(tmp_path: Path) -> None:
    clock, sender = Clock(T0 + 1), FakeSender()
    s = sampler(RecordedNvml(count=2), clock, sender, tmp_path, max_pending_points=10)
    run_for(s, clock, 37.0)  # samples at +10, +20, +30 go at the send instant +37
    sent = list(sender.sent)
    assert len(sent) == 6
    sent[0][2](SendError("delivery to logs.metrics failed: timed out"))
    for _k, _v, callback in sent[1:]:
        callback(None)
    assert s.stats.acked == 5 and s.stats.delivery_failures == 1 and len(s.pending) == 1
    sender.refuse = True
    run_for(s, clock, 120.0)
    assert len(s.pending) == 10 and s.stats.dropped == 2 * 12 + 1 - 10
    sender.refuse = False
    run_for(s, clock, 31.0)
    assert not s.pending


def test_a_failed_read_skips_the_sample_and_the_loop_goes_on(tmp_path: Path) -> None:
    class Flaky(NvmlReader):
        fail = True

        def read(self) -> list[GpuReading]:
            if self.fail:
                self.fail = False
                raise GpuReadError("NVML: GPU is lost")
            return super().read()

    clock, sender = Clock(T0 + 1), FakeSender()
    s = sampler(RecordedNvml(count=1), clock, sender, tmp_path)
    s.reader = Flaky(RecordedNvml(count=1))
    run_for(s, clock, 20.0)
    assert s.stats.read_failures == 1 and s.stats.samples == 1


@pytest.mark.parametrize("interval", [1.0, 10.0, 60.0])
def test_tick_waits_until_the_next_sample_or_send(tmp_path: Path, interval: float) -> None:
    clock, sender = Clock(T0 + 0.25), FakeSender()
    s = sampler(RecordedNvml(count=1), clock, sender, tmp_path, interval_s=interval)
    wait = s.tick()
    assert 0 < wait <= min(interval, 7.0)
