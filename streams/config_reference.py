"""The configuration reference, generated from the settings models' field descriptions.

:func:`reference_yaml` is a complete, commented configuration file (``deploy/sluice.reference.yaml``);
:func:`reference_markdown` is the same as a page (``docs/configuration.md``). Both are pure functions of
the models, so a setting is documented where it is declared, and a test fails when either file is stale
(``python -m devtools config-reference`` rewrites them; ``sluice config reference`` prints them).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from streams.config_check import dict_value_of, model_of

WIDTH = 110
HEADER = """\
Sluice configuration reference: every setting with its default and what it does.
Generated from the settings models (python -m devtools config-reference); do not edit by hand.
Use it as a starting point: copy it, keep the sections you change, and check the result with
`sluice config validate FILE`. Any setting can be set in the environment instead, as
SLUICE_<SECTION>__<FIELD> (SLUICE_KAFKA__BOOTSTRAP_SERVERS=broker:9092); the environment wins over the file.
Secrets are left commented out: give them through the environment or their *_file twin."""


@dataclass(frozen=True)
class Entry:
    path: tuple[str, ...]  # ("routing", "projects", "<project>", "index_prefix")
    field: FieldInfo
    default: Any


def _default(field: FieldInfo) -> Any:
    return field.get_default(call_default_factory=True)


def _extra(field: FieldInfo, key: str) -> Any:
    extra = field.json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def entries(model: type[BaseModel], path: tuple[str, ...] = ()) -> Iterator[Entry]:
    """Every leaf setting of ``model``; a dict of models is documented once, under a ``<key>`` placeholder."""
    for name, field in model.model_fields.items():
        here = (*path, name)
        sub = model_of(field.annotation)
        value_type = dict_value_of(field.annotation)
        if sub is not None:
            yield from entries(sub, here)
        elif value_type is not None and model_of(value_type) is not None:
            yield Entry(here, field, _default(field))
            placeholder = f"<{name.removesuffix('s')}>"
            yield from entries(model_of(value_type), (*here, placeholder))  # type: ignore[arg-type]
        else:
            yield Entry(here, field, _default(field))


def _is_secret(field: FieldInfo) -> bool:
    return "SecretStr" in str(field.annotation)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=True)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return json.loads(json.dumps(value, default=str))


def _scalar(value: Any) -> str:
    if isinstance(value, SecretStr):
        return "'********'"
    text = yaml.safe_dump(_jsonable(value), default_flow_style=True, width=10_000, sort_keys=False)
    return text.strip().removesuffix("...").strip()


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - len(indent) - 2, initial_indent=f"{indent}# ",
                         subsequent_indent=f"{indent}# ", break_on_hyphens=False)


def _yaml_model(model: type[BaseModel], instance: BaseModel | None, indent: str, env: str) -> list[str]:
    lines: list[str] = []
    for name, field in model.model_fields.items():
        value = getattr(instance, name) if instance is not None else _default(field)
        lines += _comment(field.description or "", indent)
        for example in field.examples or []:
            if isinstance(example, dict) and model_of(dict_value_of(field.annotation)) is not None:
                lines.append(f"{indent}# example:")
                dumped = yaml.safe_dump({name: example}, sort_keys=False, default_flow_style=False).splitlines()
                lines += [f"{indent}#   {line}" for line in dumped]
            else:
                lines.append(f"{indent}# example: {_scalar(example)}")
        sub = model_of(field.annotation)
        value_type = dict_value_of(field.annotation)
        var = f"{env}__{name.upper()}"
        reference_default = _extra(field, "reference_default")
        if sub is not None:
            lines.append(f"{indent}{name}:")
            lines += _yaml_model(sub, value, indent + "  ", var)
        elif value_type is not None and model_of(value_type) is not None and value:
            lines.append(f"{indent}{name}:")
            for key, item in value.items():
                lines.append(f"{indent}  {key}:")
                lines += _yaml_model(model_of(value_type), item, indent + "    ",  # type: ignore[arg-type]
                                     f"{var}__{str(key).upper()}")
        elif _is_secret(field):
            twin = f" or {name}_file" if f"{name}_file" in model.model_fields else ""
            lines.append(f"{indent}# {name}: (secret: set {var}{twin})")
        elif reference_default is not None:
            lines.append(f"{indent}# {name}: (default: {reference_default})")
        else:
            lines.append(f"{indent}{name}: {_scalar(value)}")
    return lines


def _section(name: str, field: FieldInfo) -> type[BaseModel]:
    sub = model_of(field.annotation)
    if sub is None:
        raise TypeError(f"settings field {name!r} is not a section (a model): the reference has no place for it")
    return sub


def reference_yaml(settings_model: type[BaseModel]) -> str:
    lines = [f"# {line}" if line else "#" for line in HEADER.splitlines()]
    for name, field in settings_model.model_fields.items():
        sub = _section(name, field)
        lines += ["", f"# {'-' * (WIDTH - 2)}"]
        lines += _comment(f"{name}: {field.description or ''}", "")
        lines.append(f"{name}:")
        lines += _yaml_model(sub, None, "  ", f"SLUICE_{name.upper()}")
    return "\n".join(lines) + "\n"


MARKDOWN_INTRO = """\
# Configuration

Sluice reads one YAML file plus environment overrides, for every command and every stage. This page
is generated from the settings models (`python -m devtools config-reference`); so is
[`deploy/sluice.reference.yaml`](../deploy/sluice.reference.yaml), a complete commented file to start from.

**Where settings come from**, later wins: the defaults below, then the file, then the environment.

- The file is `sluice --config PATH`, else `$SLUICE_CONFIG`, else `./sluice.yaml` when present.
- Any setting can be set as `SLUICE_<SECTION>__<FIELD>`; `__` goes one level deeper each time
  (`SLUICE_ROUTING__PROJECTS__LLM__RETENTION_DAYS=14`). Lists and mappings take JSON
  (`SLUICE_SHIP__PATHS='["/var/log/train/**/*.log"]'`).
- Unknown keys in the file and unknown `SLUICE_*` variables are errors naming the nearest valid
  setting: a typo never falls back to a default silently.
- Secrets (`SecretStr`) never print. Each has a `*_file` twin read once at start (a mounted secret);
  a trailing newline is dropped, and setting both to different values is an error.

**Checking a configuration.** `sluice config validate FILE` checks a file on its own (exit status 3 with the
setting and the reason); `sluice --config FILE config show` prints every effective value and where it
came from (default, file, or the environment variable), secrets masked.

## Examples

A second project with its own indices, bucket, retention and a rate cap:

```yaml
routing:
  projects:
    default: {}
    swift:
      index_prefix: ms-swift      # indices ms-swift-<task_type>-YYYY.MM.DD, i.e. ms-swift-%{task_type}-%{+YYYY.MM.dd}
      bucket: swift-archive
      retention_days: 14
      events_per_s: 500           # at most 500 events/s per sink worker; the rest of the budget goes to others
```

Then `sluice topics create` and `sluice schemas register` make its topic `logs.events.swift` and
register its contract, and the workers pick the project up when they restart.

Your own clusters (Elasticsearch 8.x or 9.x, secrets from files):

```yaml
kafka:
  bootstrap_servers: kafka-0.example:9093,kafka-1.example:9093
  security_protocol: SASL_SSL
  sasl_mechanism: SCRAM-SHA-512
  sasl_username: sluice
  sasl_password_file: /run/secrets/kafka-password
  ssl_cafile: /etc/ssl/kafka-ca.pem
registry:
  url: https://registry.example:8081
elasticsearch:
  url: https://es.example:9200
  api_key_file: /run/secrets/es-api-key
  ca_certs: /etc/ssl/es-ca.pem
object_store:
  endpoint_url: https://s3.eu-west-1.amazonaws.com
  region: eu-west-1
  access_key_id: AKIA...
  secret_access_key_file: /run/secrets/s3-secret
  default_bucket: my-training-logs
hot:
  capacity_events_per_s: 5000     # your cluster's measured bulk rate / number of hot workers
  number_of_replicas: 1
```
"""


def _md_text(text: str) -> str:
    """Plain text in a table cell: <placeholders> would read as HTML tags, | would end the cell, * emphasise."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            .replace("*", "\\*"))


def _md_value(entry: Entry) -> str:
    if _is_secret(entry.field):
        return "secret"
    reference_default = _extra(entry.field, "reference_default")
    if reference_default is not None:
        return str(reference_default)
    return f"`{_scalar(entry.default)}`".replace("|", "\\|")


def reference_markdown(settings_model: type[BaseModel]) -> str:
    out = [MARKDOWN_INTRO]
    for name, field in settings_model.model_fields.items():
        sub = _section(name, field)
        out += ["", f"## `{name}`", "", _md_text(field.description or ""), "",
                "| setting | default | environment | what it does |", "|---|---|---|---|"]
        for entry in entries(sub, (name,)):
            key = ".".join(entry.path)
            env = "SLUICE_" + "__".join(p.upper() for p in entry.path)
            text = _md_text(entry.field.description or "")
            examples = "; ".join(_scalar(e) for e in entry.field.examples or [])
            if examples:
                text += f" Example: `{examples}`.".replace("|", "\\|")
            out.append(f"| `{key}` | {_md_value(entry)} | `{env}` | {text} |")
    return "\n".join(out) + "\n"
