"""Apache Kafka 4 in KRaft mode (one combined broker+controller) from the Maven Central jars."""

from __future__ import annotations

import base64
import os
import uuid

from streams.config import REPO_ROOT, port_of
from streams.stack.base import Service, run_checked, tcp_open
from streams.stack.java import find_java_home
from streams.stack.maven import copy_dependencies

LOG4J2 = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: kafka.request.logger
        level: WARN
"""


class KafkaService(Service):
    name = "kafka"
    start_timeout_s = 90.0

    def port(self) -> int:
        return port_of(self.settings.kafka.bootstrap_servers)

    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port()}"

    def install(self) -> None:
        pom = REPO_ROOT / "scripts" / "stack" / "kafka" / "pom.xml"
        copy_dependencies(pom, self.home / "lib", {"kafka.version": self.settings.stack.kafka_version})

    def _java(self) -> str:
        return str(find_java_home(17) / "bin" / "java")

    def prepare(self) -> None:
        port, controller = self.port(), self.settings.stack.kafka_controller_port
        data = self.home / "data"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{controller}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(data),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "10",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            # One broker: do not hold the first consumer group join back for 3 s.
            "group.initial.rebalance.delay.ms": "0",
            # Tests and demos create topics explicitly; auto-creation hides typos.
            "auto.create.topics.enable": "false",
            # Records of 10 MB lines must be accepted so that the stage, not the broker, decides.
            "message.max.bytes": str(16 * 1024 * 1024),
        }
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "server.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.home / "log4j2.yaml").write_text(LOG4J2)
        if not (data / "meta.properties").is_file():
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            run_checked(
                [self._java(), "-cp", str(self.home / "lib" / "*"), "kafka.tools.StorageTool", "format",
                 "-t", cluster_id, "-c", str(self.home / "server.properties")],
                "formatting Kafka storage",
            )

    def command(self) -> list[str]:
        heap = self.settings.stack.kafka_heap
        return [
            self._java(), f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.yaml'}",
            "-cp", str(self.home / "lib" / "*"), "kafka.Kafka", str(self.home / "server.properties"),
        ]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("KAFKA_OPTS", None)
        return env

    def healthy(self) -> bool:
        if not tcp_open(self.port()):
            return False
        from confluent_kafka.admin import AdminClient

        try:
            AdminClient({"bootstrap.servers": self.endpoint()}).list_topics(timeout=2)
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False
        return True
