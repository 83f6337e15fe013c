from __future__ import annotations

import pytest

from streams.config import load_settings, port_of
from streams.errors import ConfigError


def test_environment_overrides_yaml(tmp_path, monkeypatch) -> None:
    conf = tmp_path / "sluice.yaml"
    conf.write_text("kafka:\n  bootstrap_servers: yaml-host:1111\nrouting:\n  projects:\n    llm-a: {}\n")
    monkeypatch.setenv("SLUICE_CONFIG", str(conf))
    assert load_settings().kafka.bootstrap_servers == "yaml-host:1111"
    assert "llm-a" in load_settings().projects()
    monkeypatch.setenv("SLUICE_KAFKA__BOOTSTRAP_SERVERS", "env-host:2222")
    assert load_settings().kafka.bootstrap_servers == "env-host:2222"


def test_secrets_never_print(monkeypatch) -> None:
    monkeypatch.setenv("SLUICE_OBJECT_STORE__ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("SLUICE_OBJECT_STORE__SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("SLUICE_ELASTICSEARCH__PASSWORD", "hunter2-very-secret")
    settings = load_settings()
    text = repr(settings) + str(settings) + settings.model_dump_json()
    assert "wJalrXUtnFEMI" not in text
    assert "hunter2" not in text
    assert settings.object_store.secret_access_key is not None
    assert settings.object_store.secret_access_key.get_secret_value().startswith("wJalr")


def test_invalid_project_name_is_a_config_error(tmp_path, monkeypatch) -> None:
    conf = tmp_path / "sluice.yaml"
    conf.write_text("routing:\n  projects:\n    'Bad Name': {}\n")
    monkeypatch.setenv("SLUICE_CONFIG", str(conf))
    with pytest.raises(ConfigError, match="Bad Name"):
        load_settings()


def test_missing_config_file_says_so(monkeypatch) -> None:
    monkeypatch.setenv("SLUICE_CONFIG", "/nonexistent/sluice.yaml")
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()


@pytest.mark.parametrize(("value", "port"), [
    ("127.0.0.1:19092", 19092), ("a:1,b:2", 1), ("http://h:18081/apis/ccompat/v7", 18081), ("https://es:9243", 9243),
])
def test_port_of(value: str, port: int) -> None:
    assert port_of(value) == port


def test_port_of_requires_a_port() -> None:
    with pytest.raises(ConfigError):
        port_of("http://no-port.example/x")


def test_an_explicit_config_file_wins_over_sluice_config(tmp_path, monkeypatch) -> None:
    env_file, given = tmp_path / "env.yaml", tmp_path / "given.yaml"
    env_file.write_text("kafka: {bootstrap_servers: 'from-env-file:1'}\n")
    given.write_text("kafka: {bootstrap_servers: 'from-option:1'}\n")
    monkeypatch.setenv("SLUICE_CONFIG", str(env_file))
    monkeypatch.delenv("SLUICE_KAFKA__BOOTSTRAP_SERVERS", raising=False)
    assert load_settings(config=given).kafka.bootstrap_servers == "from-option:1"
    assert load_settings().kafka.bootstrap_servers == "from-env-file:1", "the option holds for that call only"


def test_unknown_keys_name_the_nearest_setting_at_any_depth(tmp_path, monkeypatch) -> None:
    conf = tmp_path / "sluice.yaml"
    conf.write_text("routing: {projects: {llm: {retention_day: 3}}}\nship: {labels: {project: x}, path: []}\n")
    monkeypatch.setenv("SLUICE_CONFIG", str(conf))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "routing.projects.llm.retention_day: unknown setting; did you mean retention_days?" in str(info.value)
    assert "ship.path: unknown setting; did you mean paths?" in str(info.value)
