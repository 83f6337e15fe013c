"""``ShipSettings``: the shipper's configuration, read from ``SLUICE_SHIP__<FIELD>`` or a dict.

Every default is explained where it is declared. Examples::

    SLUICE_SHIP__PATHS='["/var/log/train/**/*.log"]'
    SLUICE_SHIP__LABELS__PROJECT=llama   SLUICE_SHIP__LABELS__TASK_ID=run-42
    SLUICE_SHIP__INTERVAL_S=0.5          SLUICE_SHIP__STAGGER_WINDOW_S=0
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

KiB = 1024
MiB = 1024 * KiB


class ShipSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLUICE_SHIP__", env_nested_delimiter="__", extra="forbid")

    # What to tail. `**` matches any depth. Rotated copies (x.log.1, x.log-2024...) must NOT match:
    # the shipper follows rotated files by identity, not by name.
    paths: list[str] = Field(default_factory=lambda: ["/var/log/train/**/*.log"])
    exclude: list[str] = Field(default_factory=list)  # fnmatch patterns on the full path
    # The checkpoint (file identity, path, offset) lives on the node, beside the logs it describes.
    checkpoint_path: Path = Path("/var/lib/sluice/ship/checkpoint.json")
    topic: str | None = None  # None: the main settings' topics.raw (logs.raw)

    # Identity of the node and pod. None: taken from the Kubernetes downward API environment
    # (NODE_NAME, POD_NAMESPACE, POD_NAME, CONTAINER_NAME), else the host name for the node.
    node_name: str | None = None
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    # Labels (project, task_id, node_role, rank, ...). Precedence, lowest first: the downward-API
    # labels file, these configured labels, then named groups of `path_pattern` for each file.
    labels: dict[str, str] = Field(default_factory=dict)
    podinfo_labels_path: Path = Path("/etc/podinfo/labels")
    # A regex with named groups matched against each file's path, e.g.
    # `/var/log/train/(?P<project>[^/]+)/(?P<task_id>[^/]+)/rank(?P<rank>\d+)\.log`: the per-file
    # labels a DaemonSet cannot get from its own pod.
    path_pattern: str | None = None

    # The send schedule: every node sends once per interval, at its own phase, so that a cluster
    # whose jobs all log at once (a checkpoint, a 9:00 start) reaches Kafka spread over the window.
    interval_s: float = Field(
        default=90.0, ge=0.05,
        description="Seconds between a node's scheduled sends. 90 s with a 90 s stagger window spreads the "
                    "nodes' uploads over 90 s, as a cluster-wide burst needs; the cost is up to this much delay "
                    "for quiet files. Interactive use and tests go sub-second.")
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
    # 5,000 lines / 512 KiB per record: well under the broker's 1 MB message.max.bytes, and big
    # enough that per-record costs downstream (Faust: ~15k records/s) stay small.
    max_batch_lines: int = Field(default=5000, ge=1)
    max_batch_bytes: int = Field(default=512 * KiB, ge=1 * KiB)
    # Longer lines are cut into pieces (each with its own offset) so that one runaway line cannot
    # exceed a batch or the memory cap.
    max_line_bytes: int = Field(default=256 * KiB, ge=1)
    # The memory cap: file bytes read but not yet acknowledged by Kafka (pending + in flight).
    # At the cap the shipper stops reading; the files are the buffer. 16 MiB fits a 128 MiB pod.
    max_buffer_bytes: int = Field(default=16 * MiB, ge=4 * KiB)
    # What a node keeps waiting for Kafka: the tailed files' bytes that Kafka has not acknowledged,
    # read or not. Past either bound the oldest waiting bytes are dropped (counted and logged), rotated
    # files first: the shipper's open descriptors are what keeps deleted rotated files on disk.
    max_waiting_bytes: int = Field(
        default=2 * 1024 * MiB, ge=1 * MiB,
        description="Bytes waiting to be acknowledged by Kafka at most, over all tailed files (like Fluent Bit's "
                    "storage.total_limit_size); past it the oldest are dropped. 2 GiB holds hours of a loud node.")
    max_waiting_age_s: float = Field(
        default=12 * 3600.0, gt=0,
        description="Bytes first seen longer ago than this and still not acknowledged by Kafka are dropped: "
                    "after half a day they no longer serve the hot store.")
    max_message_bytes: int = Field(
        default=1_000_000, ge=64 * KiB,
        description="Encoded bytes per Kafka record at most: the brokers' default message limit. A batch that "
                    "encodes larger is split; a broker that still rejects a record as too large lowers this "
                    "for the running process (logged: set it to the topic's max.message.bytes).")
    read_chunk_bytes: int = Field(default=256 * KiB, ge=1 * KiB)

    # How often files are checked for new bytes, and the globs re-scanned for new files.
    poll_interval_s: float = Field(default=0.25, gt=0)
    scan_interval_s: float = Field(default=5.0, gt=0)
    # A last line without its newline is held this long (the writer may be mid-line), then sent
    # as is; bytes appended to it later become a new line with their own offset.
    partial_max_wait_s: float = Field(default=5.0, ge=0)
    # A rotated-away or deleted file is drained until it has not grown for this long
    # (the writer may still hold it open), then closed. Fluent Bit's Rotate_Wait is 5 s too.
    rotate_wait_s: float = Field(default=5.0, ge=0)
    # Acknowledged offsets are written (tmp + fsync + rename) at most this often; a crash re-sends
    # at most this much, with the same offsets, which downstream de-duplicates by id.
    checkpoint_interval_s: float = Field(default=1.0, ge=0)
    # Files found when there is no checkpoint yet: ship them from the beginning (training logs are
    # short-lived and wanted whole) or only what is written from now on.
    start_at: Literal["beginning", "end"] = "beginning"

    # Producer. zstd gives the best ratio on log text at low CPU; linger is short because the
    # shipper batches itself. A delivery that times out is re-read from the file, never dropped.
    compression: Literal["zstd", "lz4", "gzip", "snappy", "none"] = "zstd"
    linger_ms: int = Field(default=50, ge=0)
    message_timeout_ms: int = Field(default=120_000, ge=1000)
    # Wait this long before retrying after a failed delivery or an unreachable registry.
    retry_backoff_s: float = Field(default=2.0, ge=0)
    # On SIGTERM: how long to wait for in-flight batches to be acknowledged before exiting.
    shutdown_timeout_s: float = Field(default=10.0, ge=0)
    # Extra librdkafka settings, e.g. {"reconnect.backoff.max.ms": 1000}.
    producer: dict[str, str | int | float | bool] = Field(default_factory=dict)

    # /metrics and /healthz of the shipper (streams/observability.py), on the node's network.
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
