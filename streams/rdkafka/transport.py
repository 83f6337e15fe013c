"""The ``rdkafka://`` Faust transport: Faust's consumer and producer on librdkafka (confluent-kafka).

Registered as a ``faust.transports`` entry point (pyproject.toml), so ``faust.App(broker=
"rdkafka://host:9092")`` uses it. librdkafka properties that Faust's settings do not carry
(security, the logger) go in :attr:`Transport.client_config` (:func:`use_client_config`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import confluent_kafka
import faust
from faust.transport import base
from faust.types.assignor import HostToPartitionMap, PartitionAssignorT
from faust.types.tuples import TP
from yarl import URL

from streams.rdkafka.consumer import Consumer
from streams.rdkafka.producer import Producer


class Transport(base.Transport):
    """Faust transport over librdkafka."""

    Consumer = Consumer
    Producer = Producer
    default_port = 9092
    driver_version = f"confluent_kafka={confluent_kafka.version()[0]}, librdkafka={confluent_kafka.libversion()[0]}"

    def __init__(self, url: list[URL], app: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(url, app, loop)
        self.client_config: dict[str, Any] = {}  # librdkafka properties added to both clients' (secrets: not logged)
        self.batched: set[str] = set()  # topics whose agents get RecordBatch events (batch_topic)

    def bootstrap_servers(self) -> str:
        return ",".join(f"{u.host or '127.0.0.1'}:{u.port or self.default_port}" for u in self.url)

    async def create_topic(self, topic: str, partitions: int, replication: int, *, config: Any = None,
                           timeout: Any = 30.0, retention: Any = None, compacting: bool | None = None,
                           deleting: bool | None = None, ensure_created: bool = False) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        settings = {str(k): str(v) for k, v in (config or {}).items()}
        policy = ",".join(p for p, on in (("compact", compacting), ("delete", deleting)) if on)
        if policy:
            settings["cleanup.policy"] = policy
        if retention:
            settings["retention.ms"] = str(int(float(retention) * 1000))
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers(), **self.client_config})
        futures = admin.create_topics([NewTopic(topic, partitions, replication, config=settings)])

        def wait() -> None:
            from confluent_kafka import KafkaError, KafkaException

            try:
                futures[topic].result(float(timeout))
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise

        await asyncio.get_running_loop().run_in_executor(None, wait)


def use_client_config(app: faust.App, config: dict[str, Any]) -> None:
    """Add librdkafka properties (security, logger) to the app's consumer and producer."""
    for transport in (app.transport, app.producer_transport):
        if not isinstance(transport, Transport):
            raise TypeError(f"the app's broker is {app.conf.broker!r}, not an rdkafka:// URL")
        transport.client_config.update(config)


class AssignedActives(PartitionAssignorT):
    """Faust's view of a librdkafka assignment: every assigned partition is active, none is a standby.

    Faust's own ``PartitionAssignor`` runs inside aiokafka's group protocol; with librdkafka the
    broker's range assignment is what the worker has. Tables recover from the changelog partitions
    assigned (range gives them to the member that has the same source partitions)."""

    def __init__(self, app: Any, replicas: int = 0) -> None:
        self.app = app
        self.replicas = replicas

    def group_for_topic(self, topic: str) -> int:
        return 0

    def assigned_standbys(self) -> set[TP]:
        return set()

    def assigned_actives(self) -> set[TP]:
        return set(self.app.consumer.assignment())

    def is_active(self, tp: TP) -> bool:
        return tp in self.assigned_actives()

    def is_standby(self, tp: TP) -> bool:
        return False

    def key_store(self, topic: str, key: bytes) -> URL:
        raise NotImplementedError("no key store with a librdkafka assignment (Faust's web router only)")

    def table_metadata(self, topic: str) -> HostToPartitionMap:
        return {}

    def tables_metadata(self) -> HostToPartitionMap:
        return {}
