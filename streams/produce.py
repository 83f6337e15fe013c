"""`sluice produce`: real corpus logs as a burst of Avro RawBatch records on logs.raw."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streams.avro_io import avro_serializer
from streams.config import Settings
from streams.errors import SluiceError
from streams.rawbatch import batches_from_file, default_source, source_key


def producer_config(settings: Settings) -> dict[str, Any]:
    """How ``produce_files`` produces (idempotent, zstd, 20 ms linger)."""
    return {**settings.kafka.client_config(), "linger.ms": 20, "compression.type": "zstd", "enable.idempotence": True}


def produce_files(
    settings: Settings,
    paths: list[Path],
    labels: Callable[[Path], dict[str, str]],
    host: str = "demo-node-0",
    batch_lines: int = 50,
    progress: Callable[[int], None] | None = None,
    producer: Any | None = None,
) -> int:
    """Each file is one source; its lines go in order, ``batch_lines`` per record. Returns lines sent.

    ``producer``: a confluent-kafka Producer of the caller's (a benchmark's transactional one, so that
    a whole backlog becomes visible to read_committed consumers at once); else one is made here."""
    from confluent_kafka import Producer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = avro_serializer(settings, "raw_batch")
    producer = producer or Producer(producer_config(settings))
    ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
    now_ms = int(time.time() * 1000)
    sent = 0
    errors: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    for path in paths:
        source = default_source(path, host=host)
        for batch in batches_from_file(path, source, labels(path), batch_lines, now_ms):
            producer.produce(settings.topics.raw, key=source_key(source), value=serializer(batch, ctx),
                             on_delivery=on_delivery)
            sent += len(batch["lines"])
            producer.poll(0)
            if progress:
                progress(len(batch["lines"]))
    if producer.flush(60) or errors:
        raise SluiceError(f"producing to {settings.topics.raw} failed: {errors[:3] or 'flush timed out'}; "
                          f"check that the brokers at {settings.kafka.bootstrap_servers} are up and reachable")
    return sent
