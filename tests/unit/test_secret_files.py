"""Secrets from files (``*_file`` settings), and the Faust credentials built from Kafka settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from streams.config import ElasticsearchSettings, KafkaSettings, ObjectStoreSettings, load_settings
from streams.errors import ConfigError

SECRET = "s3cr3t-Qx7vT2mN9pLw"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text(SECRET + "\n")  # as `echo secret > file` or a Kubernetes secret with a newline
    return path


def test_each_secret_reads_its_file_without_the_trailing_newline(secret_file: Path) -> None:
    assert KafkaSettings(sasl_password_file=secret_file).sasl_password == SecretStr(SECRET)
    es = ElasticsearchSettings(password_file=secret_file, api_key_file=secret_file)
    assert es.password == SecretStr(SECRET) and es.api_key == SecretStr(SECRET)
    # The file wins over the built-in default of the local store.
    store = ObjectStoreSettings(access_key_id="AKIAIOSFODNN7EXAMPLE", secret_access_key_file=secret_file)
    assert store.secret_access_key == SecretStr(SECRET)


def test_client_configs_use_the_secret_from_the_file(secret_file: Path) -> None:
    kafka = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", sasl_username="u",
                          sasl_password_file=secret_file)
    assert kafka.client_config()["sasl.password"] == SECRET


def test_environment_names_the_file(secret_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_ELASTICSEARCH__PASSWORD_FILE", str(secret_file))
    monkeypatch.setenv("SLUICE_OBJECT_STORE__ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("SLUICE_OBJECT_STORE__SECRET_ACCESS_KEY_FILE", str(secret_file))
    settings = load_settings()
    assert settings.elasticsearch.password == SecretStr(SECRET)
    assert settings.object_store.secret_access_key == SecretStr(SECRET)


def test_value_and_a_different_file_conflict_without_showing_either(secret_file: Path) -> None:
    with pytest.raises(ConfigError, match="set password or password_file, not both") as info:
        load_settings(elasticsearch={"password": "other-value", "password_file": str(secret_file)})
    assert SECRET not in str(info.value) and "other-value" not in str(info.value)


def test_settings_rebuilt_from_their_own_dump_still_load(secret_file: Path) -> None:
    kafka = KafkaSettings(sasl_password_file=secret_file)
    again = KafkaSettings.model_validate(kafka.model_dump())
    assert again.sasl_password == SecretStr(SECRET)


def test_missing_and_empty_files_name_the_setting_and_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=r"sasl_password_file: cannot read .*nope"):
        load_settings(kafka={"sasl_password_file": str(missing)})
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match=r"api_key_file: .* is empty"):
        load_settings(elasticsearch={"api_key_file": str(empty)})


def test_secrets_from_files_do_not_print(secret_file: Path) -> None:
    settings = load_settings(kafka={"sasl_password_file": str(secret_file)},
                             elasticsearch={"password_file": str(secret_file)},
                             object_store={"access_key_id": "AKIAIOSFODNN7EXAMPLE",
                                           "secret_access_key_file": str(secret_file)})
    for text in (repr(settings), str(settings), settings.model_dump_json(), str(settings.model_dump())):
        assert SECRET not in text


