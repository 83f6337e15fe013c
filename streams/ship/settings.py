"""Settings of the node shipper: the ``ship:`` section (``SLUICE_SHIP__<FIELD>``).

Examples::

    SLUICE_SHIP__PATHS='["/var/log/train/**/*.log"]'
    SLUICE_SHIP__LABELS__PROJECT=llama   SLUICE_SHIP__LABELS__TASK_ID=run-42
    SLUICE_SHIP__INTERVAL_S=0.5          SLUICE_SHIP__STAGGER_WINDOW_S=0
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from streams.config_base import Section
from streams.gpu.settings import GpuSettings

KiB = 1024
MiB = 1024 * KiB


class ShipSettings(Section):
    """The node-side shipper: tails log files and sends their lines to Kafka in batches (`sluice ship`)."""

    paths: list[str] = Field(
        default_factory=lambda: ["/var/log/train/**/*.log"],
        description="Globs of the files to tail; ** matches any depth. Rotated copies (x.log.1, x.log-2024...) "
                    "must not match: the shipper follows rotated files by identity, not by name.")
    exclude: list[str] = Field(default_factory=list, description="fnmatch patterns on the full path to leave out.")
    checkpoint_path: Path = Field(
        default=Path("/var/lib/sluice/ship/checkpoint.json"),
        description="The checkpoint (file identity, path, offset), on the node beside the logs it describes.")
    topic: str | None = Field(default=None, description="Kafka topic; unset: topics.raw.")

    node_name: str | None = Field(
        default=None,
        description="This node's name; unset: $NODE_NAME (the Kubernetes downward API), else the host name.")
    namespace: str | None = Field(default=None, description="The pod's namespace; unset: $POD_NAMESPACE.")
    pod: str | None = Field(default=None, description="The pod's name; unset: $POD_NAME.")
    container: str | None = Field(default=None, description="The container's name; unset: $CONTAINER_NAME.")
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels on every batch (project, task_id, node_role, rank, ...). Precedence, lowest first: the "
                    "downward-API labels file, these labels, then the named groups of path_pattern for each file.",
        examples=[{"project": "llama", "node_role": "trainer"}])
    podinfo_labels_path: Path = Field(
        default=Path("/etc/podinfo/labels"), description="The downward-API file of the pod's labels.")
    path_pattern: str | None = Field(
        default=None,
        description="A regex with named groups matched against each file's path: the per-file labels a DaemonSet "
                    "cannot get from its own pod.",
        examples=[r"/var/log/train/(?P<project>[^/]+)/(?P<task_id>[^/]+)/rank(?P<rank>\d+)\.log"])

    interval_s: float = Field(
        default=90.0, ge=0.05,
        description="Seconds between a node's scheduled sends. Every node sends once per interval at its own "
                    "phase, so that a cluster whose jobs all log at once (a checkpoint, a 9:00 start) reaches Kafka "
                    "spread over 90 s; the cost is up to this much delay. Interactive use and tests go sub-second.")
    stagger_window_s: float = Field(
        default=90.0, ge=0,
        description="Each node's send phase is blake2b(node name) mod this window; the nodes' sends spread over "
                    "min(window, interval_s). 0: no stagger (every node sends on the interval grid).")
    early_send_fraction: float = Field(
        default=0.5, gt=0, le=1,
        description="Full batches wait for the node's slot unless the bytes held in memory reach this fraction "
                    "of max_buffer_bytes, or the bytes waiting reach this fraction of max_waiting_bytes: then "
                    "they go at once, so that memory stays bounded and a sustained burst is not throttled to "
                    "max_buffer_bytes per interval.")
    max_batch_lines: int = Field(
        default=5000, ge=1,
        description="Lines per record at most. Big records keep per-record costs downstream small; with "
                    "max_batch_bytes they stay under the broker's 1 MB message.max.bytes.")
    max_batch_bytes: int = Field(default=512 * KiB, ge=1 * KiB, description="Bytes per record at most.")
    max_line_bytes: int = Field(
        default=256 * KiB, ge=1,
        description="Longer lines are cut into pieces, each with its own offset, so that one runaway line cannot "
                    "exceed a batch or the memory cap.")
    max_buffer_bytes: int = Field(
        default=16 * MiB, ge=4 * KiB,
        description="The memory cap: file bytes read and not yet acknowledged by Kafka. At the cap the shipper stops "
                    "reading and the files are the buffer. 16 MiB fits a 128 MiB pod.")
    max_waiting_bytes: int = Field(
        default=2 * 1024 * MiB, ge=1 * MiB,
        description="Bytes of the tailed files that Kafka has not acknowledged, read or not, at most (like Fluent "
                    "Bit's storage.total_limit_size); past it the oldest are dropped, counted and logged, rotated "
                    "files first: only the shipper's descriptor keeps a deleted rotated file on disk. 2 GiB holds "
                    "hours of a loud node.")
    max_waiting_age_s: float = Field(
        default=12 * 3600.0, gt=0,
        description="Bytes first seen longer ago than this and still not acknowledged by Kafka are dropped "
                    "(counted and logged): after half a day they no longer serve the hot store.")
    max_message_bytes: int = Field(
        default=1_000_000, ge=64 * KiB,
        description="Encoded bytes per Kafka record at most: the brokers' default message limit. A batch that "
                    "encodes larger is split; a broker that still rejects a record as too large lowers this "
                    "for the running process (logged: set it to the topic's max.message.bytes).")
    read_chunk_bytes: int = Field(default=256 * KiB, ge=1 * KiB, description="Bytes read from a file at a time.")

    poll_interval_s: float = Field(default=0.25, gt=0, description="How often files are checked for new bytes.")
    scan_interval_s: float = Field(
        default=5.0, gt=0, description="How often the globs are scanned again for new files.")
    partial_max_wait_s: float = Field(
        default=5.0, ge=0,
        description="A last line without its newline is held this long (the writer may be mid-line), then sent as "
                    "is; bytes appended to it later become a new line with their own offset.")
    rotate_wait_s: float = Field(
        default=5.0, ge=0,
        description="A rotated-away or deleted file is drained until it has not grown for this long (the writer "
                    "may still hold it open), then closed.")
    checkpoint_interval_s: float = Field(
        default=1.0, ge=0,
        description="Acknowledged offsets are written at most this often; a crash re-sends at most this much, with "
                    "the same offsets, which downstream de-duplicates by event id.")
    start_at: Literal["beginning", "end"] = Field(
        default="beginning",
        description="Files found when there is no checkpoint yet: ship them from the beginning (training logs are "
                    "short-lived and wanted whole) or only what is written from now on.")

    compression: Literal["zstd", "lz4", "gzip", "snappy", "none"] = Field(
        default="zstd", description="Producer compression; zstd gives the best ratio on log text at low CPU.")
    linger_ms: int = Field(default=50, ge=0, description="Producer linger; short, because the shipper batches itself.")
    message_timeout_ms: int = Field(
        default=120_000, ge=1000,
        description="A delivery that is not acknowledged within this time is read again from the file, never "
                    "dropped.")
    retry_backoff_s: float = Field(
        default=2.0, ge=0, description="Wait before retrying after a failed delivery or an unreachable registry.")
    shutdown_timeout_s: float = Field(
        default=10.0, ge=0, description="On SIGTERM, how long to wait for batches in flight to be acknowledged.")
    producer: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Extra librdkafka producer settings.",
        examples=[{"reconnect.backoff.max.ms": 1000}])
    gpu: GpuSettings = Field(default_factory=GpuSettings, description=GpuSettings.__doc__)

    metrics_port: int = Field(
        default=9112, ge=0, le=65535,
        description="Port of the shipper's /metrics, /healthz and /readyz (beside the stage workers' 9108-9111); "
                    "0: no endpoints. A port that is taken is logged and the shipper ships without them.")

    @model_validator(mode="after")
    def _limits_fit(self) -> ShipSettings:
        if self.max_line_bytes > self.max_batch_bytes:
            raise ValueError(f"max_line_bytes ({self.max_line_bytes}) must not exceed max_batch_bytes "
                             f"({self.max_batch_bytes}): a line must fit in one batch")
        # Invalid UTF-8 is sent as U+FFFD (3 bytes for 1): a line must encode under the message limit.
        if 3 * self.max_line_bytes + 64 * KiB > self.max_message_bytes:
            raise ValueError(f"max_line_bytes ({self.max_line_bytes}) must leave room in max_message_bytes "
                             f"({self.max_message_bytes}): 3 x max_line_bytes + 64 KiB at most")
        if self.max_batch_bytes > self.max_buffer_bytes // 2:
            raise ValueError(f"max_buffer_bytes ({self.max_buffer_bytes}) must hold at least two batches "
                             f"of max_batch_bytes ({self.max_batch_bytes})")
        return self
