"""Which sources may put their records in a project by label.

A project label (``project``, ``sluice.io/project``, Kubernetes' ``app.kubernetes.io/part-of``: the
router's ``project_keys``) is whatever the job that printed the lines, or the pod spec its owner wrote,
says it is. Honoured as is, a job could write into another
project's indices and bucket. So a claim of project P counts only from a source that the
configuration lists for P: its raw topic, Kubernetes namespace, file path or host matches one of P's
shell-style globs (``routing.claims``). An untrusted claim is dropped: the record is routed as if it
had no such label (the configured path, host and namespace rules, else the default project), and the
refusal is counted (:meth:`LabelTrust.take_refused`, drained once per turn rather than a metric call per record).

``trust_all`` honours every label, for a cluster where every job is one team's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from streams.assemble.route import sanitize

MEMO_ENTRIES = 10_000
OTHER = "(other)"  # the refused claims of projects not configured, counted together


class LabelTrust:
    def __init__(self, claims: Mapping[str, Any], *, topic: str = "", trust_all: bool = False,
                 known: Iterable[str] = ()) -> None:
        """``claims``: project -> object with ``topics``, ``namespaces``, ``paths``, ``hosts`` glob lists
        (``ProjectClaims``); ``topic``: the raw topic this stage reads; ``known``: the configured projects
        (a refusal of any other is counted as ``"(other)"``)."""
        self.claims = {sanitize(p): c for p, c in claims.items()}
        self.topic = topic
        self.trust_all = trust_all
        self.known = {sanitize(k) for k in known} | set(self.claims)
        self._refused: Counter[str] = Counter()  # claimed label -> records refused since take_refused
        self._memo: dict[tuple, bool] = {}

    def allowed(self, claimed: str, namespace: str | None, path: str | None, host: str | None) -> bool:
        """May a source with this namespace, file path and host claim project ``claimed``?"""
        if self.trust_all:
            return True
        key = (claimed, namespace, path, host)  # the raw label: a hit costs no sanitising
        hit = self._memo.get(key)
        if hit is None:
            hit = self._matches(sanitize(claimed), namespace, path, host)
            if len(self._memo) >= MEMO_ENTRIES:
                self._memo.clear()
            self._memo[key] = hit
        return hit

    def _matches(self, project: str, namespace: str | None, path: str | None, host: str | None) -> bool:
        rule = self.claims.get(project)
        if rule is None:
            return False
        return (any(fnmatchcase(self.topic, g) for g in rule.topics)
                or (namespace is not None and any(fnmatchcase(namespace, g) for g in rule.namespaces))
                or (path is not None and any(fnmatchcase(path, g) for g in rule.paths))
                or (host is not None and any(fnmatchcase(host, g) for g in rule.hosts)))

    def observe(self, claimed: str, namespace: str | None, path: str | None, host: str | None) -> None:
        """Count the record if its claim is dropped (called per record: the router caches its answers)."""
        if not self.trust_all and not self.allowed(claimed, namespace, path, host):
            if claimed not in self._refused and len(self._refused) >= MEMO_ENTRIES:
                claimed = OTHER  # a runaway labeller cannot grow the counts between two turns
            self._refused[claimed] += 1

    def take_refused(self) -> dict[str, int]:
        """Records refused per project since the last call (the project if configured, else ``"(other)"``)."""
        if not self._refused:
            return {}
        taken: Counter[str] = Counter()
        for claimed, n in self._refused.items():
            project = sanitize(claimed) if claimed is not OTHER else OTHER
            taken[project if project in self.known else OTHER] += n
        self._refused.clear()
        return dict(taken)
