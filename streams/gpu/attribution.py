"""Which task holds a GPU: pid -> cgroup -> container -> the labels the shipper already has.

A GPU's compute processes come from the reader as host pids. ``/proc/<pid>/cgroup`` names the
process's container the way the runtime created it, whatever the cgroup driver and version:

- systemd driver: ``kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope`` (cgroup v2),
  ``...slice:cri-containerd:<id>`` (v1 via containerd's own path), ``crio-<id>.scope``, ``docker-<id>.scope``;
- cgroupfs driver: ``/kubepods/burstable/pod<uid>/<id>``.

The container id (64 hex digits) and the pod uid are then looked for in the paths of the files the
shipper tails: Kubernetes names container logs ``/var/log/containers/<pod>_<ns>_<container>-<id>.log``
and ``/var/log/pods/<ns>_<pod>_<uid>/<container>/N.log``, so the match gives that file's labels
(project, task_id, rank) and source. Rules, in order (a table, :data:`RULES`):

1. ``container``: a tailed file's path holds the process's container id;
2. ``pod``: a tailed file's path holds its pod uid, or (DCGM) its pod name is a tailed file's pod;
3. ``labels``: the shipper's own labels name a task (``sluice ship --label task_id=...`` run for one job);
4. ``only_task``: the GPU is in use and exactly one task has files that grew lately on this node
   (one training job per node, the usual case; its logs under /var/log/train/<project>/<task>/);
5. otherwise no task: the sample carries the node's own labels.

A GPU with no process and little memory in use is free; it is never given a task.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams.gpu.reading import GpuReading

_CONTAINER_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])")
_POD_UID = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})"
                      r"(?![0-9a-f])")


@dataclass(frozen=True, slots=True)
class ContainerRef:
    container_id: str | None
    pod_uid: str | None  # dashed form, as Kubernetes writes it in /var/log/pods


def container_of(cgroup_text: str) -> ContainerRef | None:
    """The container and pod of a process from its ``/proc/<pid>/cgroup``; None for a host process."""
    container = pod = None
    for line in cgroup_text.splitlines():
        path = line.split(":", 2)[-1]
        ids = _CONTAINER_ID.findall(path)
        if ids and container is None:
            container = ids[-1]
        uid = _POD_UID.search(path)
        if uid and pod is None:
            pod = uid.group(1).replace("_", "-")
    return ContainerRef(container, pod) if container or pod else None


@dataclass(frozen=True, slots=True)
class KnownSource:
    """A file the shipper tails: its path, Source and labels, and when it last grew (seconds)."""

    path: str
    source: dict[str, Any]
    labels: dict[str, str]
    last_growth_s: float


@dataclass(frozen=True, slots=True)
class Attribution:
    how: str | None  # container, pod, labels, only_task, or None
    labels: dict[str, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)  # namespace, pod, container, node_role, rank
    last_log_s: float | None = None  # when the task's files last grew: it still logs


NONE = Attribution(None)


def _task_of(known: KnownSource) -> tuple[str, str] | None:
    task = known.labels.get("task_id")
    return (known.labels.get("project") or "", task) if task else None


def by_container(refs: list[ContainerRef], reading: GpuReading, known: list[KnownSource]) -> KnownSource | None:
    ids = {r.container_id for r in refs if r.container_id}
    return next((k for k in known if any(i in k.path for i in ids)), None)


def by_pod(refs: list[ContainerRef], reading: GpuReading, known: list[KnownSource]) -> KnownSource | None:
    uids = {r.pod_uid for r in refs if r.pod_uid}
    uids |= {u.replace("-", "_") for u in uids}
    found = next((k for k in known if any(u in k.path for u in uids)), None)
    if found is None and reading.pod is not None:
        found = next((k for k in known if k.source.get("pod") == reading.pod.pod
                      and (reading.pod.namespace is None or k.source.get("namespace") == reading.pod.namespace)),
                     None)
    return found


RULES: tuple[tuple[str, Callable[[list[ContainerRef], GpuReading, list[KnownSource]], KnownSource | None]], ...] = (
    ("container", by_container),
    ("pod", by_pod),
)


def in_use(reading: GpuReading, in_use_memory_mb: float) -> bool:
    """Held by a workload: it has compute processes, a pod, or more memory in use than a bare context."""
    return bool(reading.pids) or reading.pod is not None or (reading.memory_used_mb or 0.0) >= in_use_memory_mb


def attribute(reading: GpuReading, refs: list[ContainerRef], known: list[KnownSource], now_s: float, *,
              node_labels: dict[str, str], active_s: float, in_use_memory_mb: float,
              assume_node_task: bool) -> Attribution:
    """Pure: the task of one GPU from its processes' containers and the node's tailed files."""
    if not in_use(reading, in_use_memory_mb):
        return NONE
    for how, rule in RULES:
        found = rule(refs, reading, known)
        if found is not None:
            return Attribution(how, dict(found.labels), _source_part(found.source, reading), found.last_growth_s)
    if node_labels.get("task_id"):
        grown = max((k.last_growth_s for k in known), default=None)
        return Attribution("labels", {}, _source_part({}, reading), grown)
    if assume_node_task:
        active = [k for k in known if now_s - k.last_growth_s <= active_s]
        tasks = {t for t in map(_task_of, active) if t}
        if len(tasks) == 1:
            chosen = next(k for k in active if _task_of(k) in tasks)
            labels = {k: v for k, v in chosen.labels.items() if k not in ("rank", "stream")}
            grown = max(k.last_growth_s for k in active if _task_of(k) in tasks)
            return Attribution("only_task", labels, _source_part({}, reading), grown)
    return Attribution(None, {}, _source_part({}, reading))


def _source_part(source: dict[str, Any], reading: GpuReading) -> dict[str, Any]:
    part = {k: source.get(k) for k in ("namespace", "pod", "container", "node_role", "rank")}
    if reading.pod is not None and not part["pod"]:
        part.update(namespace=reading.pod.namespace, pod=reading.pod.pod, container=reading.pod.container)
    return part


class ProcCgroups:
    """Reads ``<proc_root>/<pid>/cgroup``; remembers each pid's container while the pid is seen."""

    def __init__(self, proc_root: Path) -> None:
        self.proc_root = proc_root
        self._cache: dict[int, ContainerRef | None] = {}

    def refs(self, pids: Iterable[int]) -> dict[int, ContainerRef | None]:
        wanted = set(pids)
        for pid in wanted - self._cache.keys():
            try:
                text = (self.proc_root / str(pid) / "cgroup").read_text()
            except OSError:
                text = ""  # gone, or another pid namespace: the node-task rule may still tell
            self._cache[pid] = container_of(text)
        for gone in self._cache.keys() - wanted:
            del self._cache[gone]
        return {pid: self._cache[pid] for pid in wanted}
