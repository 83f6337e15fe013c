"""The configuration reference is generated from the models, complete, and fails when it goes stale."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, create_model

from devtools.config_reference import MARKDOWN_FILE, YAML_FILE, stale_files
from streams.config import KafkaSettings, Settings, validate_file
from streams.config_check import dict_value_of, model_of
from streams.config_reference import entries, reference_markdown, reference_yaml


def _models(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[type[BaseModel]]:
    seen = seen if seen is not None else set()
    seen.add(model)
    for field in model.model_fields.values():
        for sub in (model_of(field.annotation), model_of(dict_value_of(field.annotation))):
            if sub is not None and sub not in seen:
                _models(sub, seen)
    return seen


def test_every_setting_says_what_it_does() -> None:
    missing = [f"{m.__name__}.{name}" for m in _models(Settings) for name, f in m.model_fields.items()
               if not (f.description or "").strip()]
    assert not missing, f"settings without a description (Field(description=...)): {missing}"


def test_the_reference_files_are_up_to_date() -> None:
    assert not stale_files(), "run `python -m devtools config-reference` and commit the result"


def test_a_new_setting_makes_the_reference_stale() -> None:
    """What the test above guards against: a field added to a section changes both generated files."""
    kafka_plus = create_model("KafkaPlus", __base__=KafkaSettings,
                              linger_ms=(int, Field(default=5, description="A setting added without regenerating.")))
    settings_plus = create_model("SettingsPlus", __base__=Settings,
                                 kafka=(kafka_plus, Field(default_factory=kafka_plus, description="Kafka.")))
    assert "linger_ms: 5" in reference_yaml(settings_plus)
    assert reference_yaml(settings_plus) != YAML_FILE.read_text(encoding="utf-8")
    assert "`kafka.linger_ms`" in reference_markdown(settings_plus)
    assert reference_markdown(settings_plus) != MARKDOWN_FILE.read_text(encoding="utf-8")


def test_every_setting_is_in_both_files() -> None:
    yaml_text = YAML_FILE.read_text(encoding="utf-8")
    markdown = MARKDOWN_FILE.read_text(encoding="utf-8")
    for entry in entries(Settings):
        assert f"`{'.'.join(entry.path)}`" in markdown, entry.path
        assert f"{entry.path[-1]}:" in yaml_text, entry.path


def test_the_reference_file_is_a_valid_configuration_of_the_defaults(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert validate_file(YAML_FILE).model_dump() == validate_file(empty).model_dump()
