"""Typed configuration: one YAML file plus environment overrides.

Resolution order (later wins): defaults declared here, the YAML file (``$SLUICE_CONFIG``, else
``./sluice.yaml`` when present), then environment variables ``SLUICE_<SECTION>__<FIELD>``
(for example ``SLUICE_KAFKA__BOOTSTRAP_SERVERS=broker:9092``). Secrets are ``SecretStr``
so they never print.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from streams.errors import ConfigError
from streams.sinks.elasticsearch.settings import HotSinkSettings
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.watch.settings import WatchSettings

REPO_ROOT = Path(__file__).resolve().parent.parent


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


class KafkaSettings(BaseModel):
    # Loopback port away from 9092 so the local stack does not collide with a real broker.
    bootstrap_servers: str = "127.0.0.1:19092"
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    sasl_password_file: Path | None = None  # the password read from a file (a mounted secret)
    ssl_cafile: str | None = None

    @model_validator(mode="after")
    def _read_secret_files(self) -> KafkaSettings:
        secrets_from_files(self, {"sasl_password": "sasl_password_file"})
        return self

    def client_config(self) -> dict[str, Any]:
        """librdkafka (confluent-kafka) settings, secrets included: never log the result."""
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        if self.sasl_mechanism:
            conf["sasl.mechanism"] = self.sasl_mechanism
            conf["sasl.username"] = self.sasl_username or ""
            conf["sasl.password"] = self.sasl_password.get_secret_value() if self.sasl_password else ""
        if self.ssl_cafile:
            conf["ssl.ca.location"] = self.ssl_cafile
        return conf


class RegistrySettings(BaseModel):
    # Apicurio's Confluent-compatible API lives under /apis/ccompat/v7.
    url: str = "http://127.0.0.1:18081/apis/ccompat/v7"
    # Backward-transitive: a new reader must read every older writer's data (replays go back days).
    compatibility: str = "BACKWARD_TRANSITIVE"


class ElasticsearchSettings(BaseModel):
    url: str = "http://127.0.0.1:19200"
    username: str | None = None
    password: SecretStr | None = None
    api_key: SecretStr | None = None  # the base64 "id:key" that `_security/api_key` returns as "encoded"
    password_file: Path | None = None
    api_key_file: Path | None = None
    ca_certs: str | None = None
    request_timeout_s: float = 30.0

    @model_validator(mode="after")
    def _read_secret_files(self) -> ElasticsearchSettings:
        secrets_from_files(self, {"password": "password_file", "api_key": "api_key_file"})
        return self


class ObjectStoreSettings(BaseModel):
    endpoint_url: str = "http://127.0.0.1:19000"
    region: str = "us-east-1"
    access_key_id: str = "sluice"
    secret_access_key: SecretStr = SecretStr("sluice-local-secret")
    secret_access_key_file: Path | None = None
    ca_bundle: str | None = None  # CA file that verifies an https endpoint; None = the system's CAs
    default_bucket: str = "sluice-cold"

    @model_validator(mode="after")
    def _read_secret_files(self) -> ObjectStoreSettings:
        secrets_from_files(self, {"secret_access_key": "secret_access_key_file"})
        return self


class TopicSettings(BaseModel):
    raw: str = "logs.raw"
    events_prefix: str = "logs.events."
    metrics: str = "logs.metrics"
    alerts: str = "logs.alerts"
    dlq: str = "logs.dlq"
    # Partitions bound the parallelism of every stage; 6 lets 1, 2, 3 or 6 workers share evenly.
    raw_partitions: int = 6
    events_partitions: int = 3
    metrics_partitions: int = 3
    alerts_partitions: int = 1
    dlq_partitions: int = 1
    # The raw topic is the replay window: 7 days, as DESIGN.md promises operators.
    raw_retention_ms: int = 7 * 24 * 3600 * 1000
    events_retention_ms: int = 3 * 24 * 3600 * 1000
    dlq_retention_ms: int = 30 * 24 * 3600 * 1000
    replication_factor: int = 1

    def events_topic(self, project: str) -> str:
        return self.events_prefix + project


class ProjectRoute(BaseModel):
    """One row of the routing table: where a project's events go and what they may cost."""

    index_prefix: str | None = None  # default: logs-<project>
    bucket: str | None = None  # default: object_store.default_bucket
    retention_days: int = 7
    events_per_s: float | None = None  # per-project share of the sink budget; None = fair share


class RoutingSettings(BaseModel):
    default_project: str = "default"
    projects: dict[str, ProjectRoute] = Field(default_factory=lambda: {"default": ProjectRoute()})

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


class AssembleSettings(BaseModel):
    """The assemble stage (a Faust app over logs.raw)."""

    app_id: str = "sluice-assemble"  # the consumer group; one per deployment
    # A block with no new line for this long is emitted: the last traceback of a job that died.
    idle_timeout_ms: int = 5000
    max_lines: int = 1000  # a longer block is cut and flagged truncated
    max_bytes: int = 512 * 1024
    # The largest message the stage writes (an event, a metric point, a dead letter), Kafka's default
    # broker and topic limit (message.max.bytes, max.message.bytes). A larger output would be refused by
    # the broker and roll its turn back for ever; it is a `too_large` dead letter instead, and a dead
    # letter's original is cut to fit. Raise it only with the topics' own limit.
    max_message_bytes: int = 1_000_000
    # Records handled per turn, and how long a turn waits to fill up (latency vs. per-turn cost). A turn
    # ends early, with its own transaction, once its records hold turn_max_bytes: 2,000 one-line records
    # are one turn (with a transaction per 500 the worker used 9% more CPU per line and drained 12% fewer
    # lines per second), while 2,000 records of 200 lines would be 60 MB of input, its outputs held at once.
    take_max: int = 2000
    take_within_s: float = 0.2
    turn_max_bytes: int = 16 * 1024 * 1024
    # Bytes of one raw partition per fetch (Kafka's max.partition.fetch.bytes; Faust's consumer_max_fetch_size).
    # aiokafka fetches a partition again only once the records of its last fetch are all handed out, so
    # each fetch ends in a wait for the next. At 1 MiB (aiokafka's default) a worker fed one line per
    # record drained 7,510-7,555 lines/s, at 8 MiB 8,710-8,851, with the same CPU per line and a peak RSS
    # of 200 MiB instead of 170 (tests/perf/assemble_bench.py --passes 4 --batch-lines 1). With 200-line
    # records it made no difference. Up to this much per partition is held.
    max_partition_fetch_bytes: int = 8 * 1024 * 1024
    web_port: int = 6066
    # Outputs and raw offsets are written in one Kafka transaction per turn. Unset, the transactional id
    # is "<app_id>-<host>-<pid>": unique per process, so a restarted worker never fences a live one; a
    # killed worker's open transaction is aborted by the broker after transaction_timeout_ms, and until
    # then read_committed consumers of the events topics wait (that long at most).
    transactional_id: str | None = None
    transaction_timeout_ms: int = 10_000
    # Compacted topic with the open blocks of every source (streams/assemble/state.py), written in
    # the same transactions; default "<app_id>-state", partitioned as logs.raw.
    state_topic: str | None = None

    def state_topic_name(self) -> str:
        return self.state_topic or f"{self.app_id}-state"


class ObservabilitySettings(BaseModel):
    # /metrics, /healthz and /readyz of every worker; 0 turns the endpoint off.
    port: int = 9108
    host: str = "0.0.0.0"  # noqa: S104 - a pod's probes and Prometheus reach it from outside


class StackSettings(BaseModel):
    """The local servers started by ``python -m devtools stack up``. Ports come from the connection URLs."""

    dir: Path = REPO_ROOT / ".stack"
    kafka_controller_port: int = 19093
    kafka_version: str = "4.1.1"
    elasticsearch_version: str = "9.5.0"
    s3proxy_version: str = "4.1.0"
    kafka_heap: str = "512m"
    elasticsearch_heap: str = "512m"
    # Elasticsearch refuses to run as root; the stack runs it as this user (created if missing).
    elasticsearch_user: str = "sluice"
    # Elasticsearch 9 needs Java 21+; None = the newest JDK found under /usr/lib/jvm or JAVA_HOME.
    elasticsearch_java_home: Path | None = None
    # Extra elasticsearch.yml settings, e.g. a tiny write queue for a node that must answer 429.
    elasticsearch_extra: dict[str, str] = Field(default_factory=dict)
    # Secured servers (README "Secured connections"): a local CA and server certificate under
    # <dir>/tls; Kafka's client listener speaks kafka.security_protocol (SASL_SSL, SCRAM users
    # from kafka.sasl_*), with a loopback PLAINTEXT listener on kafka_internal_port for the broker
    # itself; Elasticsearch serves https with security on and the elasticsearch.username user.
    tls: bool = False
    kafka_internal_port: int = 19094


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLUICE_", env_nested_delimiter="__", extra="forbid")

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    registry: RegistrySettings = Field(default_factory=RegistrySettings)
    elasticsearch: ElasticsearchSettings = Field(default_factory=ElasticsearchSettings)
    object_store: ObjectStoreSettings = Field(default_factory=ObjectStoreSettings)
    topics: TopicSettings = Field(default_factory=TopicSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    assemble: AssembleSettings = Field(default_factory=AssembleSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    # The sinks' own settings (also SLUICE_HOT__<FIELD> / SLUICE_COLD__<FIELD>).
    hot: HotSinkSettings = Field(default_factory=HotSinkSettings)
    cold: ColdSinkSettings = Field(default_factory=ColdSinkSettings)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    stack: StackSettings = Field(default_factory=StackSettings)

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
    explicit = os.environ.get("SLUICE_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"SLUICE_CONFIG={explicit} does not exist; point it at a YAML file or unset it")
        return path
    default = Path.cwd() / "sluice.yaml"
    return default if default.is_file() else None


def load_settings(**overrides: Any) -> Settings:
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        # Where and why, never the input: a section's input holds its secrets. `from None` keeps
        # pydantic's own text (input included) out of tracebacks too.
        where = config_path() or "defaults and environment"
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                             for err in exc.errors(include_input=False, include_url=False))
        raise ConfigError(f"invalid configuration ({where}): {problems}") from None
    except ValueError as exc:  # pydantic-settings' own errors (an unparsable environment value)
        raise ConfigError(f"invalid configuration ({config_path() or 'defaults and environment'}): {exc}") from exc


def port_of(url_or_hostport: str) -> int:
    """The port of ``http://h:p/...`` or ``h:p`` (first entry of a bootstrap list)."""
    first = url_or_hostport.split(",", maxsplit=1)[0].strip()
    if "://" not in first:
        first = "tcp://" + first
    port = urlsplit(first).port
    if port is None:
        raise ConfigError(f"{url_or_hostport!r} names no port; the local stack needs an explicit one")
    return port
