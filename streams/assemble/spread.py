"""Sources whose lines arrive on more than one raw partition, and the agent setting that stops it.

A source's lines must share a partition to be merged in order: an agent that sends them without a
key (Fluent Bit's default, the collector's without a partitioning option) spreads one file over all
partitions, and no traceback of that file can come out whole. The assemble workers share one
:class:`SourcePartitions` across their partitions; it says once per source when a second partition
brings it.
"""

from __future__ import annotations

FIX = ("key the agent's Kafka records by source so that one file's lines share a partition: "
       "Fluent Bit kafka output `message_key_field` (with tail `path_key`), rsyslog omkafka "
       "`key` + `dynakey=\"on\"` + `partitions.auto=\"on\"`, OpenTelemetry Collector kafka exporter "
       "`partition_logs_by_resource_attributes: true` (with log.file.path moved to the resource), "
       "Vector kafka sink `key_field`, Filebeat `output.kafka.key`; see docs/agents.md")


class SourcePartitions:
    """The first raw partition each source was seen on, bounded in memory."""

    def __init__(self, max_sources: int = 100_000) -> None:
        self.max_sources = max_sources
        self._first: dict[str, int] = {}
        self._warned: set[str] = set()

    def __len__(self) -> int:
        return len(self._first)

    def observe(self, sid: str, partition: int) -> bool:
        """Record ``sid`` on ``partition``; True the first time it turns up on a second partition."""
        first = self._first.get(sid)
        if first is None:
            if len(self._first) >= self.max_sources:
                self._first.clear()  # a runaway source set: start over rather than grow
            self._first[sid] = partition
            return False
        if first == partition or sid in self._warned:
            return False
        if len(self._warned) >= self.max_sources:
            self._warned.clear()
        self._warned.add(sid)
        return True

    def message(self, sid: str, partition: int, topic: str) -> str:
        shown = sid if sid.strip("|") else "(records with no key and no source fields)"
        return (f"source {shown!r} arrives on {topic} partition {partition} after partition "
                f"{self._first.get(sid)}: its lines cannot be merged in order; {FIX}")
