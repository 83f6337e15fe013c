"""Typed configuration: one YAML file plus environment overrides, for every stage.

Resolution order (later wins): the defaults declared here, the YAML file (``sluice --config PATH``, else
``$SLUICE_CONFIG``, else ``./sluice.yaml`` when present), then environment variables
``SLUICE_<SECTION>__<FIELD>`` (for example ``SLUICE_KAFKA__BOOTSTRAP_SERVERS=broker:9092``; ``__`` nests
further: ``SLUICE_ROUTING__PROJECTS__LLM__RETENTION_DAYS=14``). Unknown keys and unknown ``SLUICE_*``
variables are errors that name the nearest valid setting. Secrets are ``SecretStr``: they never print.

Every field's ``description`` is its documentation: ``deploy/sluice.reference.yaml`` and
``docs/configuration.md`` are generated from it (``python -m devtools config-reference``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, create_model, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from streams.assemble.fields import FieldLimits
from streams.assemble.metadata import DEFAULT_KEYS
from streams.config_base import Section
from streams.config_check import unknown_environment, unknown_key_hint
from streams.errors import ConfigError
from streams.ship.settings import ShipSettings
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.watch.settings import WatchSettings

REPO_ROOT = Path(__file__).resolve().parent.parent
ENV_PREFIX = "SLUICE_"
# The configuration file given on the command line (`sluice --config PATH`), for this context only.
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("sluice_config_file", default=None)


def secrets_from_files(model: BaseModel, pairs: dict[str, str]) -> None:
    """Fill each secret field from its ``*_file`` twin (``{"sasl_password": "sasl_password_file"}``).

    The file is read once, at load time, and a trailing newline is dropped (``echo pw > file``).
    Errors name the field and the path, never the contents.
    """
    for field, file_field in pairs.items():
        path = getattr(model, file_field)
        if path is None:
            continue
        try:
            text = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise ValueError(f"{file_field}: cannot read {path} ({exc.strerror or type(exc).__name__})") from None
        if not text:
            raise ValueError(f"{file_field}: {path} is empty")
        given = getattr(model, field)
        # Both set is a mistake, unless they agree (settings re-validated from their own dump).
        if field in model.model_fields_set and given is not None and given.get_secret_value() != text:
            raise ValueError(f"set {field} or {file_field}, not both")
        object.__setattr__(model, field, SecretStr(text))


SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


class KafkaSettings(Section):
    """The Kafka cluster every stage reads from and writes to."""

    bootstrap_servers: str = Field(
        default="127.0.0.1:19092",
        description="Comma-separated host:port list of brokers. The default is the local stack's loopback port, "
                    "away from 9092 so that it never collides with a real broker.")
    security_protocol: str = Field(
        default="PLAINTEXT",
        description="PLAINTEXT, SSL (TLS; with ssl_certfile and ssl_keyfile, mutual TLS), SASL_PLAINTEXT or "
                    "SASL_SSL.",
        examples=["SASL_SSL"])
    sasl_mechanism: str | None = Field(
        default=None,
        description="SASL mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (user and password) or OAUTHBEARER "
                    "(tokens from an OIDC token endpoint, sasl_oauthbearer_*); unset: no SASL.",
        examples=["SCRAM-SHA-512"])
    sasl_username: str | None = Field(default=None, description="SASL user name (PLAIN and SCRAM).")
    sasl_password: SecretStr | None = Field(
        default=None, description="SASL password. Secret: never printed; prefer sasl_password_file or the environment.")
    sasl_password_file: Path | None = Field(
        default=None, description="A file holding the SASL password (a mounted secret), read once at start; a trailing "
                          "newline is dropped. Setting it and sasl_password to different values is an error.")
    sasl_oauthbearer_token_endpoint_url: str | None = Field(
        default=None,
        description="OAUTHBEARER: the OIDC token endpoint that grants tokens to this client (client-credentials "
                    "grant); every stage fetches its token there and renews it before it expires.",
        examples=["https://idp.example.com/realms/kafka/protocol/openid-connect/token"])
    sasl_oauthbearer_client_id: str | None = Field(
        default=None, description="OAUTHBEARER: the client id presented to the token endpoint.")
    sasl_oauthbearer_client_secret: SecretStr | None = Field(
        default=None, description="OAUTHBEARER: the client secret. Secret: prefer sasl_oauthbearer_client_secret_file.")
    sasl_oauthbearer_client_secret_file: Path | None = Field(
        default=None, description="A file holding the OAUTHBEARER client secret (a mounted secret).")
    sasl_oauthbearer_scope: str | None = Field(
        default=None, description="OAUTHBEARER: the scope asked of the token endpoint; unset: none.")
    ssl_cafile: str | None = Field(
        default=None, description="CA certificate file that verifies the brokers; unset: the system's CAs.")
    ssl_certfile: str | None = Field(
        default=None,
        description="Client certificate (PEM, the chain after it) that this client presents to the brokers: mutual "
                    "TLS. The broker maps its subject to the principal that ACLs name.")
    ssl_keyfile: str | None = Field(default=None, description="Private key (PEM) of ssl_certfile.")
    ssl_key_password: SecretStr | None = Field(
        default=None, description="Password of an encrypted ssl_keyfile. Secret: prefer ssl_key_password_file.")
    ssl_key_password_file: Path | None = Field(
        default=None, description="A file holding the password of ssl_keyfile (a mounted secret).")

    @field_validator("security_protocol")
    @classmethod
    def _known_protocol(cls, value: str) -> str:
        upper = value.upper()
        if upper not in SECURITY_PROTOCOLS:
            raise ValueError(f"{value!r} is not one of {', '.join(SECURITY_PROTOCOLS)}")
        return upper

    @field_validator("sasl_mechanism")
    @classmethod
    def _known_mechanism(cls, value: str | None) -> str | None:
        if value is None:
            return None
        upper = value.upper()
        if upper not in SASL_MECHANISMS:
            raise ValueError(f"{value!r} is not one of {', '.join(SASL_MECHANISMS)} (GSSAPI is not supported)")
        return upper
    max_message_bytes: int = Field(
        default=1024 * 1024, ge=64 * 1024,
        description="The largest record any stage writes (events, metric points, dead letters), and so the "
                    "producers' message.max.bytes. Every topic Sluice writes must accept it (max.message.bytes, else "
                    "the broker's message.max.bytes): `sluice topics create` and deploy/k8s/topics.yaml set it, and "
                    "each worker checks it against the broker at start. Kafka's own default is 1,048,588, so a stock "
                    "cluster needs no change. Events are capped below it (assemble.max_bytes, in bytes); a dead "
                    "letter that would pass it keeps its original cut, flagged and hashed. The assemble state topic "
                    "takes four times it.")
    sink_session_timeout_s: float | None = Field(
        default=None, ge=1.0,
        description="A hot or cold worker the group has not heard from for this long is taken out, and its "
                    "partitions move to another; its consumer heartbeats every sixth of it, at most twice a second. "
                    "Unset: librdkafka's default, 45 s. Shorter moves a killed worker's partitions sooner, and takes "
                    "a worker out sooner when it stalls (a starved CPU). The broker accepts 6 s to 30 min unless "
                    "its group settings say otherwise. The watch stage has its own (watch.session_timeout_s).",
        examples=[10.0])

    @model_validator(mode="after")
    def _read_secret_files(self) -> KafkaSettings:
        secrets_from_files(self, {"sasl_password": "sasl_password_file",
                                  "sasl_oauthbearer_client_secret": "sasl_oauthbearer_client_secret_file",
                                  "ssl_key_password": "ssl_key_password_file"})
        if self.sasl_mechanism == "OAUTHBEARER" and not (
                self.sasl_oauthbearer_token_endpoint_url and self.sasl_oauthbearer_client_id):
            raise ValueError("sasl_mechanism OAUTHBEARER needs sasl_oauthbearer_token_endpoint_url and "
                             "sasl_oauthbearer_client_id (and the client secret)")
        if bool(self.ssl_certfile) != bool(self.ssl_keyfile):
            raise ValueError("set ssl_certfile and ssl_keyfile together (the client certificate and its key)")
        return self

    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    def uses_tls(self) -> bool:
        return self.security_protocol.endswith("SSL")

    def client_config(self) -> dict[str, Any]:
        """librdkafka (confluent-kafka) settings, secrets included: never log the result."""
        from streams.kafka_log import kafka_logger

        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            # A producer refuses a record over this at once (MSG_SIZE_TOO_LARGE) instead of the broker later.
            "message.max.bytes": self.max_message_bytes,
            "logger": kafka_logger(),  # librdkafka's lines through Python logging, once per cause
        }
        if self.sasl_mechanism:
            conf["sasl.mechanism"] = self.sasl_mechanism
        if self.sasl_mechanism == "OAUTHBEARER":
            # librdkafka's own OIDC client: it fetches and refreshes the token; no Python callback.
            conf["sasl.oauthbearer.method"] = "oidc"
            conf["sasl.oauthbearer.token.endpoint.url"] = self.sasl_oauthbearer_token_endpoint_url
            conf["sasl.oauthbearer.client.id"] = self.sasl_oauthbearer_client_id
            conf["sasl.oauthbearer.client.secret"] = _secret(self.sasl_oauthbearer_client_secret)
            if self.sasl_oauthbearer_scope:
                conf["sasl.oauthbearer.scope"] = self.sasl_oauthbearer_scope
        elif self.sasl_mechanism:
            conf["sasl.username"] = self.sasl_username or ""
            conf["sasl.password"] = _secret(self.sasl_password)
        if self.ssl_cafile:
            conf["ssl.ca.location"] = self.ssl_cafile
        if self.ssl_certfile:
            conf["ssl.certificate.location"] = self.ssl_certfile
            conf["ssl.key.location"] = self.ssl_keyfile
            if self.ssl_key_password is not None:
                conf["ssl.key.password"] = self.ssl_key_password.get_secret_value()
        return conf


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value() if value is not None else ""


class RegistrySettings(Section):
    """The schema registry (Confluent API) that holds the Avro contracts."""

    url: str = Field(
        default="http://127.0.0.1:18081/apis/ccompat/v7",
        description="Base URL of a Confluent-compatible registry API (Confluent Schema Registry, Karapace, or "
                    "Apicurio under /apis/ccompat/v7); https:// for TLS.")
    compatibility: str = Field(
        default="BACKWARD_TRANSITIVE",
        description="Compatibility level set on every subject Sluice registers. Backward-transitive: a new reader "
                    "must read every older writer's data, because a replay can go back to the start of the raw "
                    "topic's retention.")
    username: str | None = Field(default=None, description="User for HTTP basic authentication; unset: none.")
    password: SecretStr | None = Field(
        default=None, description="Password of username. Secret: prefer password_file or the environment.")
    password_file: Path | None = Field(default=None, description="A file holding the password (a mounted secret).")
    bearer_token: SecretStr | None = Field(
        default=None,
        description="A static bearer token (Authorization: Bearer) instead of a user. Secret: prefer "
                    "bearer_token_file.")
    bearer_token_file: Path | None = Field(
        default=None, description="A file holding the bearer token (a mounted secret), read once at start.")
    oauth_token_endpoint_url: str | None = Field(
        default=None,
        description="Bearer tokens from this OIDC token endpoint (client-credentials grant with oauth_client_id "
                    "and oauth_client_secret), renewed before they expire, instead of a static token.")
    oauth_client_id: str | None = Field(default=None, description="Client id at oauth_token_endpoint_url.")
    oauth_client_secret: SecretStr | None = Field(
        default=None, description="Client secret at oauth_token_endpoint_url. Secret: prefer oauth_client_secret_file.")
    oauth_client_secret_file: Path | None = Field(
        default=None, description="A file holding oauth_client_secret (a mounted secret).")
    oauth_scope: str = Field(default="", description="Scope asked of oauth_token_endpoint_url; empty: none.")
    logical_cluster: str = Field(
        default="",
        description="Sent as target-sr-cluster with bearer tokens: the logical cluster id Confluent Cloud needs "
                    "(lsrc-...); other registries ignore it.")
    ca_certs: str | None = Field(
        default=None, description="CA certificate file that verifies an https registry; unset: the system's CAs.")
    ssl_certfile: str | None = Field(
        default=None, description="Client certificate (PEM) presented to a registry that asks for one (mutual TLS).")
    ssl_keyfile: str | None = Field(default=None, description="Private key (PEM) of ssl_certfile.")
    timeout_s: float = Field(default=10.0, description="Timeout of one registry request, in seconds.")

    @model_validator(mode="after")
    def _check_auth(self) -> RegistrySettings:
        secrets_from_files(self, {"password": "password_file", "bearer_token": "bearer_token_file",
                                  "oauth_client_secret": "oauth_client_secret_file"})
        ways = [name for name, given in (("username", self.username), ("bearer_token", self.bearer_token),
                                         ("oauth_token_endpoint_url", self.oauth_token_endpoint_url)) if given]
        if len(ways) > 1:
            raise ValueError(f"set one way to authenticate to the registry, not {' and '.join(ways)}")
        if self.oauth_token_endpoint_url and not self.oauth_client_id:
            raise ValueError("oauth_token_endpoint_url needs oauth_client_id and oauth_client_secret")
        if bool(self.ssl_certfile) != bool(self.ssl_keyfile):
            raise ValueError("set ssl_certfile and ssl_keyfile together (the client certificate and its key)")
        return self

    def client_config(self) -> dict[str, Any]:
        """confluent-kafka SchemaRegistryClient settings, secrets included: never log the result."""
        conf: dict[str, Any] = {"url": self.url, "timeout": self.timeout_s}
        if self.username:
            conf["basic.auth.user.info"] = f"{self.username}:{_secret(self.password)}"
        elif self.bearer_token is not None:
            conf.update({"bearer.auth.credentials.source": "STATIC_TOKEN",
                         "bearer.auth.token": self.bearer_token.get_secret_value(),
                         "bearer.auth.logical.cluster": self.logical_cluster})
        elif self.oauth_token_endpoint_url:
            conf.update({"bearer.auth.credentials.source": "OAUTHBEARER",
                         "bearer.auth.issuer.endpoint.url": self.oauth_token_endpoint_url,
                         "bearer.auth.client.id": self.oauth_client_id,
                         "bearer.auth.client.secret": _secret(self.oauth_client_secret),
                         "bearer.auth.scope": self.oauth_scope,
                         "bearer.auth.logical.cluster": self.logical_cluster})
        if self.ca_certs:
            conf["ssl.ca.location"] = self.ca_certs
        if self.ssl_certfile:
            conf["ssl.certificate.location"] = self.ssl_certfile
            conf["ssl.key.location"] = self.ssl_keyfile
        return conf


class ElasticsearchSettings(Section):
    """The Elasticsearch cluster of the hot tier (8.x or 9.x)."""

    url: str = Field(default="http://127.0.0.1:19200", description="Base URL of the cluster (http:// or https://).")
    username: str | None = Field(default=None, description="User for basic authentication; unset: none.")
    password: SecretStr | None = Field(
        default=None, description="Password of username. Secret: prefer password_file or the environment.")
    api_key: SecretStr | None = Field(
        default=None, description="An API key instead of a user: the base64 'id:key' that _security/api_key returns as "
                          "'encoded'. Secret.")
    password_file: Path | None = Field(default=None, description="A file holding the password (a mounted secret).")
    api_key_file: Path | None = Field(default=None, description="A file holding the API key (a mounted secret).")
    ca_certs: str | None = Field(
        default=None, description="CA certificate file for an https URL; unset: the system's CAs.")
    request_timeout_s: float = Field(default=30.0, description="Timeout of one request, in seconds.")

    @model_validator(mode="after")
    def _read_secret_files(self) -> ElasticsearchSettings:
        secrets_from_files(self, {"password": "password_file", "api_key": "api_key_file"})
        return self


class ObjectStoreSettings(Section):
    """The S3-compatible object store of the cold tier (AWS S3, MinIO, Ceph, S3Proxy).

    Credentials come from boto3's default chain (environment, shared credentials and config files,
    web identity as IRSA sets it, container and instance metadata) unless a static key is set here."""

    endpoint_url: str = Field(
        default="http://127.0.0.1:19000", description="S3 endpoint URL; for AWS, https://s3.<region>.amazonaws.com.")
    region: str = Field(default="us-east-1", description="Region used to sign requests (SigV4).")
    access_key_id: str | None = Field(
        default=None,
        description="A static access key id, with secret_access_key. Unset: boto3's default credential chain "
                    "(AWS_ACCESS_KEY_ID and friends, AWS_PROFILE and the shared files, IRSA's "
                    "AWS_WEB_IDENTITY_TOKEN_FILE, ECS/EKS container credentials, EC2 instance profiles).")
    secret_access_key: SecretStr | None = Field(
        default=None,
        description="The static secret access key of access_key_id. Secret: prefer secret_access_key_file or "
                    "SLUICE_OBJECT_STORE__SECRET_ACCESS_KEY.")
    secret_access_key_file: Path | None = Field(
        default=None, description="A file holding the secret access key (a mounted secret).")
    profile: str | None = Field(
        default=None,
        description="A named profile of the shared config and credentials files (as AWS_PROFILE), used when no "
                    "static key is set; unset: AWS_PROFILE, else the default profile.")
    ca_bundle: str | None = Field(
        default=None, description="CA file that verifies an https endpoint; unset: the system's CAs.")
    default_bucket: str = Field(
        default="sluice-cold", description="Bucket of every project that names none in routing.projects.<p>.bucket.")

    @model_validator(mode="after")
    def _read_secret_files(self) -> ObjectStoreSettings:
        secrets_from_files(self, {"secret_access_key": "secret_access_key_file"})
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise ValueError("set access_key_id and secret_access_key together, or neither to use the default "
                             "credential chain")
        if self.profile and self.access_key_id:
            raise ValueError("set a static key or a profile, not both")
        return self

    def static_key(self) -> bool:
        return self.access_key_id is not None


DAY_MS = 24 * 3600 * 1000


class TopicSettings(Section):
    """Kafka topic names, partition counts and retention (what `sluice topics create` makes)."""

    raw: str = Field(default="logs.raw", description="Where node agents write raw lines.")
    events_prefix: str = Field(default="logs.events.", description="Assembled events go to <events_prefix><project>.")
    metrics: str = Field(default="logs.metrics", description="Step metrics (loss, lr, throughput, GPU memory).")
    alerts: str = Field(default="logs.alerts", description="Alerts of the watch stage, keyed by incident id.")
    incidents: str = Field(
        default="logs.incidents",
        description="Job incidents of the watch stage (the first failure across a job's ranks), keyed by incident id.")
    dlq: str = Field(default="logs.dlq", description="Dead letters: every record that could not be processed, with the "
                                             "reason and the original bytes.")
    raw_partitions: int = Field(
        default=6,
        description="Partitions bound the parallelism of every stage; 6 lets 1, 2, 3 or 6 workers share evenly.")
    events_partitions: int = Field(default=3, description="Partitions of each logs.events.<project> topic.")
    metrics_partitions: int = Field(default=3, description="Partitions of the metrics topic.")
    alerts_partitions: int = Field(default=1, description="Partitions of the alerts topic.")
    incidents_partitions: int = Field(default=1, description="Partitions of the incidents topic.")
    dlq_partitions: int = Field(default=1, description="Partitions of the dead-letter topic.")
    raw_retention_ms: int = Field(
        default=7 * DAY_MS,
        description="Retention of the raw topic: the window that `sluice replay` can re-run (7 days).")
    events_retention_ms: int = Field(
        default=3 * DAY_MS, description="Retention of the events and metrics topics (3 days).")
    dlq_retention_ms: int = Field(
        default=30 * DAY_MS,
        description="Retention of the dead-letter topic: time to fix a cause and re-drive (30 days).")
    replication_factor: int = Field(
        default=1, description="Copies of every partition; 3 on a production cluster, 1 on a single local broker.")

    def events_topic(self, project: str) -> str:
        return self.events_prefix + project


class ProjectRoute(Section):
    """One row of the routing table: where a project's events go and what they may cost."""

    index_prefix: str | None = Field(
        default=None,
        description="Prefix of the project's event indices: <index_prefix>-<task_type>-<YYYY.MM.DD>. Unset: "
                    "<hot.events_index_prefix>-<project>. With index_prefix ms-swift the indices are "
                    "ms-swift-%{task_type}-%{+YYYY.MM.dd} in Logstash's notation.",
        examples=["ms-swift"])
    bucket: str | None = Field(default=None, description="Bucket of the project's cold objects; unset: "
                                                 "object_store.default_bucket.")
    retention_days: int = Field(default=7, ge=1, description="Days the project's hot indices are kept (ILM, or the "
                                                     "retention job where the server has no ILM).")
    events_per_s: float | None = Field(
        default=None, gt=0,
        description="A cap: at most this many of the project's events per second through each sink worker (hot "
                    "and cold; like the capacities, per worker). What the cap leaves unused goes to the other "
                    "projects. Unset: no cap; the project shares the budget max-min fairly with the others, so a "
                    "quiet project always gets what it asks for.",
        examples=[500])


class ProjectClaims(Section):
    """Sources that may claim a project by label: shell-style globs; any match is enough."""

    topics: list[str] = Field(default_factory=list, description="Globs on the raw topic the assemble stage reads.",
                              examples=[["logs.raw.team-b"]])
    namespaces: list[str] = Field(default_factory=list, description="Globs on the source's Kubernetes namespace.",
                                  examples=[["team-a", "team-a-*"]])
    paths: list[str] = Field(default_factory=list, description="Globs on the source's file path.",
                             examples=[["/data/team-a/*"]])
    hosts: list[str] = Field(default_factory=list, description="Globs on the source's host name.",
                             examples=[["dgx-a*"]])


def _default_keys(field: str) -> Any:
    return Field(default_factory=lambda: list(DEFAULT_KEYS[field]), description=f"Label or annotation keys that fill "
                 f"{field}, tried in order.")


class SourceMetadataSettings(Section):
    """Which label or Kubernetes annotation of a source fills which event field: the first key of a list
    that the source carries wins, each key matching as written and de-dotted (Filebeat's
    ``app_kubernetes_io/part-of``). The defaults cover Kubeflow, JobSet, Volcano, KubeRay and
    LeaderWorkerSet pods and Sluice's own ``sluice.io/*`` keys (streams/assemble/metadata.py says which
    operator sets what); set a list to replace it, ``[]`` to turn a field off."""

    project: list[str] = _default_keys("project")
    task_id: list[str] = _default_keys("task_id")
    task_type: list[str] = _default_keys("task_type")
    model_name: list[str] = _default_keys("model_name")
    phase: list[str] = _default_keys("phase")
    node_role: list[str] = _default_keys("node_role")
    rank: list[str] = _default_keys("rank")

    def keys(self) -> dict[str, list[str]]:
        return self.model_dump()


class RoutingSettings(Section):
    """The routing table: which projects exist and where each one's events go."""

    default_project: str = Field(
        default="default", description="Project of every line whose labels name none, or name one not in projects.")
    projects: dict[str, ProjectRoute] = Field(
        default_factory=lambda: {"default": ProjectRoute()},
        description="Project name -> its route. A name becomes a Kafka topic (logs.events.<project>) and part of "
                    "index names: lowercase letters, digits, '-' and '_'.",
        examples=[{"default": {}, "swift": {"index_prefix": "ms-swift", "retention_days": 14, "events_per_s": 500,
                                            "bucket": "swift-archive"}}])
    metadata: SourceMetadataSettings = Field(
        default_factory=SourceMetadataSettings,
        description="Which source label or Kubernetes annotation fills project, task and rank fields.")
    claims: dict[str, ProjectClaims] = Field(
        default_factory=dict,
        description="Project -> the sources that may put their records in it by label (streams/assemble/trust.py, "
                    "docs/security.md). A label is the job's own say: from any other source it is ignored, the "
                    "record routed as if unlabelled and counted (sluice_project_claims_refused_total).",
        examples=[{"team-a": {"namespaces": ["team-a", "team-a-*"], "hosts": ["dgx-a*"]},
                   "team-b": {"topics": ["logs.raw.team-b"], "paths": ["/data/team-b/*"]}}])
    trust_all_labels: bool = Field(
        default=False, description="Honour every project label from every source: for a cluster whose jobs are "
                                   "all one team's.")

    @field_validator("projects")
    @classmethod
    def _names_are_topic_safe(cls, projects: dict[str, ProjectRoute]) -> dict[str, ProjectRoute]:
        for name in projects:
            if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", name):
                raise ValueError(
                    f"project name {name!r} must be lowercase letters, digits, '-' or '_' "
                    "(it becomes a Kafka topic and an Elasticsearch index name)"
                )
        return projects


class FieldSettings(Section):
    """Bounds on an event's fields (streams/assemble/fields.py)."""

    max_past_s: int = Field(
        default=730 * 86_400,
        description="A line's own time is believed back to this long before read time (the raw record's Kafka "
                    "timestamp); older, the event takes its source's last good time, flagged, and the time as "
                    "written stays in attributes. Two years covers a late backlog.")
    max_future_s: int = Field(
        default=86_400,
        description="A line's own time is believed up to this long after read time: clock skew and zone-less "
                    "local times read as UTC. A line from the year 99999 makes no index.")
    max_attributes: int = Field(
        default=64, description="Keys of a structured record that no field takes are kept in attributes, this "
                                "many at most (flagged in attributes['sluice.flags'] when cut).")
    max_attribute_chars: int = Field(
        default=1024, description="Each attribute value is cut at this length (flagged).")

    def limits(self) -> FieldLimits:
        return FieldLimits(max_past_ms=self.max_past_s * 1000, max_future_ms=self.max_future_s * 1000,
                           max_attributes=self.max_attributes, max_attribute_chars=self.max_attribute_chars)


class AssembleSettings(Section):
    """The assemble stage: raw lines in, whole parsed events out (a Faust app over the raw topic)."""

    app_id: str = Field(
        default="sluice-assemble", description="The consumer group and Faust app id; one per deployment.")
    idle_timeout_ms: int = Field(
        default=5000,
        description="A multiline block whose source has been quiet this long is emitted: that is how the last "
                    "traceback of a job that died comes out.")
    max_lines: int = Field(default=1000, description="A block longer than this is cut and flagged truncated.")
    max_record_lines: int = Field(
        default=10_000, gt=0,
        description="A record of more lines than this is one dead letter (too_many_lines), not read: its per-line "
                    "work would hold up its partition. Above the shipper's ship.max_batch_lines and the "
                    "OpenTelemetry Collector's default batch of 8,192 log records.")
    max_bytes: int = Field(
        default=512 * 1024,
        description="A block bigger than this many bytes of UTF-8 is cut and flagged truncated; with its "
                    "attributes an event must fit kafka.max_message_bytes (checked at start).")
    engine: Literal["auto", "native", "python"] = Field(
        default="auto",
        description="The per-line engine (docs/native.md): native (the compiled extension, refused at start when "
                    "it is not built), python (the reference core), auto (native where built). Both give the same "
                    "bytes; only the speed differs.")
    take_max: int = Field(
        default=2000,
        description="Records handled per turn. Each turn is one Kafka transaction; fewer, bigger turns cost "
                    "less CPU per line, at the price of holding a turn's outputs in memory.")
    take_within_s: float = Field(
        default=0.2, description="How long a turn waits to fill up: the latency added when traffic is light.")
    turn_max_bytes: int = Field(
        default=1024 * 1024,
        description="A turn ends early, with its own transaction, once its records hold this many bytes: a turn "
                    "holds all its outputs until it commits, tens of times its records' bytes at peak (batched "
                    "records of 200 lines: 1 MiB turns peak near 200 MiB RSS, 16 MiB near 500 MiB, at the same "
                    "CPU per line).")
    max_partition_fetch_bytes: int = Field(
        default=8 * 1024 * 1024,
        description="Bytes of one raw partition per fetch (Kafka's max.partition.fetch.bytes). The consumer fetches "
                    "a partition again only once its last fetch is handed out, so a small fetch ends in a wait for "
                    "the next one when records hold one line each. Up to this much per partition is held.")
    web_port: int = Field(default=6066, description="Port of Faust's own web server (the worker's /metrics is "
                                            "observability.port).")
    transactional_id: str | None = Field(
        default=None,
        description="Kafka transactional id of the worker's producer. Unset: <app_id>-<host>-<pid>, unique per "
                    "process, so a restarted worker never fences a live one.")
    transaction_timeout_ms: int = Field(
        default=10_000,
        description="The broker aborts a killed worker's open transaction after this long; until then consumers "
                    "reading committed data wait behind it (this long at most).")
    state_topic: str | None = Field(
        default=None,
        description="Compacted topic holding every source's open multiline blocks, written in the same "
                    "transactions as the outputs, so that a crash or rebalance loses no line and splits no "
                    "traceback. Unset: <app_id>-state, partitioned as the raw topic.")
    fields: FieldSettings = Field(default_factory=FieldSettings,
                                  description="Bounds on the values lifted into an event's fields.")

    def state_topic_name(self) -> str:
        return self.state_topic or f"{self.app_id}-state"


class CustomSecretRule(Section):
    """A kind of secret of your own (an internal token format)."""

    kind: str = Field(description="Its name, written into the replacement: [REDACTED:<kind>].")
    pattern: str = Field(description="A Python regex; the secret is its group \"s\", else the whole match.",
                         examples=[r"\bTKT-[A-Z0-9]{24}\b"])
    needles: list[str] = Field(
        default_factory=list, description="Lower-case literals every match contains: the fast gate runs the rule "
                                          "only on texts holding one. Empty: the rule runs on every text.",
        examples=[["tkt-"]])

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regex: {exc}") from None
        return pattern


class RedactionSettings(Section):
    """Additions and exceptions to the built-in secret rules (streams/assemble/secret_rules.py, docs/security.md)."""

    extra_rules: list[CustomSecretRule] = Field(
        default_factory=list, description="Kinds of secret of your own.",
        examples=[[{"kind": "ticket_token", "pattern": r"\bTKT-[A-Z0-9]{24}\b", "needles": ["tkt-"]}]])
    allow: list[str] = Field(
        default_factory=list, description="Regexes of values never redacted, matched against the whole candidate "
                                          "(a public demo key in the docs).",
        examples=[["AKIAIOSFODNN7EXAMPLE"]])
    secret_keys: list[str] = Field(
        default_factory=list, description="More key-name endings whose values are always secret, in text "
                                          "(pin=...) and in attributes and labels.",
        examples=[["pin", "otp"]])


class DeadLetterSettings(Section):
    """The key that seals dead letters' original bytes (AES-256-GCM, streams/deadletter.py)."""

    key: SecretStr | None = Field(
        default=None, description="Base64 of 32 bytes, from `sluice dlq keygen`. Every stage that writes dead "
                                  "letters seals with it; `sluice dlq redrive` and `dlq show --raw` open with it. "
                                  "Unset: originals are kept as read, and the workers warn. Secret: never printed.")
    key_file: Path | None = Field(
        default=None, description="A file holding the key (a mounted secret), read once at start.")
    previous_keys: list[SecretStr] = Field(
        default_factory=list, description="Keys that still open letters sealed before a rotation; never used to "
                                          "seal. Drop one once the dead-letter topic's retention has passed.")

    @model_validator(mode="after")
    def _read_secret_files(self) -> DeadLetterSettings:
        secrets_from_files(self, {"key": "key_file"})
        return self


class ObservabilitySettings(Section):
    """Metrics, health endpoints and logs of every worker."""

    port: int | None = Field(
        default=None, description="Port of /metrics (Prometheus), /healthz and /readyz. Unset: the stage's own port "
                                  "(assemble 9108, hot 9109, cold 9110, watch 9111), so that the workers of one host "
                                  "do not collide; 0: any free port (the worker logs the address at start).")
    host: str = Field(
        default="127.0.0.1",
        description="Address the endpoints listen on. Loopback by default: metrics name projects, topics and "
                    "hosts. In a pod, bind the pod's own IP (deploy/k8s sets it from status.podIP) and let a "
                    "NetworkPolicy admit only Prometheus and the kubelet's probes.")
    # Above the longest wait a healthy turn has: a transaction (assemble.transaction_timeout_ms) or a bulk request.
    stuck_after_s: float = Field(
        default=120.0, gt=0, description="/healthz fails once the event loop or the worker's own loop (a batch, an "
                                         "idle tick, a sink step) has not turned for this many seconds.")
    summary_interval_s: float = Field(
        default=60.0, description="Seconds between a worker's summary lines at INFO (per-request lines are DEBUG); "
                                  "0 turns them off.")
    log_format: Literal["text", "json"] = Field(
        default="text", description="Log lines as text for people, or one JSON object per line for a log pipeline "
                            "(also `sluice --log-format json`).")


class StackSettings(Section):
    """The developer's local servers (`python -m devtools stack up`); not used by the workers."""

    dir: Path = Field(
        default=REPO_ROOT / ".stack",
        description="Where the local servers keep their files, logs and pid files.",
        json_schema_extra={"reference_default": ".stack in the checkout"})
    kafka_controller_port: int = Field(default=19093, description="Port of the local Kafka's KRaft controller.")
    kafka_version: str = Field(default="4.1.1", description="Kafka version the local stack runs.")
    elasticsearch_version: str = Field(
        default="9.5.0", description="Elasticsearch version the local stack runs (8.x and 9.x integ-test-zips work).")
    s3proxy_version: str = Field(default="4.1.0", description="S3Proxy version the local stack runs.")
    kafka_heap: str = Field(default="512m", description="JVM heap of the local Kafka.")
    elasticsearch_heap: str = Field(default="512m", description="JVM heap of the local Elasticsearch.")
    elasticsearch_user: str = Field(
        default="sluice", description="Elasticsearch refuses to run as root; as root the stack runs it as this user "
                             "(created if missing).")
    elasticsearch_java_home: Path | None = Field(
        default=None,
        description="Java for Elasticsearch (21+ for 9.x, 17+ for 8.x); unset: the newest JDK found under "
                    "/usr/lib/jvm or JAVA_HOME.")
    elasticsearch_extra: dict[str, str] = Field(
        default_factory=dict,
        description="Extra elasticsearch.yml settings, e.g. a tiny write queue for a node that must answer 429.",
        examples=[{"thread_pool.write.queue_size": "1"}])
    tls: bool = Field(
        default=False,
        description="Secured local servers: a local CA and server certificate under <dir>/tls; Kafka's client "
                    "listener speaks kafka.security_protocol with SCRAM users from kafka.sasl_*; Elasticsearch "
                    "serves https with security on and elasticsearch.username as a superuser; the object store "
                    "serves https; the registry serves https behind a front that admits registry.username or "
                    "registry.bearer_token.")
    kafka_internal_port: int = Field(
        default=19094,
        description="With tls: the loopback PLAINTEXT listener the broker uses for itself and for creating "
                    "SCRAM users.")
    kafka_oauthbearer_jwks_url: str | None = Field(
        default=None,
        description="With tls and kafka.sasl_mechanism OAUTHBEARER: the JWKS URL of the token issuer, which the "
                    "broker checks every token against (the tests run devtools/stack/oidc.py as the issuer).")
    kafka_oauthbearer_audience: str = Field(
        default="kafka", description="With OAUTHBEARER: the audience (aud claim) the broker expects in tokens.")
    registry_internal_port: int = Field(
        default=18082,
        description="With tls: the loopback port of the registry itself, behind its https front on the port of "
                    "registry.url (devtools/stack/registry_front.py), which checks the registry user or token.")


class Settings(BaseSettings):
    """Everything Sluice reads: connections, topics, routing, and each stage's own section."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid")

    kafka: KafkaSettings = Field(default_factory=KafkaSettings, description=KafkaSettings.__doc__)
    registry: RegistrySettings = Field(default_factory=RegistrySettings, description=RegistrySettings.__doc__)
    elasticsearch: ElasticsearchSettings = Field(default_factory=ElasticsearchSettings,
                                                 description=ElasticsearchSettings.__doc__)
    object_store: ObjectStoreSettings = Field(default_factory=ObjectStoreSettings,
                                              description=ObjectStoreSettings.__doc__)
    topics: TopicSettings = Field(default_factory=TopicSettings, description=TopicSettings.__doc__)
    routing: RoutingSettings = Field(default_factory=RoutingSettings, description=RoutingSettings.__doc__)
    assemble: AssembleSettings = Field(default_factory=AssembleSettings, description=AssembleSettings.__doc__)
    hot: HotSinkSettings = Field(default_factory=HotSinkSettings, description=HotSinkSettings.__doc__)
    cold: ColdSinkSettings = Field(default_factory=ColdSinkSettings, description=ColdSinkSettings.__doc__)
    watch: WatchSettings = Field(default_factory=WatchSettings, description=WatchSettings.__doc__)
    ship: ShipSettings = Field(default_factory=ShipSettings, description=ShipSettings.__doc__)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings, description=RedactionSettings.__doc__)
    dead_letters: DeadLetterSettings = Field(default_factory=DeadLetterSettings,
                                             description=DeadLetterSettings.__doc__)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings,
                                                 description=ObservabilitySettings.__doc__)
    stack: StackSettings = Field(default_factory=StackSettings, description=StackSettings.__doc__)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = config_path()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path is not None:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=path))
        return (*sources, file_secret_settings)

    def projects(self) -> list[str]:
        names = set(self.routing.projects)
        names.add(self.routing.default_project)
        return sorted(names)


def config_path() -> Path | None:
    """The configuration file in effect: ``--config``, else ``$SLUICE_CONFIG``, else ``./sluice.yaml``."""
    given = _CONFIG_FILE.get()
    if given is not None:
        if not given.is_file():
            raise ConfigError(f"--config {given} does not exist; point it at a YAML file")
        return given
    explicit = os.environ.get("SLUICE_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"SLUICE_CONFIG={explicit} does not exist; point it at a YAML file or unset it")
        return path
    default = Path.cwd() / "sluice.yaml"
    return default if default.is_file() else None


@contextmanager
def config_file(path: Path | None) -> Iterator[None]:
    """Within the block, ``path`` is the configuration file (as ``sluice --config`` makes it)."""
    token = _CONFIG_FILE.set(path)
    try:
        yield
    finally:
        _CONFIG_FILE.reset(token)


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Defaults < the configuration file (``config``, else as :func:`config_path` finds it) < the environment
    < ``overrides``. Raises :class:`ConfigError` naming the setting and the reason, never the value."""
    token = _CONFIG_FILE.set(config) if config is not None else None
    try:
        path = config_path()
        where = path or "defaults and environment"
        if path is not None:
            read_config_file(path)  # a YAML error as one line naming the file and the line
        problems = unknown_environment(Settings, os.environ, ENV_PREFIX)
        if problems:
            raise ConfigError(f"invalid configuration ({where}): {'; '.join(problems)}")
        try:
            return Settings(**overrides)
        except ValidationError as exc:
            # Where and why, never the input: a section's input holds its secrets. `from None` keeps
            # pydantic's own text (input included) out of tracebacks too.
            raise ConfigError(f"invalid configuration ({where}): {validation_problems(exc)}") from None
        except ValueError as exc:  # pydantic-settings' own errors (an unparsable environment value)
            raise ConfigError(f"invalid configuration ({where}): {exc}") from exc
    finally:
        if token is not None:
            _CONFIG_FILE.reset(token)


def read_config_file(path: Path) -> dict[str, Any]:
    """The YAML file as a mapping; errors name the file and the line."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where} is not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, not {type(data).__name__}")
    return data


def validate_file(path: Path) -> Section:
    """The file alone (no environment) as settings, or :class:`ConfigError` naming each problem."""
    # Settings itself reads the environment whenever it validates; its fields in a plain model do not.
    fields: dict[str, Any] = {name: (field.annotation, field) for name, field in Settings.model_fields.items()}
    file_only = create_model("FileSettings", __base__=Section, **fields)
    try:
        return file_only.model_validate(read_config_file(path))
    except ValidationError as exc:
        raise InvalidConfig(path, problem_lines(exc)) from None


class InvalidConfig(ConfigError):
    """A configuration file with one problem or more; ``problems`` are ``section.field: reason`` lines."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{path}: {'; '.join(problems)}")
        self.path = path
        self.problems = problems


def validation_problems(exc: ValidationError) -> str:
    return "; ".join(problem_lines(exc))


def problem_lines(exc: ValidationError) -> list[str]:
    """``section.field: reason`` for each error, with the nearest valid name for an unknown key."""
    out = []
    for err in exc.errors(include_input=False, include_url=False):
        loc = [str(p) for p in err["loc"]]
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown setting" + unknown_key_hint(Settings, loc)
        out.append(f"{'.'.join(loc)}: {msg}")
    return out


def port_of(url_or_hostport: str) -> int:
    """The port of ``http://h:p/...`` or ``h:p`` (first entry of a bootstrap list)."""
    first = url_or_hostport.split(",", maxsplit=1)[0].strip()
    if "://" not in first:
        first = "tcp://" + first
    port = urlsplit(first).port
    if port is None:
        raise ConfigError(f"{url_or_hostport!r} names no port; the local stack needs an explicit one")
    return port
