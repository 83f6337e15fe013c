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
import logging
import os
import signal
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

from devtools.stack.base import free_port
from devtools.stack.tls import make_ca
from streams.clients import es_client, s3_client
from streams.config import REPO_ROOT, ElasticsearchSettings, Settings, load_settings
from streams.topics import TopicSpec, create_topics

# Recognisable, realistic-looking secrets: if any of these shows up anywhere, the test names it.
KAFKA_PASSWORD = "kafka-scram-Qx7vT2mN9pLw4RzK"
ES_PASSWORD = "es-basic-Hb3nW8sYq5JcV1dF"
# What `_security/api_key` answers as "encoded": base64 of "<id>:<api key>".
ES_API_KEY = base64.b64encode(b"VuaCfGcBCdbkQm-e5aOx:ui2lp2axTNmsyakw9tvNnw").decode()
S3_SECRET = "s3-secret-wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = (KAFKA_PASSWORD, ES_PASSWORD, ES_API_KEY, S3_SECRET)


@pytest.fixture(scope="module")
def secure(module_private_server: Callable[..., tuple[Settings, Any]],
           tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One TLS stack directory (one CA) holding a private SASL_SSL Kafka and an https Elasticsearch."""
    home = tmp_path_factory.mktemp("secure-stack")
    kafka_conn = {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "sluice",
                  "sasl_password": SecretStr(KAFKA_PASSWORD)}
    settings, _ = module_private_server("kafka", connection=kafka_conn, home=home, tls=True)
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


def test_elasticsearch_api_key_path(secure: Settings) -> None:
    """The client sends ``Authorization: ApiKey`` over TLS and the node checks it (401 for a key it
    never issued). Issuing keys does not work on the integ-test-zip: the ``.security`` index needs the
    analysis-common module, which that distribution lacks. When this assertion starts failing, the
    distribution can issue keys: replace it with an index + search under a real key."""
    from elasticsearch import AuthenticationException, BadRequestError

    with pytest.raises(AuthenticationException):
        es_client(es_of(secure, username=None, password=None, api_key=SecretStr(ES_API_KEY))).search(index="*")
    with pytest.raises(BadRequestError, match="pattern_capture"):
        es_client(secure.elasticsearch).security.create_api_key(name="sluice-test")


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


# -- The assemble worker (Faust, aiokafka) over SASL_SSL --------------------------------------

@pytest.fixture
def secrets_on_disk(tmp_path: Path) -> Path:
    path = tmp_path / "kafka-password"
    path.write_text(KAFKA_PASSWORD + "\n")
    path.chmod(0o600)
    return path


def worker_env(settings: Settings, password_file: Path, extra: dict[str, str]) -> dict[str, str]:
    k, t, a = settings.kafka, settings.topics, settings.assemble
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLUICE_")}
    env.update({
        "SLUICE_KAFKA__BOOTSTRAP_SERVERS": k.bootstrap_servers, "SLUICE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "SLUICE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512", "SLUICE_KAFKA__SASL_USERNAME": k.sasl_username or "",
        "SLUICE_KAFKA__SASL_PASSWORD_FILE": str(password_file), "SLUICE_KAFKA__SSL_CAFILE": k.ssl_cafile or "",
        "SLUICE_REGISTRY__URL": settings.registry.url,
        "SLUICE_TOPICS__RAW": t.raw, "SLUICE_TOPICS__EVENTS_PREFIX": t.events_prefix,
        "SLUICE_TOPICS__METRICS": t.metrics, "SLUICE_TOPICS__DLQ": t.dlq, "SLUICE_TOPICS__ALERTS": t.alerts,
        "SLUICE_ASSEMBLE__APP_ID": a.app_id, "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000",
        "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05",
        # Secrets that this worker does not even use must not leak either.
        "SLUICE_ELASTICSEARCH__PASSWORD": ES_PASSWORD, "SLUICE_OBJECT_STORE__SECRET_ACCESS_KEY": S3_SECRET,
        **extra,
    })
    return env


@pytest.fixture
def worker_topics(secure: Settings) -> Settings:
    from streams.contracts import register_all
    from streams.topics import topic_specs

    tag = f"sec-{uuid.uuid4().hex[:8]}"
    topics = secure.topics.model_copy(update={
        "raw": f"{tag}.raw", "events_prefix": f"{tag}.events.", "metrics": f"{tag}.metrics", "dlq": f"{tag}.dlq",
        "alerts": f"{tag}.alerts", "raw_partitions": 1, "events_partitions": 1})
    settings = secure.model_copy(update={"topics": topics,
                                         "assemble": secure.assemble.model_copy(update={"app_id": f"{tag}-group"})})
    create_topics(settings, topic_specs(settings))
    register_all(settings)
    return settings


@pytest.fixture
def run_worker(worker_processes: Callable[..., Any]
               ) -> Callable[[dict[str, str]], tuple[subprocess.Popen[bytes], Path]]:
    def start(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Path]:
        return worker_processes(["worker", "assemble", "--loglevel", "info"], env)  # type: ignore[no-any-return]

    return start


def test_assemble_worker_runs_over_sasl_ssl_and_prints_no_secret(
    worker_topics: Settings, secrets_on_disk: Path, run_worker: Callable[..., Any], corpus: Path,
) -> None:
    settings = worker_topics
    # A real CUDA OOM at a barrier (its traceback ends in "RuntimeError: CUDA error: out of memory").
    path = corpus / "training" / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
    lines = path.read_text().splitlines()
    producer = Producer(settings.kafka.client_config())
    for line in lines:
        producer.produce(settings.topics.raw, key=b"host-1/rank-0", value=line.encode())
    assert producer.flush(20) == 0
    metrics_port = free_port()
    proc, log = run_worker(worker_env(settings, secrets_on_disk, {
        "SLUICE_OBSERVABILITY__PORT": str(metrics_port), "SLUICE_OBSERVABILITY__HOST": "127.0.0.1",
        "SLUICE_ASSEMBLE__WEB_PORT": str(free_port())}))

    consumer = Consumer({**settings.kafka.client_config(), "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([settings.topics.events_topic(settings.routing.default_project)])
    events = []
    deadline = time.monotonic() + 90
    try:
        while not any(b"CUDA error: out of memory" in e for e in events) and time.monotonic() < deadline \
                and proc.poll() is None:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                events.append(msg.value())
    finally:
        consumer.close()
    assert any(b"Traceback (most recent call last)" in e and b"CUDA error: out of memory" in e for e in events), \
        f"no merged traceback came out:\n{log.read_text()[-3000:]}"
    metrics = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    assert "sluice_" in metrics
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    assert_no_secret({"worker output": log.read_text(errors="replace"), "worker /metrics": metrics})


# -- Secrets never show -----------------------------------------------------------------------

def assert_no_secret(seen: dict[str, str]) -> None:
    leaks = [f"{secret!r} in {where}" for where, text in seen.items() for secret in SECRETS if secret in text]
    assert not leaks, leaks


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
    seen["kafka refused"] = failure_text(lambda: AdminClient(wrong_kafka.kafka.client_config()).list_topics(timeout=5))
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
    seen["stack misconfigured"] = failure_text(lambda: KafkaService(no_user)._scram_user())
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
    assert "Authentication failed" in seen["stdout/stderr"] + seen["kafka refused"], "the refusal was seen"
    assert caplog.records, "DEBUG logging from the clients was captured"
    assert_no_secret(seen)
