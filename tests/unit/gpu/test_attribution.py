"""pid -> cgroup -> container -> the task's labels, on recorded /proc/<pid>/cgroup files."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.testing.gpu import FIXTURES, fake_proc
from streams.gpu.attribution import KnownSource, ProcCgroups, attribute, container_of
from streams.gpu.reading import GpuReading, PodRef

CONTAINERD = "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459"


@pytest.mark.parametrize(("name", "container", "pod"), [
    ("containerd-systemd-v1.txt", CONTAINERD, "0125ec2f-b64a-4868-8f5b-94b56cbab864"),
    ("containerd-name-systemd-v1.txt", "0f99ad5f45163ed14ab8eaf92ed34bb4a631d007f8755a7d79be614bcb0df0ef",
     "ff49d0be-16b7-4a49-bb9e-8ec1f1f4e27f"),
    ("crio-systemd-v1.txt", "5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c",
     "a5c1f8d5-1919-434d-add7-4afaafdaef89"),
    ("docker-systemd-v1.txt", "d0b3604b67ac7930dd34ba3a796627e3e4717d12309e90a4afe3f38b6816ac98",
     "7d4424e6-bb13-42f4-a47a-45a4828bf54d"),
    ("containerd-systemd-v2.txt", "a09bc17f5aa29b0dbdec9ede5f46cf1396d2405917ab02e6f1eb1019f388396e",
     "1e597579-417e-482f-bf65-5fe170c3aebd"),
    ("containerd-cgroupfs-v2.txt", "823b5a6d9aaa8da5c0ecda3e7cbcd6729673437965dc600ffcb0a2651960f945",
     "89f4f2cb511c3b0b7e5272cff5ec37bf"),
])
def test_every_runtime_and_cgroup_layout_names_its_container(name: str, container: str, pod: str) -> None:
    ref = container_of((FIXTURES / "cgroup" / name).read_text())
    assert ref is not None and (ref.container_id, ref.pod_uid) == (container, pod)


def test_a_host_process_has_no_container() -> None:
    assert container_of((FIXTURES / "cgroup" / "host-process.txt").read_text()) is None


def known(path: str, task: str | None, grew: float = 1000.0, **source: str) -> KnownSource:
    labels = {"project": "llm"} | ({"task_id": task} if task else {})
    return KnownSource(path, {"host": "n1", **source}, labels, grew)


BUSY = GpuReading(index=0, pids=(11345,), memory_used_mb=19818.0)
LIMITS = {"node_labels": {"project": "llm"}, "active_s": 600.0, "in_use_memory_mb": 1024.0,
          "assume_node_task": True}


def refs_for(tmp_path: Path, name: str) -> list:
    proc = fake_proc(tmp_path / "proc", {11345: name})
    return [r for r in ProcCgroups(proc).refs({11345}).values() if r]


def test_the_container_log_of_the_gpu_process_gives_its_task(tmp_path: Path) -> None:
    files = [known(f"/var/log/containers/trainer-0_ml_pytorch-{CONTAINERD}.log", "run-7", pod="trainer-0",
                   namespace="ml", container="pytorch"),
             known("/var/log/containers/other_ml_sidecar-" + "a" * 64 + ".log", "run-8")]
    who = attribute(BUSY, refs_for(tmp_path, "containerd-systemd-v1.txt"), files, 1000.0, **LIMITS)
    assert (who.how, who.labels["task_id"], who.source["pod"]) == ("container", "run-7", "trainer-0")


def test_the_pod_log_directory_gives_the_task_by_pod_uid(tmp_path: Path) -> None:
    files = [known("/var/log/pods/ml_trainer-0_0125ec2f-b64a-4868-8f5b-94b56cbab864/pytorch/0.log", "run-7")]
    who = attribute(BUSY, refs_for(tmp_path, "containerd-systemd-v1.txt"), files, 1000.0, **LIMITS)
    assert (who.how, who.labels["task_id"]) == ("pod", "run-7")


def test_the_only_task_on_the_node_holds_a_gpu_that_cannot_be_traced(tmp_path: Path) -> None:
    files = [known("/var/log/train/llm/run-7/rank0.log", "run-7"), known("/var/log/train/llm/run-7/rank1.log", "run-7"),
             known("/var/log/train/llm/run-1/rank0.log", "run-1", grew=0.0)]  # finished long ago
    who = attribute(BUSY, refs_for(tmp_path, "host-process.txt"), files, 1000.0, **LIMITS)
    assert (who.how, who.labels["task_id"]) == ("only_task", "run-7")
    two = [*files, known("/var/log/train/llm/run-9/rank0.log", "run-9")]
    assert attribute(BUSY, [], two, 1000.0, **LIMITS).how is None
    assert attribute(BUSY, [], files, 1000.0, **{**LIMITS, "assume_node_task": False}).how is None


def test_a_free_gpu_is_given_no_task() -> None:
    free = GpuReading(index=1, memory_used_mb=2.0)
    assert attribute(free, [], [known("/var/log/train/llm/run-7/rank0.log", "run-7")], 1000.0, **LIMITS).how is None


def test_the_exporters_pod_label_finds_the_pods_files() -> None:
    reading = GpuReading(index=2, pod=PodRef("dynamo-workload", "vllm-agg-0-vllmdecodeworker-dkb9q", "main"))
    files = [known("/var/log/containers/x.log", "serve-1", pod="vllm-agg-0-vllmdecodeworker-dkb9q",
                   namespace="dynamo-workload"), known("/var/log/containers/y.log", "serve-2", pod="other")]
    who = attribute(reading, [], files, 1000.0, **LIMITS)
    assert (who.how, who.labels["task_id"]) == ("pod", "serve-1")


def test_a_shipper_started_for_one_job_gives_its_gpus_that_job() -> None:
    who = attribute(BUSY, [], [], 1000.0, **{**LIMITS, "node_labels": {"project": "llm", "task_id": "run-3"}})
    assert who.how == "labels"


def test_cgroups_are_read_once_per_process_and_forgotten_with_it(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path / "proc", {1: "crio-systemd-v1.txt", 2: "host-process.txt"})
    cgroups = ProcCgroups(proc)
    assert cgroups.refs({1, 2, 3})[3] is None  # gone, or in another pid namespace
    (proc / "1" / "cgroup").write_text("")
    assert cgroups.refs({1})[1] is not None, "cached while the pid is seen"
    assert cgroups.refs(set()) == {}
    assert cgroups.refs({1})[1] is None, "read again once it was gone"
