"""Fixtures for the agents no binary of could be had here: Vector and Filebeat, written from their
documented event shapes (not recorded from the programs), for real corpus files.

    python -m devtools.agents.documented

- Vector (``file`` source, and ``kubernetes_logs``) into the ``kafka`` sink with ``encoding.codec =
  "json"`` and ``key_field = "file"``: the event's fields as the source reference lists them; the
  line without its newline in ``message``; container lines joined by the source (auto_partial_merge).
- Filebeat 8 (``filestream``, and ``filestream`` with the ``container`` parser and
  ``add_kubernetes_metadata``) into ``output.kafka`` with ``codec.json`` and ``key:
  '%{[log.file.path]}'``: ECS fields, ``log.offset`` the byte offset of the line.

Each fixture's meta.json says ``"documented": true``. Replace them with recordings when the real
programs can be run (``python -m devtools.agents.record``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from devtools.agents.records import Recorded, dump
from devtools.agents.run import REPO

FIXTURES = REPO / "tests" / "fixtures" / "agents"
FILES = ("corpus/training/vllm_worker_nccl_illegal_memory_watchdog_chained.log",
         "corpus/training/java_apex_hadoop_log4j_stacktraces_wrong_fs.log")
CONTAINER = "tests/fixtures/agents/inputs/cri_vllm_serve_jamba_cuda_oom_kv_cache.log"
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
POD = {"name": "trainer-0", "namespace": "train", "uid": "0c3f6f62-1a7e-4c11-9d1e-2f6c58a6b0d0",
       "node": "gpu-node-7", "labels": {"project": "llm-pretrain", "task_id": "run-0412"},
       "container": "trainer", "image": "vllm/vllm-openai:v0.5.5"}


def _stamp(n: int, nanos: bool) -> str:
    """Vector writes RFC 3339 with nanoseconds, Filebeat with milliseconds."""
    t = START + timedelta(milliseconds=n)
    frac = t.strftime("%f")
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + (frac + "123" if nanos else frac[:3]) + "Z"


def _file_lines(path: Path) -> list[tuple[int, str]]:
    """(byte offset, line) of every non-empty line, as a tailing agent reads them."""
    out, offset = [], 0
    for raw in path.read_bytes().split(b"\n")[:-1]:
        if raw.strip():
            out.append((offset, raw.decode("utf-8", "replace")))
        offset += len(raw) + 1
    return out


def _container_lines(path: Path) -> list[tuple[str, str]]:
    """(stream, line) of a CRI file with the runtime's partial pieces joined, as the agents do."""
    out, held = [], ""
    for raw in path.read_text(encoding="utf-8").split("\n")[:-1]:
        _ts, stream, tag, text = [*raw.split(" ", 3), ""][:4]
        held += text
        if tag == "F":
            out.append((stream, held))
            held = ""
    return out


def _partition(key: str, partitions: int = 3) -> int:
    return sum(key.encode()) % partitions  # stands in for the producer's hash: one key, one partition


def vector_file(host: str = "gpu-node-7") -> list[Recorded]:
    recs: list[Recorded] = []
    for f in FILES:
        path = f"/var/log/train/{Path(f).name}"
        for n, (_off, line) in enumerate(_file_lines(REPO / f)):
            ev = {"file": path, "host": host, "message": line, "source_type": "file", "timestamp": _stamp(n, True)}
            recs.append(Recorded(_partition(path), len(recs), path.encode(), json.dumps(ev).encode()))
    return recs


def vector_kubernetes() -> list[Recorded]:
    path = f"/var/log/pods/{POD['namespace']}_{POD['name']}_{POD['uid']}/{POD['container']}/0.log"
    recs: list[Recorded] = []
    for n, (stream, line) in enumerate(_container_lines(REPO / CONTAINER)):
        ev = {"file": path, "kubernetes": {
            "container_image": POD["image"], "container_name": POD["container"], "pod_labels": POD["labels"],
            "pod_name": POD["name"], "pod_namespace": POD["namespace"], "pod_node_name": POD["node"],
            "pod_uid": POD["uid"]}, "message": line, "source_type": "kubernetes_logs", "stream": stream,
            "timestamp": _stamp(n, True)}
        recs.append(Recorded(_partition(path), len(recs), path.encode(), json.dumps(ev).encode()))
    return recs


def _beat(n: int) -> dict:
    return {"@timestamp": _stamp(n, False), "@metadata": {"beat": "filebeat", "type": "_doc", "version": "8.17.0"},
            "ecs": {"version": "8.0.0"}, "host": {"name": "gpu-node-7"},
            "agent": {"type": "filebeat", "version": "8.17.0", "name": "gpu-node-7"}}


def filebeat_filestream() -> list[Recorded]:
    recs: list[Recorded] = []
    for f in FILES:
        path = f"/var/log/train/{Path(f).name}"
        for n, (off, line) in enumerate(_file_lines(REPO / f)):
            ev = {**_beat(n), "log": {"offset": off, "file": {"path": path}}, "message": line,
                  "input": {"type": "filestream"}}
            recs.append(Recorded(_partition(path), len(recs), path.encode(), json.dumps(ev).encode()))
    return recs


def filebeat_kubernetes() -> list[Recorded]:
    path = f"/var/log/containers/{POD['name']}_{POD['namespace']}_{POD['container']}-{'f' * 64}.log"
    recs: list[Recorded] = []
    for n, (stream, line) in enumerate(_container_lines(REPO / CONTAINER)):
        ev = {**_beat(n), "log": {"offset": n * 200, "file": {"path": path}}, "message": line, "stream": stream,
              "input": {"type": "filestream"}, "container": {"id": "f" * 64, "runtime": "containerd",
                                                             "image": {"name": POD["image"]}},
              "kubernetes": {"pod": {"name": POD["name"], "uid": POD["uid"]}, "namespace": POD["namespace"],
                             "node": {"name": POD["node"]}, "labels": POD["labels"],
                             "container": {"name": POD["container"], "image": POD["image"]}}}
        recs.append(Recorded(_partition(path), len(recs), path.encode(), json.dumps(ev).encode()))
    return recs


CASES = {
    "vector-file-documented": (vector_file, FILES, "Vector file source -> kafka sink, encoding.codec json, "
                                                   "key_field file"),
    "vector-kubernetes-documented": (vector_kubernetes, (CONTAINER,), "Vector kubernetes_logs -> kafka sink, "
                                                                     "encoding.codec json, key_field file"),
    "filebeat-filestream-documented": (filebeat_filestream, FILES, "Filebeat 8 filestream -> output.kafka, "
                                                                   "codec.json, key %{[log.file.path]}"),
    "filebeat-kubernetes-documented": (filebeat_kubernetes, (CONTAINER,), "Filebeat 8 filestream + container "
                                                                         "parser + add_kubernetes_metadata -> "
                                                                         "output.kafka, codec.json"),
}


def main() -> int:
    for case, (make, inputs, how) in CASES.items():
        out = FIXTURES / case
        out.mkdir(parents=True, exist_ok=True)
        n = dump(make(), out / "records.jsonl")
        meta = {"agent": case.split("-")[0], "documented": True, "config": None, "inputs": list(inputs),
                "container_log": case.endswith("kubernetes-documented"), "records": n,
                "note": f"written from the agent's documented event shape, not recorded: {how}"}
        (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"{case}: {n} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
