"""`sluice config show`: every effective setting, and where it came from (default, file or environment).

:func:`effective_rows` is pure: the loaded settings, the file's mapping and the environment's in, one
row per setting out, secrets masked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

MASK = "********"


@dataclass(frozen=True)
class Row:
    key: str  # dotted: kafka.bootstrap_servers, routing.projects.default.retention_days
    value: Any  # JSON-able; secrets masked
    source: str  # "default", "file <path>", "env SLUICE_...", or a secret's "*_file" twin


def _leaves(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _leaves(getattr(value, name), (*path, name))
    elif isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    else:
        yield path, value


def _lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``data`` sets ``path`` (or a part of the path above it, as a whole value)."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping):
            return True  # a value given whole above this point (a list, a JSON object)
        match = next((k for k in node if str(k).lower() == part.lower()), None)
        if match is None:
            return False
        node = node[match]
    return True


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def env_name(prefix: str, path: tuple[str, ...], environ: Mapping[str, str]) -> str:
    """The variable that set ``path``: the longest ``PREFIX_A__B...`` present in ``environ``."""
    upper = {k.upper(): k for k in environ}
    for end in range(len(path), 0, -1):
        name = prefix + "__".join(path[:end]).upper()
        if name in upper:
            return upper[name]
    return prefix + "__".join(path).upper()


def effective_rows(settings: BaseModel, file_data: Mapping[str, Any], env_data: Mapping[str, Any],
                   environ: Mapping[str, str], prefix: str, file_name: str | None) -> list[Row]:
    rows = []
    sources: dict[tuple[str, ...], str] = {}
    for path, value in _leaves(settings, ()):
        if _lookup(env_data, path):
            source = f"env {env_name(prefix, path, environ)}"
        elif _lookup(file_data, path):
            source = f"file {file_name}"
        else:
            source = "default"
        sources[path] = source
        rows.append(Row(".".join(path), _plain(value), source))
    # A secret read from its *_file twin comes from wherever the twin was set.
    out = []
    for row in rows:
        path = tuple(row.key.split("."))
        twin = (*path[:-1], f"{path[-1]}_file")
        if row.source == "default" and row.value == MASK and sources.get(twin, "default") != "default":
            out.append(Row(row.key, row.value, f"{twin[-1]} ({sources[twin]})"))
        else:
            out.append(row)
    return out


def render_table(rows: list[Row]) -> str:
    width = max((len(r.key) for r in rows), default=10)
    lines = []
    for r in rows:
        value = r.value if isinstance(r.value, str) else json.dumps(r.value, default=str)
        lines.append(f"{r.key:<{width}}  {value}  [{r.source}]")
    return "\n".join(lines)
