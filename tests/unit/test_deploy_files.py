"""docker/compose.yaml and deploy/sluice.yaml agree with the local stack's settings."""

from __future__ import annotations

import yaml

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
    secret = s.object_store.secret_access_key.get_secret_value()
    assert compose["objectstore"]["environment"]["S3PROXY_CREDENTIAL"] == secret
    assert compose["kafka"]["image"].endswith(":" + s.stack.kafka_version)
    assert compose["elasticsearch"]["image"].endswith(":" + s.stack.elasticsearch_version)


def test_deploy_config_loads_and_matches_defaults(monkeypatch) -> None:
    from streams.config import KafkaSettings, TopicSettings, load_settings

    monkeypatch.setenv("SLUICE_CONFIG", str(REPO_ROOT / "deploy" / "sluice.yaml"))
    loaded = load_settings()
    # Plain models, not Settings: these read no file and no environment.
    assert loaded.kafka.bootstrap_servers == KafkaSettings().bootstrap_servers
    assert loaded.topics.raw_retention_ms == TopicSettings().raw_retention_ms
    assert loaded.routing.default_project in loaded.routing.projects
