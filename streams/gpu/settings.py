"""Settings of the GPU sampler: ``ship.gpu`` (``SLUICE_SHIP__GPU__<FIELD>``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from streams.config_base import Section


class GpuSettings(Section):
    """The GPU sampler of `sluice ship`: one metric point per GPU and interval to logs.metrics."""

    enabled: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="auto: sample where NVML finds a GPU (or dcgm_url is set), quietly do nothing elsewhere; on: a "
                    "node without a readable GPU is an error; off: never sample.")
    interval_s: float = Field(
        default=10.0, ge=1.0,
        description="Seconds between samples. 10 s gives the 5-minute idle window 30 samples; NVML's own "
                    "utilisation figure is an average over its last sample period (1/6 s to 1 s), not over this.")
    dcgm_url: str | None = Field(
        default=None,
        description="Scrape this DCGM exporter endpoint instead of calling NVML (the exporter already holds "
                    "the devices and, in Kubernetes mode, labels each GPU with its pod); unset: NVML.",
        examples=["http://localhost:9400/metrics"])
    dcgm_timeout_s: float = Field(default=2.0, gt=0, description="Timeout of one scrape of dcgm_url.")
    proc_root: Path = Field(
        default=Path("/proc"),
        description="Where the node's processes are seen (/proc with hostPID): /proc/<pid>/cgroup names a GPU "
                    "process's container.")
    in_use_memory_mb: float = Field(
        default=1024.0, ge=0,
        description="A GPU with no process listed counts as in use (so attributable to a task) above this much "
                    "memory in use; a bare CUDA context takes a few hundred MiB.")
    assume_node_task: bool = Field(
        default=True,
        description="A GPU in use whose process cannot be traced to a container belongs to the node's task, when "
                    "exactly one task's files grew within node_task_active_s (one job per node).")
    node_task_active_s: float = Field(
        default=600.0, gt=0, description="How recently a task's files must have grown for it to be the node's task.")
    max_pending_points: int = Field(
        default=10_000, ge=10,
        description="Samples held while Kafka is unreachable; past it the oldest are dropped (counted and logged). "
                    "8 GPUs every 10 s fill 10,000 in about 3.5 hours.")
    topic: str | None = Field(default=None, description="Kafka topic of the samples; unset: topics.metrics.")
