"""Unknown keys and ``SLUICE_*`` variables, found before they silently fall back to defaults.

Pure functions over the settings models: a location (``["kafka", "bootstrap_server"]``) or an
environment mapping in, messages out that name the nearest valid setting.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

# SLUICE_* variables that are not settings: the configuration file itself, where the image keeps the Avro
# contracts, and the test suite's choice of servers.
NON_SETTING_VARIABLES = frozenset({"SLUICE_CONFIG", "SLUICE_SCHEMA_DIR", "SLUICE_TEST_STACK"})


def _options(annotation: Any) -> list[Any]:
    """The members of ``X | None`` / ``Optional[X]``, or ``[annotation]``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def model_of(annotation: Any) -> type[BaseModel] | None:
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return option
    return None


def dict_value_of(annotation: Any) -> Any | None:
    """The value type of a ``dict[str, V]`` annotation (``V``), else None."""
    for option in _options(annotation):
        if typing.get_origin(option) is dict:
            args = typing.get_args(option)
            return args[1] if len(args) == 2 else Any
    return None


def _nearest(name: str, candidates: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(name.lower(), list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_key_hint(root: type[BaseModel], loc: Sequence[str]) -> str:
    """``"; did you mean bootstrap_servers?"`` for an unknown key at ``loc``, or ``""``."""
    model: type[BaseModel] | None = root
    annotation: Any = None
    for part in loc[:-1]:
        if model is not None:
            field = model.model_fields.get(part)
            if field is None:
                return ""
            annotation, model = field.annotation, model_of(field.annotation)
        else:  # inside a dict: the key is free, the value has the dict's value type
            value = dict_value_of(annotation)
            annotation, model = value, model_of(value)
    if model is None:
        return ""
    near = _nearest(loc[-1], list(model.model_fields))
    return f"; did you mean {near}?" if near else f"; valid here: {', '.join(model.model_fields)}"


def unknown_environment(root: type[BaseModel], environ: Mapping[str, str], prefix: str) -> list[str]:
    """One message per ``<prefix>*`` variable that names no setting, with the nearest valid name."""
    problems = []
    for name in sorted(environ):
        if not name.upper().startswith(prefix) or name.upper() in NON_SETTING_VARIABLES:
            continue
        parts = name[len(prefix):].lower().split("__")
        bad = _first_unknown(root, parts)
        if bad is None:
            continue
        index, candidates = bad
        near = _nearest(parts[index], candidates) if candidates else None
        if near is not None:
            suggestion = prefix + "__".join([*parts[:index], near]).upper()
            hint = f"; did you mean {suggestion}?"
        else:
            hint = "" if not candidates else f"; valid after {prefix}{'__'.join(parts[:index]).upper()}: " + \
                ", ".join(c.upper() for c in candidates)
        problems.append(f"{name} names no setting{hint}")
    return problems


def _first_unknown(root: type[BaseModel], parts: list[str]) -> tuple[int, list[str]] | None:
    """(index of the first part that is no setting, the names valid there), or None when all are."""
    model: type[BaseModel] | None = root
    annotation: Any = None
    for i, part in enumerate(parts):
        if not part:
            return i, list(model.model_fields) if model is not None else []
        if model is not None:
            fields = {n.lower(): f for n, f in model.model_fields.items()}
            field = fields.get(part)
            if field is None:
                return i, list(model.model_fields)
            annotation, model = field.annotation, model_of(field.annotation)
            continue
        value = dict_value_of(annotation)
        if value is None:  # a leaf (a number, a string, a list given as JSON): nothing may follow it
            return i, []
        annotation, model = value, model_of(value)
    return None
