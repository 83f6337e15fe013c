"""The input of a fault run and what must come out of it.

Each corpus file is one source (its own Kafka key, hence one partition and one order). A *wave* sends
every file once more as a new source (another host), so a run can keep the pipeline loaded for as long
as it likes while every event id stays unique. A unit of input is one whole file: its records are
produced back to back, because a source that goes quiet for longer than the idle timeout in the middle
of a traceback is *meant* to be flushed as it stands (that is a dead job's last traceback).

What must come out is computed by feeding the very bytes that are produced to the pure
:class:`~streams.assemble.pipeline.Assembler`, configured as the worker configures it: same decoder,
same merger, same ids. ``parse_files`` would fake the file offsets and so the ids.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools import CORPUS_DIR
from streams.config import Settings
from streams.rawbatch import batches_from_file, default_source, source_key

CORPUS = CORPUS_DIR


def corpus_files(corpus: Path = CORPUS, kinds: tuple[str, ...] = ("training", "loghub")) -> list[Path]:
    """The corpus logs: training runs and the loghub samples (their CSV and README files are not logs)."""
    return sorted(p for kind in kinds for p in (corpus / kind).rglob("*.log"))


@dataclass
class Unit:
    """Records produced back to back: one file of one source, or one bad record."""

    name: str
    records: list[tuple[bytes, bytes]]  # (key, value)
    lines: int = 0
    bad: bool = False


@dataclass
class Expected:
    """What the stores must hold: every event id with its message, every metric point id."""

    events: dict[str, str] = field(default_factory=dict)  # event_id -> message
    multiline: set[str] = field(default_factory=set)  # ids of events of more than one line
    metrics: set[str] = field(default_factory=set)
    bad_values: set[bytes] = field(default_factory=set)  # the originals the DLQ must hold, and only these
    lines: int = 0
    records: int = 0

    def add(self, other: Expected) -> None:
        clash = self.events.keys() & other.events.keys()
        if clash:
            raise ValueError(f"{len(clash)} event ids repeat across units (e.g. {sorted(clash)[:2]}); "
                             "each wave needs its own host")
        self.events.update(other.events)
        self.multiline |= other.multiline
        self.metrics |= other.metrics
        self.bad_values |= other.bad_values
        self.lines += other.lines
        self.records += other.records


class BurstBuilder:
    """Serialises corpus files as the producer would and computes their expected output."""

    def __init__(self, settings: Settings, project: str, batch_lines: int = 20) -> None:
        from confluent_kafka.serialization import MessageField, SerializationContext

        from streams.assemble.outputs import registry_schema_lookup
        from streams.avro_io import avro_serializer
        from streams.clients import registry_client

        self.settings = settings
        self.project = project
        self.batch_lines = batch_lines
        self._serialize = avro_serializer(settings, "raw_batch")
        self._ctx = SerializationContext(settings.topics.raw, MessageField.VALUE)
        self._registry = registry_client(settings.registry)
        self._lookup = registry_schema_lookup(self._registry, logical_types=False)

    def _assembler(self) -> Any:
        from streams.assemble.metadata import SourceMetadata
        from streams.assemble.pipeline import Assembler
        from streams.assemble.route import ProjectRouter

        conf = self.settings.assemble
        metadata = SourceMetadata(self.settings.routing.metadata.keys())
        router = ProjectRouter(self.settings.routing.default_project, topic_prefix=self.settings.topics.events_prefix,
                               known=self.settings.projects(), project_keys=metadata.project_keys())
        return Assembler(self._lookup, router, max_lines=conf.max_lines, max_bytes=conf.max_bytes,
                         idle_timeout_ms=conf.idle_timeout_ms, limits=conf.fields.limits(), metadata=metadata)

    def file_unit(self, path: Path, host: str) -> Unit:
        source = default_source(path, host=host)
        labels = {"project": self.project, "task_id": f"{host}-{path.stem[:40]}", "task_type": "pretrain"}
        now_ms = int(time.time() * 1000)
        key = source_key(source)
        records, lines = [], 0
        for batch in batches_from_file(path, source, labels, self.batch_lines, now_ms):
            records.append((key, self._serialize(batch, self._ctx)))
            lines += len(batch["lines"])
        return Unit(f"{host}:{path.name}", records, lines)

    def bad_units(self, tag: str) -> list[Unit]:
        """Records the assemble stage must dead-letter, one of each way a value can be broken."""
        good = self.file_unit(sorted(CORPUS.glob("training/*.log"))[0], f"{tag}-bad").records[0][1]
        schema_id = good[1:5]
        # A LogEvent where a RawBatch belongs: the registry knows the id, the stage must refuse it.
        subject = f"{self.settings.topics.events_topic(self.project)}-value"
        event_schema = int(self._registry.get_latest_version(subject).schema_id or 0).to_bytes(4, "big")
        values = {
            "unknown-schema-id": b"\x00\x7f\xff\xff\xf0\x02junk " + tag.encode(),
            "corrupt-avro-body": b"\x00" + schema_id + b"\xff\xff\xff\xff\xff\xff\x0f" + f"{tag}".encode(),
            "trailing-bytes": good + f"trailing-{tag}".encode(),
            "not-a-rawbatch": b"\x00" + event_schema + f"not a batch {tag}".encode(),
            "magic-byte-only": b"\x00" + hashlib.blake2b(tag.encode(), digest_size=2).digest(),  # no schema id
        }
        return [Unit(f"bad:{name}", [(f"bad-{tag}-{name}".encode(), value)], 0, bad=True)
                for name, value in values.items()]

    def messages_in_file_order(self, path: Path, host: str) -> list[str]:
        """The messages of the events one file makes, in the order of their first line in the file (what
        a source shipped by another agent must come out as, whatever its ids)."""
        from streams.assemble.pipeline import RawRecord

        asm = self._assembler()
        outputs = []
        for offset, (key, value) in enumerate(self.file_unit(path, host).records):
            outputs += asm.feed(RawRecord(self.settings.topics.raw, 0, offset, value, key, 0))
        outputs += asm.flush_all()
        events = [o.value for o in outputs if o.kind == "event"]
        return [e["message"] for e in sorted(events, key=lambda e: e["raw"]["first_file_offset"])]

    def expected_of(self, units: list[Unit]) -> Expected:
        from streams.assemble.pipeline import RawRecord

        asm = self._assembler()
        out = Expected()
        outputs = []
        offset = 0
        for unit in units:
            for key, value in unit.records:
                outputs += asm.feed(RawRecord(self.settings.topics.raw, 0, offset, value, key, 0))
                offset += 1
            out.lines += unit.lines
            out.records += len(unit.records)
        outputs += asm.flush_all()
        for o in outputs:
            if o.kind == "event":
                eid = o.value["event_id"]
                if eid in out.events:
                    raise ValueError(f"the assembler gave event id {eid} twice")
                out.events[eid] = o.value["message"]
                if o.value["line_count"] > 1:
                    out.multiline.add(eid)
            elif o.kind == "metric":
                out.metrics.add(o.value["event_id"])
            else:
                out.bad_values.add(o.value["original"])
        bad = {v for u in units if u.bad for _k, v in u.records}
        if out.bad_values != bad:
            raise ValueError(f"the offline assembler dead-lettered {len(out.bad_values)} values, "
                             f"{len(bad)} were made bad on purpose")
        return out
