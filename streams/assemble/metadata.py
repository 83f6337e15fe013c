"""Source metadata -> event fields: which label (or Kubernetes annotation) names the project, task,
task type, model, phase, node role and rank of a source.

Labels reach the stage from ``sluice ship`` (``--label``), from Avro batches, and from the Kubernetes
metadata agents attach: Fluent Bit's kubernetes filter (``kubernetes.labels`` / ``.annotations``),
Vector's ``kubernetes_logs`` (``kubernetes.pod_labels`` / ``.pod_annotations``) and Filebeat's
``add_kubernetes_metadata`` (``kubernetes.labels.*`` / ``.annotations.*``); the decoder puts labels and
annotations alike into ``labels``. Filebeat and rsyslog "de-dot" keys by default (``app_kubernetes_io/name``),
so every key also matches with its dots written as underscores.

The first key of a field's list that a source carries wins. The defaults follow what the operators
put on training pods: Kubeflow's training-operator (``training.kubeflow.org/job-name``, ``replica-type``
master/worker/launcher, ``replica-index``), JobSet and Kubeflow Trainer (``jobset.sigs.k8s.io/jobset-name``,
``replicatedjob-name``, ``batch.kubernetes.io/job-completion-index``), Volcano (``volcano.sh/job-name``,
``task-spec``, ``task-index``), KubeRay (``ray.io/cluster``, ``ray.io/node-type`` head/worker),
LeaderWorkerSet (``leaderworkerset.sigs.k8s.io/name``, ``worker-index``), and Sluice's own
``sluice.io/*`` keys for what no operator says (task type, model). The replica index of an operator is
the pod's index within its role, not a process rank: ranks of a multi-GPU pod are told apart by the
lines' own ``[rankN]:`` prefixes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "project": ("project", "sluice.io/project", "app.kubernetes.io/part-of"),
    "task_id": ("task_id", "sluice.io/task-id", "training.kubeflow.org/job-name", "jobset.sigs.k8s.io/jobset-name",
                "volcano.sh/job-name", "leaderworkerset.sigs.k8s.io/name", "ray.io/cluster",
                "batch.kubernetes.io/job-name", "job-name"),
    "task_type": ("task_type", "sluice.io/task-type"),
    "model_name": ("model_name", "sluice.io/model-name"),
    "phase": ("phase", "sluice.io/phase"),
    "node_role": ("node_role", "sluice.io/node-role", "training.kubeflow.org/replica-type",
                  "jobset.sigs.k8s.io/replicatedjob-name", "volcano.sh/task-spec", "ray.io/node-type"),
    "rank": ("rank", "sluice.io/rank", "training.kubeflow.org/replica-index",
             "batch.kubernetes.io/job-completion-index", "volcano.sh/task-index",
             "leaderworkerset.sigs.k8s.io/worker-index", "apps.kubernetes.io/pod-index"),
}
FIELDS = tuple(DEFAULT_KEYS)
MAX_VALUE_CHARS = 256


def dedot(key: str) -> str:
    return key.replace(".", "_")


class SourceMetadata:
    """labels -> {field: value} by the configured keys; one pass over the labels, not one per key."""

    def __init__(self, keys: Mapping[str, Sequence[str]] | None = None) -> None:
        table = dict(DEFAULT_KEYS)
        table.update({f: tuple(ks) for f, ks in (keys or {}).items()})
        unknown = set(table) - set(FIELDS)
        if unknown:
            raise ValueError(f"source metadata: unknown field(s) {sorted(unknown)}; known: {', '.join(FIELDS)}")
        self.keys = table
        self._rank: dict[str, tuple[str, int]] = {}  # label key -> (field, priority: lower wins)
        for f, ks in table.items():
            for i, k in enumerate(ks):
                self._rank.setdefault(k, (f, i))
                self._rank.setdefault(dedot(k), (f, i))

    def project_keys(self) -> tuple[str, ...]:
        """The project's keys, each also de-dotted (what the router looks up)."""
        out: list[str] = []
        for k in self.keys["project"]:
            out += [k] if dedot(k) == k else [k, dedot(k)]
        return tuple(out)

    def resolve(self, labels: Mapping[str, object]) -> dict[str, str]:
        """The fields the labels name (project left to the router). Values that are not short strings
        are ignored: a label map is an agent's, not ours to trust."""
        best: dict[str, tuple[int, str]] = {}
        rank = self._rank
        for k, v in labels.items():
            hit = rank.get(k)
            if hit is None or not isinstance(v, str) or not v or len(v) > MAX_VALUE_CHARS:
                continue
            f, i = hit
            if f != "project" and (f not in best or i < best[f][0]):
                best[f] = (i, v)
        return {f: v for f, (_i, v) in best.items()}
