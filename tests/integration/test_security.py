"""Secured connections against real servers: a private Kafka with a SASL_SSL (SCRAM-SHA-512)
listener and a private Elasticsearch with https and security on, both made by the stack code
with ``stack.tls`` (README "Secured connections"). The shared stack is never touched.

The secrets test sets every secret to a value it can recognise, runs operations that succeed and
operations that fail, and looks for those values in everything an operator or a log shipper could
see: log records, stdout/stderr (librdkafka writes there), exception text with its chain,
``repr``/JSON of the settings, ``python -m devtools stack status`` and a worker's output.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import ssl
import subprocess
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from pydantic import SecretStr

from devtools.stack.base import free_port, stop_gracefully
from devtools.stack.tls import make_ca
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, ElasticsearchSettings, ProjectRoute, RoutingSettings, Settings, load_settings
from streams.kafka_log import OncePerCause, kafka_logger
from streams.topics import TopicSpec, create_topics

# Recognisable, realistic-looking secrets: if any of these shows up anywhere, the test names it.
KAFKA_PASSWORD = "kafka-scram-Qx7vT2mN9pLw4RzK"
ES_PASSWORD = "es-basic-Hb3nW8sYq5JcV1dF"
# What `_security/api_key` answers as "encoded": base64 of "<id>:<api key>".
ES_API_KEY = base64.b64encode(b"VuaCfGcBCdbkQm-e5aOx:ui2lp2axTNmsyakw9tvNnw").decode()
S3_SECRET = "s3-secret-wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGISTRY_PASSWORD = "registry-basic-Zt4pQ8rLm2XvHs"
SECRETS = (KAFKA_PASSWORD, ES_PASSWORD, ES_API_KEY, S3_SECRET, REGISTRY_PASSWORD)


@pytest.fixture(scope="module")
def secure(module_private_server: Callable[..., tuple[Settings, Any]],
           tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One TLS stack directory (one CA) holding a private SASL_SSL Kafka, an https Elasticsearch and an
    https registry with a user (its front, devtools/stack/registry_front.py)."""
    home = tmp_path_factory.mktemp("secure-stack")
    kafka_conn = {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "sluice",
                  "sasl_password": SecretStr(KAFKA_PASSWORD)}
    settings, _ = module_private_server("kafka", connection=kafka_conn, home=home, tls=True)
    settings, _ = module_private_server("registry", base=settings, home=home, tls=True, connection={
        "username": "sluice-registry", "password": SecretStr(REGISTRY_PASSWORD)})
    settings, _ = module_private_server("elasticsearch", base=settings, home=home, tls=True,
                                        connection={"username": "sluice-admin", "password": SecretStr(ES_PASSWORD)})
    return settings


@pytest.fixture(scope="module")
def private_s3(module_private_server: Callable[..., tuple[Settings, Any]], secure: Settings) -> Settings:
    """An https object store in the same TLS stack directory (same CA) as ``secure``."""
    settings, _ = module_private_server("objectstore", base=secure, home=secure.stack.dir, tls=True,
                                        connection={"access_key_id": "sluice-test",
                                                    "secret_access_key": SecretStr(S3_SECRET)})
    return settings


def with_kafka(settings: Settings, **update: Any) -> Settings:
    return settings.model_copy(update={"kafka": settings.kafka.model_copy(update=update)})


def with_es(settings: Settings, **update: Any) -> Settings:
    return settings.model_copy(update={"elasticsearch": settings.elasticsearch.model_copy(update=update)})


def es_of(settings: Settings, **update: Any) -> ElasticsearchSettings:
    return settings.elasticsearch.model_copy(update=update)


def round_trip(settings: Settings, topic: str, values: list[bytes]) -> list[bytes]:
    producer = Producer({**settings.kafka.client_config(), "enable.idempotence": True})
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(20) == 0
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"sec-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < len(values) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value())
    finally:
        consumer.close()
    return got


def refused(conf: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> str:
    """Ask for metadata with ``conf``, which must fail; returns the errors librdkafka reported (its log
    lines go through Python logging, once per cause, so the errors are collected from error_cb)."""
    errors: list[Any] = []
    admin = AdminClient({**conf, "error_cb": errors.append})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=6)
    admin.poll(0.5)
    return "\n".join(e.str() for e in errors)


# -- Kafka over SASL_SSL ------------------------------------------------------------------------

def test_kafka_round_trip_over_sasl_ssl_with_scram(secure: Settings) -> None:
    assert secure.kafka.client_config()["security.protocol"] == "SASL_SSL"
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    create_topics(secure, [TopicSpec(topic, 1, {})])
    values = [f"line {i} over TLS".encode() for i in range(20)]
    assert round_trip(secure, topic, values) == values


def test_kafka_refuses_a_wrong_password(secure: Settings, capfd: pytest.CaptureFixture[str]) -> None:
    wrong = with_kafka(secure, sasl_password=SecretStr("not-the-password"))
    logged = refused(wrong.kafka.client_config(), capfd)
    assert "Authentication failed" in logged and "SCRAM-SHA-512" in logged, logged
    missing = with_kafka(secure, sasl_username="nobody")
    assert "Authentication failed" in refused(missing.kafka.client_config(), capfd)


def test_kafka_tls_listener_refuses_a_plaintext_client(secure: Settings, capfd: pytest.CaptureFixture[str]) -> None:
    refused({"bootstrap.servers": secure.kafka.bootstrap_servers, "security.protocol": "PLAINTEXT"}, capfd)
    # TLS without SASL is refused too: the listener asks for SCRAM.
    no_sasl = {"bootstrap.servers": secure.kafka.bootstrap_servers, "security.protocol": "SSL",
               "ssl.ca.location": secure.kafka.ssl_cafile}
    refused(no_sasl, capfd)


def test_kafka_refuses_a_client_that_does_not_trust_its_ca(
    secure: Settings, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from cryptography.hazmat.primitives import serialization

    _key, other_ca = make_ca("someone else's CA")
    (tmp_path / "other-ca.pem").write_bytes(other_ca.public_bytes(serialization.Encoding.PEM))
    logged = refused(with_kafka(secure, ssl_cafile=str(tmp_path / "other-ca.pem")).kafka.client_config(), capfd)
    assert "certificate verify failed" in logged, logged


# -- Elasticsearch over https ----------------------------------------------------------------

def test_elasticsearch_https_with_basic_auth_indexes_and_searches(secure: Settings) -> None:
    assert secure.elasticsearch.url.startswith("https://")
    es = es_client(secure.elasticsearch)
    index = f"sec-{uuid.uuid4().hex[:8]}"
    es.index(index=index, id="e1", document={"message": "NCCL watchdog timeout", "rank": 3}, refresh=True)
    hits = es.search(index=index, query={"match": {"message": "watchdog"}})["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["e1"]
    assert es.security.authenticate()["username"] == "sluice-admin"


def test_elasticsearch_without_credentials_answers_401(secure: Settings) -> None:
    ca = ssl.create_default_context(cafile=secure.elasticsearch.ca_certs)
    assert httpx.get(f"{secure.elasticsearch.url}/_cluster/health", verify=ca, timeout=10).status_code == 401
    from elasticsearch import AuthenticationException

    with pytest.raises(AuthenticationException):
        es_client(es_of(secure, username=None, password=None)).search(index="*")
    with pytest.raises(AuthenticationException):
        es_client(es_of(secure, password=SecretStr("wrong-password"))).search(index="*")


def test_elasticsearch_with_the_wrong_ca_fails_the_tls_handshake(secure: Settings, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from elasticsearch import SSLError as EsSSLError

    _key, other_ca = make_ca("someone else's CA")
    (tmp_path / "other-ca.pem").write_bytes(other_ca.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{secure.elasticsearch.url}/_cluster/health", timeout=10,
                  verify=ssl.create_default_context(cafile=str(tmp_path / "other-ca.pem")))
    bad = with_es(secure, ca_certs=str(tmp_path / "other-ca.pem"), request_timeout_s=5)
    client = es_client(bad.elasticsearch).options(max_retries=0)
    with pytest.raises(EsSSLError) as info:
        client.search(index="*")
    assert "CERTIFICATE_VERIFY_FAILED" in "".join(traceback.format_exception(info.value))


def test_elasticsearch_api_key_issued_by_the_node_is_limited_to_its_role(secure: Settings) -> None:
    """A key created through the API authenticates as itself, writes where its role allows and is
    refused elsewhere; a key the node never issued is refused."""
    from elasticsearch import ApiError, AuthenticationException

    key = api_key(secure, "sluice-hot-test", HOT_ROLE)
    hot = es_client(es_of(secure, username=None, password=None, api_key=SecretStr(key)))
    assert hot.security.authenticate()["api_key"]["name"] == "sluice-hot-test"
    index = f"sluice-logs-{uuid.uuid4().hex[:8]}-sft-2026.01.01"
    hot.index(index=index, id="e1", document={"message": "written with an API key"}, refresh=True)
    assert es_client(secure.elasticsearch).get(index=index, id="e1")["_source"]["message"] == "written with an API key"
    with pytest.raises(ApiError) as refused:
        hot.index(index=f"other-{uuid.uuid4().hex[:8]}", document={"m": 1})
    assert refused.value.meta.status == 403
    with pytest.raises(AuthenticationException):
        es_client(es_of(secure, username=None, password=None, api_key=SecretStr(ES_API_KEY))).search(index="*")


# -- Schema registry over https with a user ---------------------------------------------------

def test_registry_over_https_with_basic_auth(secure: Settings, tmp_path: Path) -> None:
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    from cryptography.hazmat.primitives import serialization

    from streams.clients import registry_client

    reg = secure.registry
    assert reg.url.startswith("https://") and reg.username
    client = registry_client(reg)
    assert isinstance(client.get_subjects(), list)
    for wrong in ({"password": SecretStr("not-the-password")}, {"username": None, "password": None}):
        with pytest.raises(SchemaRegistryError) as info:
            registry_client(reg.model_copy(update=wrong)).get_subjects()
        assert info.value.http_status_code == 401
    _key, other_ca = make_ca("someone else's CA")
    (tmp_path / "other-ca.pem").write_bytes(other_ca.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
        registry_client(reg.model_copy(update={"ca_certs": str(tmp_path / "other-ca.pem")})).get_subjects()


def test_registry_front_takes_a_bearer_token_and_a_client_certificate(secure: Settings, tmp_path: Path) -> None:
    """The same front, set for a bearer token and mutual TLS, in front of the secured registry's own port."""
    import json as jsonlib

    from confluent_kafka.schema_registry.error import SchemaRegistryError

    from devtools.stack.tls import tls_files
    from streams.clients import registry_client

    certs = tls_files(secure.stack.dir / "tls")
    port, token = free_port(), "registry-bearer-" + uuid.uuid4().hex
    conf = tmp_path / "front.json"
    conf.write_text(jsonlib.dumps({"listen_port": port, "upstream_port": secure.stack.registry_internal_port,
                                   "cert": str(certs.cert), "key": str(certs.key), "client_ca": str(certs.ca),
                                   "bearer": token}))
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]  # the front lives while its child does
    front = subprocess.Popen([sys.executable, "-m", "devtools.stack.registry_front", str(conf), "--", *sleeper],
                             cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        base = secure.registry.model_copy(update={
            "url": f"https://127.0.0.1:{port}/apis/ccompat/v7", "username": None, "password": None,
            "bearer_token": SecretStr(token), "ssl_certfile": str(certs.client_cert),
            "ssl_keyfile": str(certs.client_key)})
        deadline = time.monotonic() + 20
        while True:
            try:
                subjects = registry_client(base).get_subjects()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        assert isinstance(subjects, list)
        with pytest.raises(SchemaRegistryError) as info:
            registry_client(base.model_copy(update={"bearer_token": SecretStr("forged")})).get_subjects()
        assert info.value.http_status_code == 401
        with pytest.raises(Exception, match=r"(?i)certificate|handshake|alert|reset|EOF|disconnected"):
            registry_client(base.model_copy(update={"ssl_certfile": None, "ssl_keyfile": None})).get_subjects()
    finally:
        front.terminate()
        front.wait(20)


# -- Object store over https ------------------------------------------------------------------

def test_object_store_over_https_with_the_stack_ca(private_s3: Settings, tmp_path: Path) -> None:
    from botocore.exceptions import ClientError, SSLError
    from cryptography.hazmat.primitives import serialization

    store = private_s3.object_store
    assert store.endpoint_url.startswith("https://") and store.ca_bundle
    s3 = s3_client(store, timeout_s=5)
    s3.create_bucket(Bucket="tls-bucket")
    s3.put_object(Bucket="tls-bucket", Key="a/b.avro", Body=b"payload")
    assert s3.get_object(Bucket="tls-bucket", Key="a/b.avro")["Body"].read() == b"payload"
    with pytest.raises(ClientError, match=r"SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied"):
        s3_client(store.model_copy(update={"secret_access_key": SecretStr("wrong")}), timeout_s=5).list_buckets()
    _key, other_ca = make_ca("someone else's CA")
    (tmp_path / "other-ca.pem").write_bytes(other_ca.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(SSLError):
        s3_client(store.model_copy(update={"ca_bundle": str(tmp_path / "other-ca.pem")}), timeout_s=5).list_buckets()


def test_object_store_key_from_the_default_credential_chain(
    private_s3: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No static key in the settings: the key comes from the environment, or from a profile of a shared
    credentials file; a wrong key found there is refused like a wrong static one."""
    from botocore.exceptions import ClientError

    server = private_s3.object_store
    chain = server.model_copy(update={"access_key_id": None, "secret_access_key": None})
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance metadata to wait for here
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))

    with monkeypatch.context() as env:  # the environment route
        env.setenv("AWS_ACCESS_KEY_ID", server.access_key_id or "")
        env.setenv("AWS_SECRET_ACCESS_KEY", S3_SECRET)
        s3_client(chain, timeout_s=5).create_bucket(Bucket="chain-env")
        env.setenv("AWS_SECRET_ACCESS_KEY", S3_SECRET + "-old")
        with pytest.raises(ClientError, match=r"SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied"):
            s3_client(chain, timeout_s=5).list_buckets()

    credentials = tmp_path / "credentials"  # the shared-file route, by profile name
    credentials.write_text(f"[default]\naws_access_key_id = nobody\naws_secret_access_key = wrong\n"
                           f"[sluice-cold]\naws_access_key_id = {server.access_key_id}\n"
                           f"aws_secret_access_key = {S3_SECRET}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    with_profile = chain.model_copy(update={"profile": "sluice-cold"})
    assert "chain-env" in [b["Name"] for b in s3_client(with_profile, timeout_s=5).list_buckets()["Buckets"]]
    monkeypatch.setenv("AWS_PROFILE", "sluice-cold")
    s3_client(chain, timeout_s=5).put_object(Bucket="chain-env", Key="k", Body=b"v")
    monkeypatch.delenv("AWS_PROFILE")
    with pytest.raises(ClientError, match=r"InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied"):
        s3_client(chain, timeout_s=5).list_buckets()  # the default profile's wrong key


# -- Kafka with mutual TLS ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def mtls_kafka(module_private_server: Callable[..., tuple[Settings, Any]], secure: Settings) -> Settings:
    """A private Kafka whose listener speaks SSL and asks every client for a certificate of the CA."""
    import shutil

    from devtools.stack.tls import ensure_certificates

    home = secure.stack.dir / "mtls"  # its own stack directory, with the same CA as the other servers
    shutil.copytree(secure.stack.dir / "tls", home / "tls")
    certs = ensure_certificates(home / "tls")
    settings, _ = module_private_server("kafka", base=secure, home=home, tls=True, connection={
        "security_protocol": "SSL", "sasl_mechanism": None, "sasl_username": None, "sasl_password": None,
        "ssl_cafile": str(certs.ca), "ssl_certfile": str(certs.client_cert), "ssl_keyfile": str(certs.client_key)})
    return settings


def test_kafka_mutual_tls(mtls_kafka: Settings, capfd: pytest.CaptureFixture[str]) -> None:
    assert mtls_kafka.kafka.client_config()["ssl.certificate.location"]
    topic = f"mtls-{uuid.uuid4().hex[:8]}"
    create_topics(mtls_kafka, [TopicSpec(topic, 1, {})])
    values = [f"line {i} over mutual TLS".encode() for i in range(10)]
    assert round_trip(mtls_kafka, topic, values) == values
    no_cert = with_kafka(mtls_kafka, ssl_certfile=None, ssl_keyfile=None)
    refused(no_cert.kafka.client_config(), capfd)


def test_assemble_worker_and_shipper_over_mutual_tls(
    mtls_kafka: Settings, worker_processes: Callable[..., Any], corpus: Path, tmp_path: Path,
    unique_name: Callable[[str], str],
) -> None:
    """The worker's Faust consumer and producer (librdkafka, streams/rdkafka) present the client certificate too."""
    k = mtls_kafka.kafka
    ship_and_assemble(mtls_kafka, {
        "SLUICE_KAFKA__SECURITY_PROTOCOL": "SSL", "SLUICE_KAFKA__SSL_CAFILE": k.ssl_cafile or "",
        "SLUICE_KAFKA__SSL_CERTFILE": k.ssl_certfile or "", "SLUICE_KAFKA__SSL_KEYFILE": k.ssl_keyfile or ""},
        worker_processes, corpus, tmp_path, unique_name("mtls"))


def ship_and_assemble(base: Settings, kafka_env: dict[str, str], worker_processes: Callable[..., Any],
                      corpus: Path, tmp_path: Path, tag: str) -> None:
    """``sluice ship`` a real traceback and ``sluice worker assemble`` it, with ``kafka_env`` as the
    Kafka settings of both processes; the merged traceback must come out on the events topic."""
    from streams.contracts import register_all
    from streams.topics import topic_specs

    topics = base.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "raw_partitions": 1, "events_partitions": 1})
    settings = base.model_copy(update={"topics": topics})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    r = settings.registry
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "rank0.log").write_text(
        (corpus / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log").read_text())
    (tmp_path / "registry-password").write_text(REGISTRY_PASSWORD)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLUICE_")}
    env.update({
        "SLUICE_KAFKA__BOOTSTRAP_SERVERS": settings.kafka.bootstrap_servers, **kafka_env,
        "SLUICE_REGISTRY__URL": r.url, "SLUICE_REGISTRY__USERNAME": r.username or "",
        "SLUICE_REGISTRY__PASSWORD_FILE": str(tmp_path / "registry-password"),
        "SLUICE_REGISTRY__CA_CERTS": r.ca_certs or "",
        "SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
        "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
        "SLUICE_TOPICS__ALERTS": topics.alerts, "SLUICE_OBSERVABILITY__PORT": "0",
        "SLUICE_ASSEMBLE__APP_ID": f"{tag}-asm", "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000",
        "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05", "SLUICE_ASSEMBLE__WEB_PORT": str(free_port()),
        "SLUICE_SHIP__START_AT": "beginning"})
    ship, ship_log = worker_processes(["ship", "--path", str(tmp_path / "logs" / "*.log"), "--checkpoint",
                                       str(tmp_path / "ship.checkpoint"), "--interval", "0.5",
                                       "--stagger-window", "0"], env)
    assemble, log = worker_processes(["worker", "assemble", "--loglevel", "info"], env)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{tag}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topics.events_topic(settings.routing.default_project)])
    events: list[bytes] = []
    deadline = time.monotonic() + 150
    try:
        while not any(b"CUDA error: out of memory" in e for e in events) and time.monotonic() < deadline \
                and assemble.poll() is None and ship.poll() is None:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                events.append(msg.value())
    finally:
        consumer.close()
    assert any(b"Traceback (most recent call last)" in e and b"CUDA error: out of memory" in e for e in events), \
        f"no merged traceback came out:\n{log.read_text()[-2500:]}\n{ship_log.read_text()[-1500:]}"


# -- Kafka with OAUTHBEARER tokens from an OIDC token endpoint --------------------------------------

OAUTH_SECRET = "oauth-client-Vb7nQ2xLp9Rt"


@pytest.fixture(scope="module")
def token_issuer() -> Any:
    from devtools.stack.oidc import TokenIssuer

    issuer = TokenIssuer({"sluice-assemble": OAUTH_SECRET})
    issuer.start()
    yield issuer
    issuer.stop()


@pytest.fixture(scope="module")
def oauth_kafka(module_private_server: Callable[..., tuple[Settings, Any]], secure: Settings,
                token_issuer: Any) -> Settings:
    """A private Kafka whose SASL_SSL listener takes only OAUTHBEARER tokens signed by ``token_issuer``."""
    import shutil

    home = secure.stack.dir / "oauth"
    shutil.copytree(secure.stack.dir / "tls", home / "tls")
    settings, _ = module_private_server(
        "kafka", base=secure, home=home, tls=True, kafka_oauthbearer_jwks_url=token_issuer.jwks_url,
        connection={"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER", "sasl_username": None,
                    "sasl_password": None, "sasl_oauthbearer_token_endpoint_url": token_issuer.token_url,
                    "sasl_oauthbearer_client_id": "sluice-assemble",
                    "sasl_oauthbearer_client_secret": SecretStr(OAUTH_SECRET)})
    return settings


def test_kafka_oauthbearer_with_librdkafkas_oidc_client(
    oauth_kafka: Settings, token_issuer: Any, capfd: pytest.CaptureFixture[str],
) -> None:
    granted = len(token_issuer.granted)
    topic = f"oauth-{uuid.uuid4().hex[:8]}"
    create_topics(oauth_kafka, [TopicSpec(topic, 1, {})])
    values = [f"line {i} with a token".encode() for i in range(10)]
    assert round_trip(oauth_kafka, topic, values) == values
    assert len(token_issuer.granted) > granted, "the tokens came from the issuer"
    refused(with_kafka(oauth_kafka, sasl_oauthbearer_client_secret=SecretStr("wrong")).kafka.client_config(), capfd)


def test_assemble_worker_and_shipper_over_oauthbearer(
    oauth_kafka: Settings, token_issuer: Any, worker_processes: Callable[..., Any], corpus: Path, tmp_path: Path,
    unique_name: Callable[[str], str],
) -> None:
    """The shipper and the assemble worker (its Faust transport too: streams/rdkafka) both get tokens."""
    k = oauth_kafka.kafka
    (tmp_path / "oauth-secret").write_text(OAUTH_SECRET)
    ship_and_assemble(oauth_kafka, {
        "SLUICE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL", "SLUICE_KAFKA__SASL_MECHANISM": "OAUTHBEARER",
        "SLUICE_KAFKA__SSL_CAFILE": k.ssl_cafile or "",
        "SLUICE_KAFKA__SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL": k.sasl_oauthbearer_token_endpoint_url or "",
        "SLUICE_KAFKA__SASL_OAUTHBEARER_CLIENT_ID": "sluice-assemble",
        "SLUICE_KAFKA__SASL_OAUTHBEARER_CLIENT_SECRET_FILE": str(tmp_path / "oauth-secret")},
        worker_processes, corpus, tmp_path, unique_name("oauth"))


# -- Every stage and the shipper over the secured servers -------------------------------------

@pytest.fixture
def secrets_on_disk(tmp_path: Path) -> dict[str, Path]:
    """Each secret in its own 0600 file (a mounted Kubernetes Secret), as the workers read them."""
    files = {}
    for name, value in (("kafka-password", KAFKA_PASSWORD), ("registry-password", REGISTRY_PASSWORD)):
        path = tmp_path / name
        path.write_text(value + "\n")
        path.chmod(0o600)
        files[name] = path
    return files


@pytest.fixture
def aws_profile(tmp_path: Path, private_s3: Settings) -> dict[str, str]:
    """The cold stage's object-store key in a shared credentials file under a named profile: boto3's
    default chain finds it through AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE, as an operator's
    mounted credentials file or ~/.aws would give it."""
    store = private_s3.object_store
    credentials = tmp_path / "aws" / "credentials"
    credentials.parent.mkdir()
    credentials.write_text(f"[sluice-cold]\naws_access_key_id = {store.access_key_id}\n"
                           f"aws_secret_access_key = {S3_SECRET}\n")
    credentials.chmod(0o600)
    (tmp_path / "aws" / "config").write_text("")
    return {"AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_CONFIG_FILE": str(tmp_path / "aws" / "config"),
            "AWS_PROFILE": "sluice-cold", "AWS_EC2_METADATA_DISABLED": "true"}


def api_key(settings: Settings, name: str, role: dict[str, Any]) -> str:
    """A real API key, issued by the secured node to its superuser, with only ``role``'s privileges."""
    issued = es_client(settings.elasticsearch).security.create_api_key(name=name, role_descriptors={name: role})
    return str(issued["encoded"])


# Least privilege per stage, as docs/security.md gives it (hot and watch write Elasticsearch).
HOT_ROLE = {"cluster": ["monitor", "manage_index_templates", "manage_ilm"],
            "indices": [{"names": ["sluice-logs-*", "sluice-metrics-*"],
                         "privileges": ["create_index", "index", "view_index_metadata", "manage", "delete_index"]}]}
WATCH_ROLE = {"cluster": ["monitor"],
              "indices": [{"names": ["sluice-alerts-*"], "privileges": ["create_index", "index",
                                                                        "view_index_metadata"]}]}


def stage_env(settings: Settings, files: dict[str, Path], extra: dict[str, str]) -> dict[str, str]:
    """The environment of one process: the secured connections, this test's topics, and ``extra``.
    No SLUICE_* or AWS_* variable of the test's own environment is passed on."""
    k, r, t = settings.kafka, settings.registry, settings.topics
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLUICE_", "AWS_"))}
    env.update({
        "SLUICE_KAFKA__BOOTSTRAP_SERVERS": k.bootstrap_servers, "SLUICE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "SLUICE_KAFKA__SASL_MECHANISM": k.sasl_mechanism or "", "SLUICE_KAFKA__SASL_USERNAME": k.sasl_username or "",
        "SLUICE_KAFKA__SASL_PASSWORD_FILE": str(files["kafka-password"]),
        "SLUICE_KAFKA__SSL_CAFILE": k.ssl_cafile or "",
        "SLUICE_REGISTRY__URL": r.url, "SLUICE_REGISTRY__USERNAME": r.username or "",
        "SLUICE_REGISTRY__PASSWORD_FILE": str(files["registry-password"]),
        "SLUICE_REGISTRY__CA_CERTS": r.ca_certs or "",
        "SLUICE_ELASTICSEARCH__URL": settings.elasticsearch.url,
        "SLUICE_ELASTICSEARCH__CA_CERTS": settings.elasticsearch.ca_certs or "",
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_ROUTING__DEFAULT_PROJECT": settings.routing.default_project,
        "SLUICE_OBSERVABILITY__PORT": "0",
        **extra,
    })
    return env


@pytest.fixture
def pipeline(secure: Settings, private_s3: Settings, unique_name: Callable[[str], str]) -> Settings:
    """This test's own topics, project, groups and bucket on the secured servers."""
    from streams.contracts import register_all
    from streams.topics import topic_specs

    tag = unique_name("sec")
    project = tag.replace("-", "")
    topics = secure.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "raw_partitions": 1, "events_partitions": 1, "metrics_partitions": 1})
    routing = RoutingSettings(default_project=project, projects={project: ProjectRoute()})
    settings = secure.model_copy(update={"topics": topics, "routing": routing,
                                         "object_store": private_s3.object_store})
    create_topics(settings, topic_specs(settings))
    register_all(settings)  # through the https front, with the registry user
    return settings


def test_every_stage_and_the_shipper_run_over_the_secured_servers(
    pipeline: Settings, secrets_on_disk: dict[str, Path], aws_profile: dict[str, str],
    worker_processes: Callable[..., Any], corpus: Path, tmp_path: Path,
) -> None:
    """sluice ship -> assemble -> hot, cold and watch, each stage in its own process with only the
    credentials it needs: Kafka over SASL_SSL (SCRAM), the registry over https with a user, hot and
    watch with their own least-privilege API keys, cold through the default credential chain."""
    settings, project = pipeline, pipeline.routing.default_project
    bucket = f"{project}-cold"
    hot_key, watch_key = api_key(settings, "sluice-hot", HOT_ROLE), api_key(settings, "sluice-watch", WATCH_ROLE)
    store = settings.object_store
    logs = tmp_path / "logs"
    logs.mkdir()
    oom = (corpus / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log").read_text()
    (logs / "rank0.log").write_text(oom)

    files = secrets_on_disk
    procs = {
        "ship": worker_processes(
            ["ship", "--path", str(logs / "*.log"), "--checkpoint", str(tmp_path / "ship.checkpoint"),
             "--interval", "0.5", "--stagger-window", "0", "--node-name", "node-0"],
            stage_env(settings, files, {"SLUICE_SHIP__START_AT": "beginning"})),
        "assemble": worker_processes(["worker", "assemble", "--loglevel", "info"], stage_env(settings, files, {
            "SLUICE_ASSEMBLE__APP_ID": f"{project}-asm", "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000",
            "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05", "SLUICE_ASSEMBLE__WEB_PORT": str(free_port())})),
        "hot": worker_processes(["worker", "hot", "--loglevel", "info"], stage_env(settings, files, {
            "SLUICE_HOT__GROUP_ID": f"{project}-hot", "SLUICE_ELASTICSEARCH__API_KEY": hot_key})),
        "cold": worker_processes(["worker", "cold", "--loglevel", "info"], stage_env(settings, files, {
            "SLUICE_COLD__GROUP_ID": f"{project}-cold", "SLUICE_COLD__ROTATE_RECORDS": "100",
            "SLUICE_COLD__IDLE_FLUSH_S": "2",
            "SLUICE_OBJECT_STORE__ENDPOINT_URL": store.endpoint_url,
            "SLUICE_OBJECT_STORE__CA_BUNDLE": store.ca_bundle or "",
            "SLUICE_OBJECT_STORE__DEFAULT_BUCKET": bucket, **aws_profile})),
        "watch": worker_processes(["worker", "watch", "--loglevel", "info"], stage_env(settings, files, {
            "SLUICE_WATCH__APP_ID": f"{project}-watch", "SLUICE_ELASTICSEARCH__API_KEY": watch_key})),
    }

    es = es_client(settings.elasticsearch)
    s3 = s3_client(store, timeout_s=5)
    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{project}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([settings.topics.alerts])
    alerts: list[bytes] = []
    seen = {"hot": False, "cold": False, "watch": False}
    deadline = time.monotonic() + 240
    try:
        while not all(seen.values()) and time.monotonic() < deadline:
            dead = [name for name, (proc, _log) in procs.items() if proc.poll() is not None]
            assert not dead, f"{dead} exited:\n" + "\n".join(procs[n][1].read_text()[-3000:] for n in dead)
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                alerts.append(msg.value())
            seen["watch"] = any(b"cuda_oom" in a for a in alerts)
            if not seen["hot"]:
                seen["hot"] = oom_indexed(es, f"sluice-logs-{project}-*")
            if not seen["cold"]:
                with contextlib.suppress(Exception):  # the bucket appears with the first object
                    seen["cold"] = s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0) > 0
    finally:
        consumer.close()
    outputs = {name: log for name, (_proc, log) in procs.items()}
    assert all(seen.values()), f"not reached: {seen}\n" + "\n".join(
        f"== {n}\n{log.read_text(errors='replace')[-2500:]}" for n, log in outputs.items())
    for proc, _log in procs.values():
        stop_gracefully(proc, 30)
    assert_no_secret({f"{name} output": log.read_text(errors="replace") for name, log in outputs.items()},
                     extra=(hot_key, watch_key, REGISTRY_PASSWORD))


def oom_indexed(es: Any, pattern: str) -> bool:
    """Whether the OOM event is searchable; an index the hot worker has just created answers 503 until
    its primary shard has started, which is "not yet" here."""
    from elasticsearch import ApiError

    try:
        found = es.search(index=pattern, allow_no_indices=True,
                          query={"match_phrase": {"message": "CUDA error: out of memory"}})
    except ApiError as exc:
        if exc.meta.status != 503:
            raise
        return False
    return bool(found["hits"]["total"]["value"] > 0)


# -- Secrets never show -----------------------------------------------------------------------

def assert_no_secret(seen: dict[str, str], extra: tuple[str, ...] = ()) -> None:
    leaks = [f"{secret!r} in {where}" for where, text in seen.items() for secret in (*SECRETS, *extra)
             if secret in text]
    assert not leaks, leaks


def refused_list_topics(settings: Settings) -> None:
    """List topics with credentials the broker refuses (raises), then serve the client's log queue:
    librdkafka hands its lines to Python logging only when the client is polled, and only once per cause
    per process, so an earlier test's refusal is forgotten first. Long enough for a TLS and SCRAM
    handshake on a loaded machine."""
    for once in kafka_logger().filters:
        if isinstance(once, OncePerCause):
            once.forget()
    admin = AdminClient(settings.kafka.client_config())
    try:
        admin.list_topics(timeout=20)
    finally:
        admin.poll(1)


def failure_text(call: Callable[[], object]) -> str:
    """Run ``call``, which must fail; the whole traceback with its chained causes, as a user would see it."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - every kind of failure is what we want to read
        return "".join(traceback.format_exception(exc))
    raise AssertionError(f"{call} did not fail")


def test_secrets_never_appear_in_logs_errors_settings_or_status(
    secure: Settings, private_s3: Settings, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)  # the most a client library will ever say
    settings = secure.model_copy(update={
        "elasticsearch": secure.elasticsearch.model_copy(update={"api_key": None}),
        "object_store": private_s3.object_store,
    })
    seen: dict[str, str] = {}

    # The settings themselves, every way they get printed.
    seen["repr(settings)"] = repr(settings)
    seen["str(settings)"] = str(settings)
    seen["model_dump_json"] = settings.model_dump_json()
    seen["model_dump"] = str(settings.model_dump())
    with_key = with_es(settings, username=None, password=None, api_key=SecretStr(ES_API_KEY))
    seen["repr(api key settings)"] = repr(with_key.elasticsearch) + with_key.model_dump_json()

    # Operations that succeed.
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    create_topics(settings, [TopicSpec(topic, 1, {})])
    assert round_trip(settings, topic, [b"hello"]) == [b"hello"]
    es = es_client(settings.elasticsearch)
    es.index(index=f"sec-{uuid.uuid4().hex[:8]}", document={"m": "x"}, refresh=True)
    s3 = s3_client(settings.object_store, timeout_s=5)
    s3.create_bucket(Bucket="secrets-test")
    s3.put_object(Bucket="secrets-test", Key="k", Body=b"v")
    assert s3.get_object(Bucket="secrets-test", Key="k")["Body"].read() == b"v"

    # Operations that fail: refused credentials, wrong hosts, unreadable secret files.
    wrong_kafka = with_kafka(settings, sasl_password=SecretStr(KAFKA_PASSWORD + "-old"))
    seen["kafka refused"] = failure_text(lambda: refused_list_topics(wrong_kafka))
    seen["kafka refused, create_topics"] = failure_text(
        lambda: create_topics(wrong_kafka, [TopicSpec(f"sec-{uuid.uuid4().hex[:8]}", 1, {})], timeout_s=5))
    nowhere = with_kafka(settings, bootstrap_servers="127.0.0.1:1")
    seen["kafka wrong host"] = failure_text(
        lambda: create_topics(nowhere, [TopicSpec("never", 1, {})], timeout_s=3))
    seen["es refused"] = failure_text(
        lambda: es_client(es_of(settings, password=SecretStr(ES_PASSWORD + "-old"))).search(index="*"))
    seen["es api key refused"] = failure_text(lambda: es_client(with_key.elasticsearch).search(index="*"))
    seen["es wrong host"] = failure_text(lambda: es_client(es_of(
        settings, url="https://127.0.0.1:1", request_timeout_s=2)).options(max_retries=0).search(index="*"))
    wrong_s3 = settings.object_store.model_copy(update={"secret_access_key": SecretStr(S3_SECRET + "x")})
    seen["s3 refused"] = failure_text(lambda: s3_client(wrong_s3, timeout_s=5).list_buckets())
    seen["s3 wrong host"] = failure_text(lambda: s3_client(settings.object_store.model_copy(
        update={"endpoint_url": "http://127.0.0.1:1"}), timeout_s=2).list_buckets())
    conflict = tmp_path / "pw"
    conflict.write_text(ES_PASSWORD + "-other")
    seen["config conflict"] = failure_text(lambda: load_settings(
        elasticsearch={"password": ES_PASSWORD, "password_file": str(conflict)}))
    seen["config missing file"] = failure_text(lambda: load_settings(
        kafka={"sasl_password_file": str(tmp_path / "missing")}))
    from devtools.stack.kafka import KafkaService

    no_user = with_kafka(settings, sasl_username=None)
    seen["stack misconfigured"] = failure_text(lambda: KafkaService(no_user)._sasl_user())
    for name in ("kafka refused, create_topics", "kafka wrong host", "config conflict", "stack misconfigured"):
        assert "Error" in seen[name]  # they did fail, with a message

    # `python -m devtools stack status` over the secured servers, secrets in its environment.
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLUICE_")}
    env.update({
        "SLUICE_STACK__DIR": str(settings.stack.dir), "SLUICE_STACK__TLS": "true",
        "SLUICE_KAFKA__BOOTSTRAP_SERVERS": settings.kafka.bootstrap_servers,
        "SLUICE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL", "SLUICE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "SLUICE_KAFKA__SASL_USERNAME": "sluice", "SLUICE_KAFKA__SASL_PASSWORD": KAFKA_PASSWORD,
        "SLUICE_KAFKA__SSL_CAFILE": settings.kafka.ssl_cafile or "",
        "SLUICE_STACK__KAFKA_INTERNAL_PORT": str(settings.stack.kafka_internal_port),
        "SLUICE_ELASTICSEARCH__URL": settings.elasticsearch.url, "SLUICE_ELASTICSEARCH__USERNAME": "sluice-admin",
        "SLUICE_ELASTICSEARCH__PASSWORD": ES_PASSWORD,
        "SLUICE_ELASTICSEARCH__CA_CERTS": settings.elasticsearch.ca_certs or "",
        "SLUICE_OBJECT_STORE__ENDPOINT_URL": settings.object_store.endpoint_url,
        "SLUICE_OBJECT_STORE__ACCESS_KEY_ID": settings.object_store.access_key_id,
        "SLUICE_OBJECT_STORE__SECRET_ACCESS_KEY": S3_SECRET,
        "SLUICE_OBJECT_STORE__CA_BUNDLE": settings.object_store.ca_bundle or "",
    })
    status = subprocess.run([sys.executable, "-m", "devtools", "stack", "status"], env=env, cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    seen["stack status"] = status.stdout + status.stderr
    rows = {line.split()[0]: line.split()[1] for line in status.stdout.splitlines()[1:] if line.strip()}
    assert [rows.get(name) for name in ("kafka", "elasticsearch", "objectstore")] == ["healthy"] * 3, \
        seen["stack status"]

    captured = capfd.readouterr()  # librdkafka and the test's own prints write to the file descriptors
    seen["stdout/stderr"] = captured.out + captured.err
    seen["log records"] = "\n".join(
        f"{r.name} {r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    assert "Authentication failed" in seen["stdout/stderr"] + seen["kafka refused"] + seen["log records"], \
        "the refusal was seen"
    assert caplog.records, "DEBUG logging from the clients was captured"
    assert_no_secret(seen)


# -- refused credentials stop a stage (nothing dead-lettered, nothing committed) -------------------------

def test_a_sink_stops_with_the_reason_when_each_server_refuses_its_credentials(
        secure: Settings, private_s3: Settings) -> None:
    """Elasticsearch answering 401 to a wrong password, Kafka failing SASL authentication and the store
    refusing a wrong secret: each stops the stage with what to check, instead of dead-lettering every
    record or retrying forever."""
    import asyncio

    from streams.errors import DependencyRefused
    from streams.sinks.elasticsearch.sink import HotSink
    from streams.sinks.kafka_io import KafkaRecordSource
    from streams.sinks.objectstore.settings import ColdSinkSettings
    from streams.sinks.objectstore.sink import ColdSink

    wrong_es = es_of(secure, password=SecretStr("wrong-password"))
    sink = HotSink(wrong_es, secure.routing, secure.hot)
    with pytest.raises(DependencyRefused) as es_refused:
        asyncio.run(sink.start())
    assert "HTTP 401" in str(es_refused.value) and secure.elasticsearch.url in str(es_refused.value)
    assert "elasticsearch.username" in str(es_refused.value)

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    create_topics(secure, [TopicSpec(topic, 1, {})])
    wrong_kafka = with_kafka(secure, sasl_password=SecretStr("not-the-password"))
    source = KafkaRecordSource(wrong_kafka, [topic], f"sec-{uuid.uuid4().hex[:8]}")
    deadline = time.monotonic() + 30
    try:
        with pytest.raises(DependencyRefused) as kafka_refused:
            while time.monotonic() < deadline:
                source.poll_batch(100, 0.5)
    finally:
        source.close()
    assert "Authentication failed" in str(kafka_refused.value) and "sasl_password" in str(kafka_refused.value)

    wrong_store = private_s3.object_store.model_copy(update={"secret_access_key": SecretStr("wrong")})
    cold = ColdSink(private_s3.model_copy(update={"object_store": wrong_store}),
                    ColdSinkSettings(lifecycle_enabled=False), bodies=object())  # type: ignore[arg-type]
    with pytest.raises(DependencyRefused) as store_refused:
        asyncio.run(cold.start())
    assert "secret_access_key" in str(store_refused.value) and wrong_store.endpoint_url in str(store_refused.value)
    for text in (str(es_refused.value), str(kafka_refused.value), str(store_refused.value)):
        assert not any(secret in text for secret in SECRETS)
