from __future__ import annotations

from pathlib import Path

import pytest

from streams.config import load_settings
from streams.errors import ConfigError
from streams.watch.settings import WatchSettings


def test_defaults_are_the_documented_rules() -> None:
    conf = WatchSettings()
    assert (conf.gpu_idle_pct, conf.gpu_idle_window_s) == (10.0, 300)
    assert conf.incident_classes["cuda_oom"] == "critical" and conf.webhook_url is None


def test_yaml_section_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sluice.yaml"
    path.write_text("kafka: {bootstrap_servers: 'x:1'}\nwatch:\n  stall_after_s: 600\n  cooldown_s: 60\n")
    monkeypatch.setenv("SLUICE_CONFIG", str(path))
    monkeypatch.setenv("SLUICE_WATCH__COOLDOWN_S", "120")
    monkeypatch.setenv("SLUICE_WATCH__INCIDENT_CLASSES", '{"cuda_oom": "warning"}')
    monkeypatch.setenv("SLUICE_WATCH__WEBHOOK_URL", "https://hooks.example/T0K3N")
    conf = load_settings().watch
    assert conf.stall_after_s == 600 and conf.cooldown_s == 120
    assert conf.incident_classes == {"cuda_oom": "warning"}
    assert "T0K3N" not in repr(conf), "the webhook URL carries a token: never printed"


def test_invalid_values_name_the_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLUICE_CONFIG", raising=False)
    monkeypatch.setenv("SLUICE_WATCH__GPU_IDLE_PCT", "lots")
    with pytest.raises(ConfigError, match=r"watch\.gpu_idle_pct"):
        load_settings()
