"""Where a file's lines come from: the ``sluice.v1.Source`` and the labels of its batches (pure).

Labels, lowest precedence first: the Kubernetes downward-API labels file (``key="value"`` lines),
the configured labels (``SLUICE_SHIP__LABELS__<KEY>``), then the named groups of ``path_pattern``
matched against the file's path. ``node_role`` and ``rank`` also fill the Source fields of the
same names. The node, namespace, pod and container come from the settings, else from the downward
API environment (``NODE_NAME``, ``POD_NAMESPACE``, ``POD_NAME``, ``CONTAINER_NAME``).
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streams.errors import ConfigError
from streams.ship.bounds import bound_source
from streams.ship.settings import ShipSettings

_INTEGER = re.compile(r"[-+]?[0-9]+")  # ASCII digits only: int() takes other scripts' digits, \d too

# Labels Kubernetes adds to every DaemonSet/Deployment pod: they describe rollouts, not logs.
GENERATED_LABELS = frozenset({"controller-revision-hash", "pod-template-generation", "pod-template-hash"})


def parse_podinfo_labels(text: str) -> dict[str, str]:
    """The downward API's labels file: one ``key="value"`` per line, values Go-quoted."""
    labels: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            try:
                value = json.loads(value)  # Go's %q escapes are JSON's for printable text
            except ValueError:
                value = value[1:-1]
        if key.strip() not in GENERATED_LABELS:
            labels[key.strip()] = value
    return labels


@dataclass(frozen=True, slots=True)
class Origin:
    """The node-wide part of every source."""

    host: str
    namespace: str | None
    pod: str | None
    container: str | None
    labels: dict[str, str]  # downward-API labels overlaid with the configured ones


def origin(settings: ShipSettings, env: Mapping[str, str], podinfo_labels: str | None,
           hostname: str | None = None) -> Origin:
    labels = parse_podinfo_labels(podinfo_labels) if podinfo_labels else {}
    labels.update(settings.labels)
    host = settings.node_name or env.get("NODE_NAME") or hostname or socket.gethostname()
    return Origin(
        host=host,
        namespace=settings.namespace or env.get("POD_NAMESPACE"),
        pod=settings.pod or env.get("POD_NAME"),
        container=settings.container or env.get("CONTAINER_NAME"),
        labels=labels,
    )


class SourceBuilder:
    """Source and labels for each file path, bounded to the contract (``bounds.bound_source``)."""

    def __init__(self, node: Origin, path_pattern: str | None) -> None:
        self.node = node
        try:
            self.pattern = re.compile(path_pattern) if path_pattern else None
        except re.error as exc:
            raise ConfigError(f"ship.path_pattern {path_pattern!r} is not a regex: {exc}") from exc

    def for_path(self, path: str) -> tuple[dict[str, Any], dict[str, str]]:
        labels = dict(self.node.labels)
        match = self.pattern.search(path) if self.pattern else None
        if match:
            labels.update({k: v for k, v in match.groupdict().items() if v is not None})
        rank = labels.get("rank")
        source: dict[str, Any] = {
            "host": self.node.host,
            "namespace": labels.pop("namespace", None) or self.node.namespace,
            "pod": labels.pop("pod", None) or self.node.pod,
            "container": labels.pop("container", None) or self.node.container,
            "file": path,
            "stream": labels.pop("stream", None),
            "node_role": labels.get("node_role"),
            "rank": int(rank) if rank is not None and _INTEGER.fullmatch(rank) else None,
        }
        return bound_source(source, labels)
