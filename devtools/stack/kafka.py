"""Apache Kafka 4 in KRaft mode (one combined broker+controller) from the Maven Central jars.

With ``stack.tls`` the client listener (the port of ``kafka.bootstrap_servers``) speaks
``kafka.security_protocol`` (SASL_SSL or SSL) with the stack's own certificate, and the broker
keeps a loopback PLAINTEXT listener on ``stack.kafka_internal_port`` for itself. The SCRAM user of
``kafka.sasl_username`` / ``kafka.sasl_password`` is upserted through that internal listener when
the client listener refuses it: on first start, after a password change, and on storage formatted
before TLS was turned on. A PLAIN user is written into the listener's JAAS line instead (the
properties file is owner-readable only). With ``kafka.ssl_certfile`` set the listener asks every
client for a certificate from the stack's CA (mutual TLS). (``kafka-storage format --add-scram``
would put the password on a command line that every local user can read, and only works on empty
storage.)
"""

from __future__ import annotations

import base64
import os
import re
import uuid
from typing import Any

from pydantic import SecretStr

from devtools.stack.base import Service, run_checked, tcp_open
from devtools.stack.java import find_java_home
from devtools.stack.maven import copy_dependencies
from devtools.stack.tls import ensure_certificates
from streams.config import REPO_ROOT, port_of
from streams.errors import StackError

SECURE_PROTOCOLS = ("SASL_SSL", "SSL")
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

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
        if self.settings.stack.tls:
            props.update(self._secure_listener_props())
        server_properties = self.home / "server.properties"
        server_properties.touch(mode=0o600)  # a PLAIN listener's JAAS line holds the password
        server_properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.home / "log4j2.yaml").write_text(LOG4J2)
        if not (data / "meta.properties").is_file():
            cluster_id = _cluster_id()
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
            # The broker fetches the OAUTHBEARER issuer's keys only from URLs it is allowed to.
            *([f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.settings.stack.kafka_oauthbearer_jwks_url}"]
              if self.settings.stack.kafka_oauthbearer_jwks_url else []),
            "-cp", str(self.home / "lib" / "*"), "kafka.Kafka", str(self.home / "server.properties"),
        ]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("KAFKA_OPTS", None)
        return env

    def _secure_listener_props(self) -> dict[str, str]:
        kafka, port = self.settings.kafka, self.port()
        internal, controller = self.settings.stack.kafka_internal_port, self.settings.stack.kafka_controller_port
        protocol = kafka.security_protocol.upper()
        if protocol not in SECURE_PROTOCOLS:
            raise StackError(f"stack.tls is on but kafka.security_protocol is {kafka.security_protocol}; "
                             f"set it to SASL_SSL (or SSL) so clients talk TLS to the listener at {port}")
        certs = ensure_certificates(self.root / "tls")
        keystore = self.home / "keystore.pem"  # Kafka's PEM keystore: the key, then the chain
        keystore.touch(mode=0o600)
        keystore.write_bytes(certs.key.read_bytes() + certs.cert.read_bytes())
        props = {
            "listeners": f"CLIENT://127.0.0.1:{port},INTERNAL://127.0.0.1:{internal},"
                         f"CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"CLIENT://127.0.0.1:{port},INTERNAL://127.0.0.1:{internal}",
            "listener.security.protocol.map": f"CLIENT:{protocol},INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "listener.name.client.ssl.keystore.type": "PEM",
            "listener.name.client.ssl.keystore.location": str(keystore),
        }
        if protocol == "SASL_SSL" and kafka.sasl_mechanism == "OAUTHBEARER":
            props.update(self._oauthbearer_props())
        elif protocol == "SASL_SSL":
            mechanism, user, password = self._sasl_user()
            login = {"PLAIN": f'org.apache.kafka.common.security.plain.PlainLoginModule required '
                              f'user_{user}="{password.get_secret_value()}";',
                     }.get(mechanism, "org.apache.kafka.common.security.scram.ScramLoginModule required;")
            props["listener.name.client.sasl.enabled.mechanisms"] = mechanism
            props[f"listener.name.client.{mechanism.lower()}.sasl.jaas.config"] = login
        if kafka.ssl_certfile:
            # Mutual TLS: a client without a certificate from the stack's CA is refused at the handshake,
            # and the certificate's CN is the principal that ACLs would name ("User:sluice").
            props.update({
                "listener.name.client.ssl.client.auth": "required",
                "listener.name.client.ssl.truststore.type": "PEM",
                "listener.name.client.ssl.truststore.location": str(certs.ca),
                "listener.name.client.ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
            })
        return props

    def _oauthbearer_props(self) -> dict[str, str]:
        """OAUTHBEARER on the client listener: tokens are JWTs checked against the issuer's JWKS."""
        jwks = self.settings.stack.kafka_oauthbearer_jwks_url
        if not jwks:
            raise StackError("an OAUTHBEARER local Kafka needs stack.kafka_oauthbearer_jwks_url: the JWKS of the "
                             "issuer of kafka.sasl_oauthbearer_token_endpoint_url (devtools/stack/oidc.py makes one)")
        prefix = "listener.name.client.oauthbearer."
        return {
            "listener.name.client.sasl.enabled.mechanisms": "OAUTHBEARER",
            prefix + "sasl.jaas.config":
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            prefix + "sasl.server.callback.handler.class":
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
            "sasl.oauthbearer.jwks.endpoint.url": jwks,
            "sasl.oauthbearer.expected.audience": self.settings.stack.kafka_oauthbearer_audience,
        }

    def _sasl_user(self) -> tuple[str, str, SecretStr]:
        """(mechanism, user name, password) of the SASL user the stack makes for its clients: a SCRAM
        user stored by the broker, or a PLAIN user in the listener's JAAS line."""
        kafka = self.settings.kafka
        mechanism = (kafka.sasl_mechanism or "SCRAM-SHA-512").upper()
        if mechanism not in (*SCRAM_MECHANISMS, "PLAIN") or not kafka.sasl_username or kafka.sasl_password is None:
            raise StackError("a SASL_SSL local Kafka needs kafka.sasl_mechanism SCRAM-SHA-512, SCRAM-SHA-256 or "
                             "PLAIN, kafka.sasl_username and kafka.sasl_password (or sasl_password_file)")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", kafka.sasl_username):
            raise StackError("kafka.sasl_username of a local Kafka: letters, digits, '.', '_' and '-' only")
        return mechanism, kafka.sasl_username, kafka.sasl_password

    def _answers(self, conf: dict[str, Any]) -> bool:
        from confluent_kafka.admin import AdminClient

        try:
            AdminClient({**conf, "log_level": 0}).list_topics(timeout=2)  # quiet: a refusal is an answer here
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False
        return True

    def healthy(self) -> bool:
        if not tcp_open(self.port()):
            return False
        if not self.settings.stack.tls:
            return self._answers({"bootstrap.servers": self.endpoint()})
        internal = {"bootstrap.servers": f"127.0.0.1:{self.settings.stack.kafka_internal_port}"}
        if not self._answers(internal):
            return False
        # Healthy means a client with the configured credentials gets in over TLS.
        client = self.settings.kafka.client_config()
        if self._answers(client):
            return True
        if self.settings.kafka.security_protocol == "SASL_SSL" and self.settings.kafka.sasl_mechanism in (
                None, *SCRAM_MECHANISMS):
            try:
                self._upsert_scram_user(internal)
            except Exception:  # noqa: BLE001 - not ready for metadata writes yet: "not yet"
                return False
        return self._answers(client)

    def _upsert_scram_user(self, internal: dict[str, Any]) -> None:
        from confluent_kafka.admin import (
            AdminClient,
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )

        name, user, password = self._sasl_user()
        mechanism = ScramMechanism[name.replace("-", "_")]
        upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 8192),
                                              password.get_secret_value().encode())
        admin = AdminClient(internal)  # kept referenced until the futures resolve
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=10)
        self.log(f"{self.name}: SCRAM user {user!r} ({name}) set")


def _cluster_id() -> str:
    """A random KRaft cluster id. One that starts with '-' reads as an option to kafka-storage's argument
    parser, so it is drawn again, as Kafka's own Uuid.randomUuid does."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id
