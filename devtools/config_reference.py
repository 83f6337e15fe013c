"""`python -m devtools config-reference`: rewrite the configuration reference from the settings models.

``deploy/sluice.reference.yaml`` and ``docs/configuration.md`` are generated
(:mod:`streams.config_reference`); ``--check`` exits 1 when either differs from what the models say, and
``tests/unit/test_config_reference.py`` runs the same comparison.
"""

from __future__ import annotations

from pathlib import Path

from streams.config import REPO_ROOT, Settings
from streams.config_reference import reference_markdown, reference_yaml

YAML_FILE = REPO_ROOT / "deploy" / "sluice.reference.yaml"
MARKDOWN_FILE = REPO_ROOT / "docs" / "configuration.md"


def expected_files() -> dict[Path, str]:
    return {YAML_FILE: reference_yaml(Settings), MARKDOWN_FILE: reference_markdown(Settings)}


def stale_files() -> list[Path]:
    return [path for path, text in expected_files().items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def write_files() -> list[Path]:
    written = []
    for path, text in expected_files().items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
