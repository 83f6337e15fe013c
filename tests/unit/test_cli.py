"""The `sluice` command line as a user meets it: --version, -h, --config, config show|validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from streams import __version__
from streams.cli.main import cli


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No SLUICE_* variables from the caller's shell, and no ./sluice.yaml."""
    import os

    for key in [k for k in os.environ if k.startswith("SLUICE_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_version_and_short_help() -> None:
    assert run("--version") == (0, f"sluice {__version__}\n", "")
    code, out, _ = run("-h")
    assert code == 0 and "--config FILE" in out and "config" in out
    code, out, _ = run("config", "-h")
    assert code == 0 and "validate" in out


def test_config_show_says_where_each_value_came_from(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "mine.yaml"
    conf.write_text("kafka: {bootstrap_servers: 'file-host:1'}\n"
                    "routing: {projects: {default: {}, swift: {index_prefix: ms-swift, events_per_s: 500}}}\n")
    clean_env.setenv("SLUICE_ELASTICSEARCH__URL", "http://env-host:9200")
    clean_env.setenv("SLUICE_ELASTICSEARCH__PASSWORD", "hunter2-not-printed")
    code, out, _ = run("--config", str(conf), "config", "show", "-o", "json")
    assert code == 0
    shown = json.loads(out)
    rows = {r["key"]: (r["value"], r["source"]) for r in shown["settings"]}
    assert shown["file"] == str(conf)
    assert rows["kafka.bootstrap_servers"] == ("file-host:1", f"file {conf}")
    assert rows["routing.projects.swift.index_prefix"] == ("ms-swift", f"file {conf}")
    assert rows["routing.projects.swift.events_per_s"] == (500, f"file {conf}")
    assert rows["elasticsearch.url"] == ("http://env-host:9200", "env SLUICE_ELASTICSEARCH__URL")
    assert rows["elasticsearch.password"] == ("********", "env SLUICE_ELASTICSEARCH__PASSWORD")
    assert rows["topics.raw"] == ("logs.raw", "default")
    assert "hunter2" not in out
    code, table, _ = run("--config", str(conf), "config", "show", "--changed")
    assert code == 0 and "topics.raw" not in table and "kafka.bootstrap_servers" in table and "hunter2" not in table


def test_a_secret_from_its_file_twin_is_shown_masked_with_where_it_came_from(clean_env: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    secret = tmp_path / "kafka-password"
    secret.write_text("s3cr3t-from-file\n")
    clean_env.setenv("SLUICE_KAFKA__SASL_PASSWORD_FILE", str(secret))
    code, out, _ = run("config", "show", "-o", "json")
    rows = {r["key"]: (r["value"], r["source"]) for r in json.loads(out)["settings"]}
    assert code == 0 and "s3cr3t" not in out
    assert rows["kafka.sasl_password"] == ("********", "sasl_password_file (env SLUICE_KAFKA__SASL_PASSWORD_FILE)")


def test_config_validate_accepts_a_good_file_and_names_each_bad_setting(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("hot: {capacity_events_per_s: 5000}\nship: {paths: ['/logs/*.log']}\n")
    code, out, _ = run("config", "validate", str(good))
    assert code == 0 and "valid" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("kafka: {bootstrap_server: x}\nhot: {capacity_events_per_s: -1}\nwatc: {}\n")
    code, out, err = run("config", "validate", str(bad))
    assert code == 3 and out == ""  # exit status 3: configuration (streams/cli/exits.py)
    assert "kafka.bootstrap_server: unknown setting; did you mean bootstrap_servers?" in err
    assert "hot.capacity_events_per_s: Input should be greater than 0" in err
    assert "watc: unknown setting; did you mean watch?" in err


def test_config_validate_reads_the_file_alone(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A broken environment is not the file's fault: validate judges what would be committed."""
    good = tmp_path / "good.yaml"
    good.write_text("kafka: {bootstrap_servers: 'a:1'}\n")
    clean_env.setenv("SLUICE_TOPICS__RAW_PARTITIONS", "many")
    assert run("config", "validate", str(good))[0] == 0


def test_bad_yaml_is_one_line_with_the_place(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kafka:\n  bootstrap_servers: [\n")
    code, _, err = run("config", "validate", str(broken))
    assert code == 3 and err.startswith(f"sluice: {broken}: line ") and "Traceback" not in err


def test_an_unknown_environment_variable_stops_every_command(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("SLUICE_KAFKA__BOOTSTRAP_SERVER", "typo:1")
    code, _, err = run("config", "show")
    assert code == 3
    assert "SLUICE_KAFKA__BOOTSTRAP_SERVER names no setting; did you mean SLUICE_KAFKA__BOOTSTRAP_SERVERS?" in err


def test_a_missing_config_file_is_named(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, _, err = run("--config", str(tmp_path / "nope.yaml"), "config", "show")
    assert code == 3 and "nope.yaml does not exist" in err


def test_config_reference_prints_the_generated_file() -> None:
    from devtools.config_reference import YAML_FILE

    code, out, _ = run("config", "reference")
    assert code == 0 and out == YAML_FILE.read_text(encoding="utf-8")


def test_log_format_option_reaches_the_settings(clean_env: pytest.MonkeyPatch) -> None:
    code, out, _ = run("--log-format", "json", "config", "show", "-o", "json")
    rows = {r["key"]: (r["value"], r["source"]) for r in json.loads(out)["settings"]}
    assert code == 0 and rows["observability.log_format"] == ("json", "option --log-format")
