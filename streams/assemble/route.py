"""Project routing: labels, Kubernetes metadata or configured globs/regexes -> ``logs.events.<project>``.

Order: the first of ``project_keys`` a source's labels carry (by default the ``project`` label,
``sluice.io/project``, then the Kubernetes label ``app.kubernetes.io/part-of``, each also de-dotted as
Filebeat writes it); a configured path glob on ``source.file``; a configured regex on ``source.host``;
a configured namespace mapping, else the namespace itself; else the default project. Topic names keep
only ``[a-z0-9._-]`` (Kafka's legal set, lower-cased), at most 200 characters. Values that are not
strings (an agent's envelope may carry a number or a list where a name belongs) are read as absent,
never as an error.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from streams.assemble.metadata import SourceMetadata

if TYPE_CHECKING:
    from streams.assemble.trust import LabelTrust

_ILLEGAL = re.compile(r"[^a-z0-9._-]+")


def sanitize(name: str) -> str:
    s = _ILLEGAL.sub("-", name.strip().lower()).strip("-.")
    return s[:200] or "default"


class ProjectRouter:
    def __init__(self, default_project: str = "default", *, path_globs: Iterable[tuple[str, str]] = (),
                 host_patterns: Iterable[tuple[str, str]] = (), namespaces: dict[str, str] | None = None,
                 use_namespace: bool = True, topic_prefix: str = "logs.events.",
                 known: Iterable[str] | None = None,
                 project_keys: Sequence[str] | None = None, trust: LabelTrust | None = None) -> None:
        self.default = sanitize(default_project)
        # Projects with a topic. Others go to the default route (their label is kept on the event):
        # a typo in one node's label must not stop the stage on a missing topic.
        self.known = None if known is None else {sanitize(k) for k in known}
        self.path_globs = [(g, p) for g, p in path_globs]
        self.host_patterns = [(re.compile(rx), p) for rx, p in host_patterns]
        self.namespaces = dict(namespaces or {})
        self.use_namespace = use_namespace
        self.topic_prefix = topic_prefix
        self.project_keys = tuple(project_keys) if project_keys is not None else SourceMetadata().project_keys()
        self._cache: dict[tuple, str] = {}
        # Which sources may claim a project by label (streams/assemble/trust.py); None trusts every label.
        self.trust = trust

    def project(self, labels: dict, source: dict) -> str:
        label = None
        if labels:
            for k in self.project_keys:
                v = labels.get(k)
                if v and v.__class__ is str:
                    label = v
                    break
        path, host, namespace = source.get("file"), source.get("host"), source.get("namespace")
        if path.__class__ is not str:
            path = None
        if host.__class__ is not str:
            host = None
        if namespace.__class__ is not str:
            namespace = None
        key = (label, path, host, namespace)
        hit = self._cache.get(key)
        if self.trust is not None and label:
            self.trust.observe(label, namespace, path, host)
        if hit is None:
            if self.trust is not None and label and not self.trust.allowed(label, namespace, path, host):
                label = None  # routed as if unlabelled
            hit = sanitize(self._resolve(label, path, host, namespace))
            if self.known is not None and hit not in self.known:
                hit = self.default
            if len(self._cache) < 10000:  # bounded: a source set is small, a runaway one is not cached
                self._cache[key] = hit
        return hit

    def _resolve(self, label, path, host, namespace) -> str:
        if label:
            return label
        if path:
            for glob, proj in self.path_globs:
                if fnmatch.fnmatch(path, glob):
                    return proj
        if host:
            for rx, proj in self.host_patterns:
                if rx.search(host):
                    return proj
        if namespace:
            if namespace in self.namespaces:
                return self.namespaces[namespace]
            if self.use_namespace:
                return namespace
        return self.default

    def topic(self, project: str) -> str:
        return self.topic_prefix + project
