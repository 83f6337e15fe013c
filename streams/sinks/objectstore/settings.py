"""Settings of the cold tier: the ``cold:`` section (``SLUICE_COLD__<FIELD>``).

The connection itself is ``Settings.object_store``; each project's bucket comes from the routing table.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from streams.config_base import Section

KiB = 1024
MiB = 1024 * KiB


class ColdSinkSettings(Section):
    """The cold sink: compressed Avro objects in the S3-compatible store (`sluice worker cold`)."""

    group_id: str = Field(
        default="sluice-cold", description="Consumer group of the cold workers (KEDA scales on its lag).")

    # -- what an object is
    format: Literal["avro", "ndjson.gz"] = Field(
        default="avro", description="Avro object container files (schema embedded, any Avro reader opens them), or "
                            "ndjson.gz for tools that only speak JSON lines.")
    codec: Literal["null", "deflate", "zstandard", "snappy"] = Field(
        default="deflate",
        description="Avro block codec. deflate is in every Avro reader; zstandard and snappy need their Python "
                    "packages (checked at start: a codec that cannot be written is a configuration error).")
    codec_level: int | None = Field(
        default=3, description="Compression level; unset: the codec's own default. Level 3 of zlib in 64 kB blocks is "
                       "about as small as level 6 and more than twice as fast on log events.")

    # -- rotation: decided on the records alone, never on the wall clock
    rotate_records: int = Field(
        default=100_000, ge=1,
        description="Records per segment (a segment is the objects of one partition cut at the same "
                    "offsets).")
    rotate_bytes: int = Field(
        default=64 * MiB, ge=1,
        description="Record bytes (as read from Kafka) per segment: bounds memory per partition "
                    "and object size.")
    rotate_interval_s: float = Field(
        default=600.0, gt=0,
        description="Record-time span of a segment. 10 minutes keeps a day of one busy partition at about 144 "
                    "objects per group: few enough to list, many enough to restore a window.")
    stagger: bool = Field(
        default=True, description="Shift each partition's interval boundaries by a hash of (topic, partition), so that "
                          "partitions do not all rotate and upload in the same second.")

    # -- metric points (logs.metrics): archived beside the events, under their own prefix and sizes
    metrics_enabled: bool = Field(
        default=True, description="Archive logs.metrics too (loss curves, GPU samples), so that they outlive the "
                          "hot tier and can be rehydrated (sluice rehydrate --metrics).")
    metrics_prefix: str = Field(
        default="metrics/", description="Key prefix of the metric point objects: <prefix><project>/<task>/<day>/...")
    metrics_rotate_records: int = Field(
        default=500_000, ge=1,
        description="Metric points per segment: a point is ~300 bytes, so segments cut on time more often than "
                    "on count.")
    metrics_rotate_bytes: int = Field(default=32 * MiB, ge=1, description="Record bytes per metric segment.")
    metrics_rotate_interval_s: float = Field(
        default=3600.0, gt=0,
        description="Record-time span of a metric segment: an hour keeps a month of a task's GPU samples at "
                    "~720 objects per node role.")

    # -- idle partitions
    idle_flush_s: float = Field(
        default=60.0, gt=0,
        description="Wall time without a new record after which a partition's open segment is cut and uploaded. "
                    "Only whether to cut is decided by the clock; where the cut falls is written to the store "
                    "first, so a replay after a crash cuts at the same offsets.")
    cuts_prefix: str = Field(default="_sluice/cuts/", description="Key prefix of the recorded cuts in each bucket.")

    # -- uploads
    multipart_threshold: int = Field(
        default=16 * MiB, ge=5 * MiB, description="Objects above this size go up as multipart uploads.")
    part_size: int = Field(
        default=8 * MiB, ge=5 * MiB, description="Part size of multipart uploads (S3's minimum is 5 MiB).")
    upload_concurrency: int = Field(
        default=4, ge=1, description="Objects uploaded at once; 4 keeps a store busy without starving the encoder.")
    request_timeout_s: float = Field(default=30.0, description="Timeout of one store request, in seconds.")
    puts_per_s: float = Field(
        default=300.0,
        description="Declared PUT requests per second the store takes from one worker; the budget starts at "
                    "80% of it and adapts to SlowDown/503 and slow answers. AWS S3 allows 3,500 per prefix; "
                    "MinIO and Ceph gateways have their own, lower figures.")
    put_bytes_per_s: float = Field(default=400.0 * MiB, description="Declared bytes per second, as puts_per_s.")
    records_per_s: float = Field(
        default=200_000.0, description="Records admitted per second per worker, shared between projects.")
    record_bytes_per_s: float = Field(default=200.0 * MiB, description="Record bytes admitted per second per worker.")

    # -- bounded memory
    max_buffered_bytes: int = Field(
        default=256 * MiB, ge=1,
        description="Record bytes held (open and not yet uploaded segments) at which partitions pause; they resume "
                    "at half. Objects are rebuilt from records on retry, so a store outage fills this buffer and "
                    "then Kafka holds the rest.")
    max_in_flight_records: int = Field(
        default=200_000, ge=2, description="Records held at which partitions pause, as max_buffered_bytes.")

    # -- bucket lifecycle (applied at start where the server implements it)
    lifecycle_enabled: bool = Field(
        default=True, description="Apply the lifecycle rules below to each bucket at start.")
    lifecycle_infrequent_days: int | None = Field(
        default=30, description="Days after which objects move to infrequent access (STANDARD_IA); unset: never.")
    lifecycle_archive_days: int | None = Field(
        default=90, description="Days after which objects move to the archive class (GLACIER); unset: never.")
    lifecycle_expire_days: int | None = Field(
        default=None, description="Days after which objects are deleted; unset: archived objects are kept.")
    lifecycle_rule_id: str = Field(
        default="sluice-cold-tiering", description="Id of Sluice's lifecycle rule in each bucket.")

    @model_validator(mode="after")
    def _sizes_are_consistent(self) -> ColdSinkSettings:
        if self.part_size > self.multipart_threshold:
            raise ValueError("part_size must not exceed multipart_threshold")
        days = [d for d in (self.lifecycle_infrequent_days, self.lifecycle_archive_days,
                            self.lifecycle_expire_days) if d is not None]
        if days != sorted(days):
            raise ValueError("lifecycle days must grow: infrequent <= archive <= expire")
        return self

    def for_metrics(self) -> ColdSinkSettings:
        """These settings with the metrics archive's rotation."""
        return self.model_copy(update={"rotate_records": self.metrics_rotate_records,
                                       "rotate_bytes": self.metrics_rotate_bytes,
                                       "rotate_interval_s": self.metrics_rotate_interval_s})

    @property
    def extension(self) -> str:
        return "avro" if self.format == "avro" else "ndjson.gz"
