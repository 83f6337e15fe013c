"""docker/compose.yaml and deploy/sluice.yaml agree with the local stack's settings."""

from __future__ import annotations

import yaml

from devtools.stack.objectstore import local_credentials_env
from streams.config import REPO_ROOT, Settings, port_of


def _published(service: dict) -> set[int]:
    return {int(p.split(":")[-2]) for p in service.get("ports", [])}


def test_compose_publishes_the_ports_the_settings_use() -> None:
    compose = yaml.safe_load((REPO_ROOT / "docker" / "compose.yaml").read_text())["services"]
    s = Settings()
    assert port_of(s.kafka.bootstrap_servers) in _published(compose["kafka"])
    assert port_of(s.registry.url) in _published(compose["registry"])
    assert port_of(s.elasticsearch.url) in _published(compose["elasticsearch"])
    assert port_of(s.object_store.endpoint_url) in _published(compose["objectstore"])
    # No static key in the settings: the containers reach the server's key through the default chain.
    assert s.object_store.access_key_id is None
    key = {"AWS_ACCESS_KEY_ID": compose["objectstore"]["environment"]["S3PROXY_IDENTITY"],
           "AWS_SECRET_ACCESS_KEY": compose["objectstore"]["environment"]["S3PROXY_CREDENTIAL"]}
    assert key == local_credentials_env()
    worker_env = yaml.safe_load((REPO_ROOT / "docker" / "compose.yaml").read_text())["x-sluice-env"]
    assert {k: worker_env[k] for k in key} == key
    assert compose["kafka"]["image"].endswith(":" + s.stack.kafka_version)
    assert compose["elasticsearch"]["image"].endswith(":" + s.stack.elasticsearch_version)
    assert compose["objectstore"]["image"].endswith(":" + s.stack.s3proxy_version)


def test_every_compose_image_is_pinned() -> None:
    """An unpinned image resolves to whatever was pushed last: builds would differ from day to day."""
    compose = yaml.safe_load((REPO_ROOT / "docker" / "compose.yaml").read_text())["services"]
    for name, service in compose.items():
        image = service.get("image", "")
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        assert tag and tag != "latest", f"{name}: image {image!r} has no pinned tag"


def test_deploy_config_loads_and_matches_defaults(monkeypatch) -> None:
    from streams.config import KafkaSettings, TopicSettings, load_settings

    monkeypatch.setenv("SLUICE_CONFIG", str(REPO_ROOT / "deploy" / "sluice.yaml"))
    loaded = load_settings()
    # Plain models, not Settings: these read no file and no environment.
    assert loaded.kafka.bootstrap_servers == KafkaSettings().bootstrap_servers
    assert loaded.topics.raw_retention_ms == TopicSettings().raw_retention_ms
    assert loaded.routing.default_project in loaded.routing.projects


# -- the Sluice containers of compose.yaml ---------------------------------------------------------

# Connection settings and the compose service that plays each role.
_ADDRESSES = {("kafka", "bootstrap_servers"): "kafka", ("registry", "url"): "registry",
              ("elasticsearch", "url"): "elasticsearch", ("object_store", "endpoint_url"): "objectstore"}


def _listening_ports(service: dict) -> set[int]:
    """Ports a compose service listens on inside the network (not the host-published ones)."""
    env = service.get("environment", {})
    ports = {int(p.split(":")[-1]) for p in service.get("ports", [])}
    for listener in str(env.get("KAFKA_LISTENERS", "")).split(","):
        if listener:
            ports.add(int(listener.rsplit(":", 1)[1]))
    for key in ("QUARKUS_HTTP_PORT", "http.port"):
        if key in env:
            ports.add(int(env[key]))
    return ports


def _plain(value):
    """model_dump() with secrets unwrapped, so that differing secrets count as differences."""
    from pydantic import SecretStr

    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _split(address: str):
    from urllib.parse import urlsplit

    first = address.split(",", maxsplit=1)[0]
    return urlsplit(first if "://" in first else "tcp://" + first)


def test_compose_runs_every_stage_worker() -> None:
    compose = yaml.safe_load((REPO_ROOT / "docker" / "compose.yaml").read_text())["services"]
    for stage in ("assemble", "hot", "cold", "watch"):
        assert compose[stage]["command"] == ["worker", stage]
        assert compose[stage]["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    assert "topics create" in compose["setup"]["command"][0] and "schemas register" in compose["setup"]["command"][0]


def test_compose_containers_use_the_local_stacks_settings(monkeypatch, tmp_path) -> None:
    """Inside compose, only the addresses differ from the local stack: each names the service of its role."""
    import os

    from streams.config import load_settings

    compose = yaml.safe_load((REPO_ROOT / "docker" / "compose.yaml").read_text())["services"]
    sluice = [name for name, svc in compose.items() if svc.get("image", "").startswith("sluice:")]
    assert {"setup", "assemble", "hot", "cold", "watch", "demo"} <= set(sluice)
    for key in [k for k in os.environ if k.startswith("SLUICE_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)  # no ./sluice.yaml
    local = Settings()
    for name in sluice:
        env = {k: str(v) for k, v in compose[name]["environment"].items()}
        if name == "demo":  # the demo runs devtools from the mounted checkout, its logs in a writable place
            assert env.pop("PYTHONPATH") == "/repo"
            assert env.pop("SLUICE_STACK__DIR").startswith("/tmp/")
            assert compose[name]["volumes"] == ["..:/repo:ro"]
        # The object store's key, for boto3's default credential chain (checked above).
        env = {k: v for k, v in env.items() if not k.startswith("AWS_")}
        assert all(k.startswith("SLUICE_") for k in env), name
        with monkeypatch.context() as m:
            for key, value in env.items():
                m.setenv(key, value)
            # The image's configuration file (docker/Dockerfile copies deploy/sluice.yaml).
            m.setenv("SLUICE_CONFIG", str(REPO_ROOT / "deploy" / "sluice.yaml"))
            inside = load_settings()
        for (section, field), role in _ADDRESSES.items():
            value, local_value = getattr(getattr(inside, section), field), getattr(getattr(local, section), field)
            there, here = _split(value), _split(local_value)
            assert there.hostname == role, f"{name}: {section}.{field}={value} should name the {role} service"
            assert there.port in _listening_ports(compose[role]), f"{name}: {role} does not listen on {there.port}"
            assert (there.scheme, there.path) == (here.scheme, here.path), f"{name}: {section}.{field}"
            setattr(getattr(inside, section), field, local_value)
        assert _plain(inside.model_dump()) == _plain(local.model_dump()), f"{name} differs from the local stack"
