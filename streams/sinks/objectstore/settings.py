"""``ColdSinkSettings``: the cold tier's configuration, from ``SLUICE_COLD__<FIELD>`` or keywords.

Every default is explained where it is declared. Examples::

    SLUICE_COLD__CODEC=zstandard          SLUICE_COLD__ROTATE_INTERVAL_S=300
    SLUICE_COLD__LIFECYCLE_EXPIRE_DAYS=365
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

KiB = 1024
MiB = 1024 * KiB


class ColdSinkSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLUICE_COLD__", env_nested_delimiter="__", extra="forbid")

    # The consumer group of the cold workers (KEDA scales on its lag; deploy/k8s/cold.yaml names it).
    group_id: str = "sluice-cold"

    # -- what an object is ----------------------------------------------------------------------
    # Avro container files (schema embedded, any Avro reader opens them); "ndjson.gz" for tools
    # that only speak JSON lines.
    format: Literal["avro", "ndjson.gz"] = "avro"
    # deflate is in every Avro reader; zstandard and snappy only where their packages are installed
    # (checked at start: a codec that cannot be written is a configuration error, not a surprise).
    codec: Literal["null", "deflate", "zstandard", "snappy"] = "deflate"
    # None = the codec's own default (zlib 6). 3: on the corpus's events, in 64 kB blocks, zlib 3 is
    # 2.3x faster than zlib 6 in 16 kB blocks (fastavro's default) and as small (0.17 s vs 0.39 s,
    # 5.69 MB vs 5.70 MB for 40 MB of events); zstandard's own default is 3 as well.
    codec_level: int | None = 3

    # -- rotation: all three decided on the records alone, never on the wall clock ---------------
    # Records per segment (one segment = the objects of one partition cut at the same offsets).
    rotate_records: int = Field(default=100_000, ge=1)
    # Record bytes (as read from Kafka) per segment: bounds memory per partition and object size.
    rotate_bytes: int = Field(default=64 * MiB, ge=1)
    # Record-time span of a segment (ingest time of the records): 10 minutes keeps a day of one busy
    # partition at ~144 objects per group, few enough to list, many enough to restore a window.
    rotate_interval_s: float = Field(default=600.0, gt=0)
    # Shift each partition's interval boundaries by hash(topic, partition) mod interval, so that
    # many partitions do not all rotate (and upload) in the same second.
    stagger: bool = True

    # -- idle partitions: see sink.py for why a recorded cut keeps replays identical -------------
    # Wall time without a new record after which a partition's open segment is cut and uploaded.
    # Only *whether* to cut is decided by the clock; where the cut is, is written to the store first.
    idle_flush_s: float = Field(default=60.0, gt=0)
    cuts_prefix: str = "_sluice/cuts/"

    # -- uploads ------------------------------------------------------------------------------
    # Above this size an object goes up as a multipart upload (S3's minimum part is 5 MiB).
    multipart_threshold: int = Field(default=16 * MiB, ge=5 * MiB)
    part_size: int = Field(default=8 * MiB, ge=5 * MiB)
    # Objects uploaded at once; 4 keeps a local S3 server busy without starving the encoder.
    upload_concurrency: int = Field(default=4, ge=1)
    request_timeout_s: float = 30.0
    # Declared capacity of the store for the shared rate controller (PUTs and bytes per second);
    # the budget starts at 80% of it and adapts (AIMD) to SlowDown/503 and slow responses.
    puts_per_s: float = 300.0
    put_bytes_per_s: float = 400.0 * MiB
    # Records admitted per second per worker (the runner's controller, shared between projects).
    records_per_s: float = 200_000.0
    record_bytes_per_s: float = 200.0 * MiB

    # -- bounded memory --------------------------------------------------------------------------
    # Record bytes held (open and not-yet-uploaded segments) at which partitions pause; they resume
    # at half. Objects are rebuilt from records on retry, so nothing needs to spill to disk: a store
    # outage fills this buffer, then Kafka holds the rest.
    max_buffered_bytes: int = Field(default=256 * MiB, ge=1)
    max_in_flight_records: int = Field(default=200_000, ge=2)

    # -- bucket lifecycle (applied at start where the server implements it) ----------------------
    lifecycle_enabled: bool = True
    lifecycle_infrequent_days: int | None = 30  # STANDARD_IA
    lifecycle_archive_days: int | None = 90  # GLACIER
    lifecycle_expire_days: int | None = None  # delete; None = keep archived objects
    lifecycle_rule_id: str = "sluice-cold-tiering"

    @model_validator(mode="after")
    def _sizes_are_consistent(self) -> ColdSinkSettings:
        if self.part_size > self.multipart_threshold:
            raise ValueError("part_size must not exceed multipart_threshold")
        days = [d for d in (self.lifecycle_infrequent_days, self.lifecycle_archive_days,
                            self.lifecycle_expire_days) if d is not None]
        if days != sorted(days):
            raise ValueError("lifecycle days must grow: infrequent <= archive <= expire")
        return self

    @property
    def extension(self) -> str:
        return "avro" if self.format == "avro" else "ndjson.gz"
