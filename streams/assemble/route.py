"""Project routing: labels, Kubernetes metadata or configured globs/regexes -> ``logs.events.<project>``.

Order: the first of ``project_keys`` a source's labels carry (by default the ``project`` label,
``sluice.io/project``, then the Kubernetes label ``app.kubernetes.io/part-of``, each also de-dotted as
Filebeat writes it); a configured path glob on ``source.file``; a configured regex on ``source.host``;
a configured namespace mapping, else the namespace itself; else the default project. Topic names keep
only ``[a-z0-9._-]`` (Kafka's legal set, lower-cased), at most 200 characters. Values that are not
strings (an agent's envelope may carry a number or a list where a name belongs) are read as absent,
never as an error.

With ``known`` (the projects of the routing table, as the worker and ``sluice parse`` both pass it),
a project that is not in the table goes to the default project, its label kept on the event; each
such event is counted per project (:meth:`ProjectRouter.take_folded`) and ``on_fold`` is called once
per project, so the fold is visible instead of silent.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
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
                 known: Iterable[str] | None = None, on_fold: Callable[[str, str], None] | None = None,
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
        self.on_fold = on_fold  # (project asked for, project used), once per project asked for
        self._cache: dict[tuple, tuple[str, str | None]] = {}  # key -> (project, the unknown one it replaced)
        self._folded: Counter[str] = Counter()  # unknown project -> events sent to the default since take_folded
        self._told: set[str] = set()
        self.project_keys = tuple(project_keys) if project_keys is not None else SourceMetadata().project_keys()
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
            hit = self._route(label, path, host, namespace)
            if len(self._cache) < 10000:  # bounded: a source set is small, a runaway one is not cached
                self._cache[key] = hit
        project, folded = hit
        if folded is not None:
            self._folded[folded] += 1
        return project

    def _route(self, label: str | None, path: str | None, host: str | None,
               namespace: str | None) -> tuple[str, str | None]:
        """(project, the unknown project it replaced or None) of a source not seen before."""
        if self.trust is not None and label and not self.trust.allowed(label, namespace, path, host):
            label = None  # routed as if unlabelled
        wanted = sanitize(self._resolve(label, path, host, namespace))
        if self.known is None or wanted in self.known:
            return wanted, None
        if self.on_fold is not None and wanted not in self._told and len(self._told) < 10000:
            self._told.add(wanted)
            self.on_fold(wanted, self.default)
        return self.default, wanted

    def take_folded(self) -> dict[str, int]:
        """Events per unknown project routed to the default since the last call."""
        out, self._folded = dict(self._folded), Counter()
        return out

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
