"""One fixture layer for every test that needs servers.

``stack`` yields connection settings for a real Kafka, schema registry, Elasticsearch and object
store: through testcontainers (docker/compose.yaml) when a Docker engine answers, else the local
stack of ``python -m devtools stack up``, started here if it is not running. Factory fixtures give each test
its own topic and consumer-group names, so tests never see each other's data.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devtools import CORPUS_DIR
from devtools.stack.base import free_port
from streams.config import REPO_ROOT, Settings, load_settings

CORPUS = CORPUS_DIR

# The object store is reached through boto3's default credential chain, as in production: the local
# stack's key goes in the environment, where every client and worker process of the suite finds it.
if not any(name in os.environ for name in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE")):
    from devtools.stack.objectstore import local_credentials_env

    os.environ.update(local_credentials_env())


def docker_answers() -> bool:
    if os.environ.get("SLUICE_TEST_STACK") == "local":
        return False
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception:  # noqa: BLE001 - no engine, no socket, no permission: use the local stack
        return False
    return True


def _compose_stack() -> Iterator[Settings]:
    from testcontainers.compose import DockerCompose

    compose = DockerCompose(str(REPO_ROOT / "docker"), compose_file_name="compose.yaml",
                            services=["kafka", "registry", "elasticsearch", "objectstore"],
                            wait=True)
    with compose:
        # compose.yaml publishes the same loopback ports as the local stack: same settings.
        yield load_settings()


def _local_stack() -> Iterator[Settings]:
    from devtools.stack import manager

    settings = load_settings()
    manager.up(settings, log=lambda msg: print(f"[stack] {msg}"))
    yield settings  # left running: the next session reuses it (`python -m devtools stack down` stops it)


@pytest.fixture(scope="session")
def stack() -> Iterator[Settings]:
    yield from (_compose_stack() if docker_answers() else _local_stack())


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    def make(prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex[:10]}"

    return make


@pytest.fixture
def new_topic(stack: Settings, unique_name: Callable[[str], str]) -> Callable[..., str]:
    """Create a fresh topic on the real broker; returns its name."""
    from streams.topics import TopicSpec, create_topics

    def make(prefix: str = "test", partitions: int = 1, config: dict[str, str] | None = None) -> str:
        name = unique_name(prefix)
        create_topics(stack, [TopicSpec(name, partitions, config or {})])
        return name

    return make


@pytest.fixture
def corpus() -> Path:
    assert CORPUS.is_dir(), f"the corpus is part of the repository: {CORPUS} is missing"
    return CORPUS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark by folder: tests/unit -> unit, tests/integration -> integration. The tests that run a real node
    agent go last: ``make test`` builds the agents beside the suite, and by then the build is done."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        elif "unit" in parts:
            item.add_marker(pytest.mark.unit)
    items.sort(key=lambda item: item.get_closest_marker("agents") is not None)  # stable: order kept otherwise


@pytest.fixture
def free_tcp_port() -> int:
    return free_port()


def _private_maker(stack: Settings, root: Path, started: list) -> Callable[..., tuple[Settings, object]]:
    from devtools.stack.elasticsearch import ElasticsearchService
    from devtools.stack.kafka import KafkaService
    from devtools.stack.objectstore import ObjectStoreService
    from devtools.stack.registry import RegistryService

    def make(kind: str, connection: dict[str, object] | None = None, base: Settings | None = None,
             home: Path | None = None, **stack_overrides: object) -> tuple[Settings, object]:
        base = base or stack
        port = free_port()
        home = home or root / f"private-{kind}-{port}"
        tls = bool(stack_overrides.get("tls"))
        ca = str(home / "tls" / "ca.pem")
        if kind == "kafka":
            stack_overrides = {"kafka_controller_port": free_port(), "kafka_internal_port": free_port(),
                               **stack_overrides}
        stack_conf = base.stack.model_copy(update={"dir": home, **stack_overrides})
        if kind == "elasticsearch":
            conn = base.elasticsearch.model_copy(update={
                "url": f"{'https' if tls else 'http'}://127.0.0.1:{port}", **({"ca_certs": ca} if tls else {}),
                **(connection or {})})
            settings = base.model_copy(update={"elasticsearch": conn, "stack": stack_conf})
            service: object = ElasticsearchService(settings, log=lambda m: print(f"[private] {m}"))
        elif kind == "kafka":
            conn = base.kafka.model_copy(update={
                "bootstrap_servers": f"127.0.0.1:{port}", **({"ssl_cafile": ca} if tls else {}), **(connection or {})})
            settings = base.model_copy(update={"kafka": conn, "stack": stack_conf})
            shared_lib, lib = stack.stack.dir / "kafka" / "lib", home / "kafka" / "lib"
            if (shared_lib / ".stamp").is_file() and not lib.exists():  # jars already installed: no Maven run
                lib.parent.mkdir(parents=True, exist_ok=True)
                lib.symlink_to(shared_lib)
            service = KafkaService(settings, log=lambda m: print(f"[private] {m}"))
        elif kind == "objectstore":
            conn = base.object_store.model_copy(update={
                "endpoint_url": f"{'https' if tls else 'http'}://127.0.0.1:{port}",
                **({"ca_bundle": ca} if tls else {}), **(connection or {})})
            settings = base.model_copy(update={"object_store": conn, "stack": stack_conf})
            service = ObjectStoreService(settings, log=lambda m: print(f"[private] {m}"))
        elif kind == "registry":
            stack_conf = stack_conf.model_copy(update={"registry_internal_port": free_port()})
            conn = base.registry.model_copy(update={
                "url": f"{'https' if tls else 'http'}://127.0.0.1:{port}/apis/ccompat/v7",
                **({"ca_certs": ca} if tls else {}), **(connection or {})})
            settings = base.model_copy(update={"registry": conn, "stack": stack_conf})
            shared_app, app = stack.stack.dir / "registry" / "app", home / "registry" / "app"
            if (shared_app / "registry-runner.jar").is_file() and not app.exists():  # built already: no Maven run
                app.parent.mkdir(parents=True, exist_ok=True)
                app.symlink_to(shared_app)
            service = RegistryService(settings, log=lambda m: print(f"[private] {m}"))
        else:
            raise ValueError(f"no private {kind}; choose elasticsearch, objectstore, registry or kafka")
        started.append(service)
        service.up()  # type: ignore[attr-defined]
        return settings, service

    return make


@pytest.fixture
def private_server(tmp_path: Path, stack: Settings) -> Iterator[Callable[..., tuple[Settings, object]]]:
    """Start a server of our own (not the shared stack's) that a test may stop, kill and restart.

    ``make("elasticsearch", elasticsearch_extra={...})``, ``make("objectstore")`` or
    ``make("kafka")`` returns ``(settings, service)``: settings point at the private server
    (everything else at the shared stack); ``service.down()`` / ``service.up()`` stop and start it,
    ``os.kill(service.pid(), 9)`` kills it. Stopped at the end of the test.

    ``tls=True`` makes it a secured server (README "Secured connections") with its own CA under
    ``settings.stack.dir / "tls"``; ``connection={...}`` overrides its connection settings (the
    credentials the server is made with, e.g. ``{"username": "u", "password": SecretStr("p")}``).
    ``base=`` layers it on other settings and ``home=`` picks its stack directory, so two private
    servers can share one directory (one CA, one ``python -m devtools stack status``). A private Kafka reuses
    the installed jars of the shared stack.
    """
    started: list = []
    yield _private_maker(stack, tmp_path, started)
    for service in started:
        service.down()  # type: ignore[attr-defined]


# Elasticsearch majors the hot tier supports, and the server each is tested on: 9.x is the shared stack's
# (stack.elasticsearch_version), 8.x a private integ-test-zip server started once per session.
ES_SERIES = {"9.x": None, "8.x": "8.19.2"}


@pytest.fixture(scope="session", params=list(ES_SERIES))
def es_stack(request: pytest.FixtureRequest, stack: Settings,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """The stack's settings with an Elasticsearch of each supported major (tests using it run once per major)."""
    version = ES_SERIES[request.param]
    if version is None or version == stack.stack.elasticsearch_version:
        yield stack
        return
    started: list = []
    settings, _service = _private_maker(stack, tmp_path_factory.mktemp(f"es-{version}"), started)(
        "elasticsearch", elasticsearch_version=version)
    try:
        yield settings
    finally:
        for service in started:
            service.down()


@pytest.fixture(scope="module")
def module_private_server(tmp_path_factory: pytest.TempPathFactory,
                          stack: Settings) -> Iterator[Callable[..., tuple[Settings, object]]]:
    """``private_server`` for servers that a whole test module shares (slow to start, never stopped by tests)."""
    started: list = []
    yield _private_maker(stack, tmp_path_factory.mktemp("private"), started)
    for service in started:
        service.down()  # type: ignore[attr-defined]


@pytest.fixture
def worker_processes(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], Path]]]:
    """Start real worker processes (``python -m <module> <args>``) with a log file each; all are
    stopped (SIGINT, then SIGKILL after 20 s) when the test ends. Returns (process, log path)."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(args: list[str], env: dict[str, str], module: str = "streams.cli"
              ) -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"worker-{len(procs)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", module, *args], env=env, cwd=REPO_ROOT,
                                    stdout=out, stderr=subprocess.STDOUT)
        procs.append(proc)
        return proc, log

    yield start
    from devtools.stack.base import stop_gracefully

    for proc in procs:
        stop_gracefully(proc, 20)
