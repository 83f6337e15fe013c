"""A stand-in Kubernetes API server on loopback: answers ``GET /api/v1/namespaces/<ns>/pods/<pod>``
with a pod object, for an agent's Kubernetes metadata filter (Fluent Bit's ``kubernetes`` with
``Kube_URL http://127.0.0.1:<port>``) when recording fixtures without a cluster.

    python -m devtools.agents.fake_kube_api --port 18443

The pod has the labels a training job carries (project, task id) and an annotation, so the records
show where each agent puts them. Any other path answers 404.
"""

from __future__ import annotations

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_POD_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/?]+)")


def pod(namespace: str, name: str) -> dict:
    n = name.rsplit("-", 1)[-1]
    cid = (f"{int(n):x}" * 64 if n.isdigit() and int(n) else "f" * 64)[:64]
    return {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": name, "namespace": namespace, "uid": f"0c3f6f62-1a7e-4c11-9d1e-2f6c58a6b0d{n}",
            "labels": {"project": "llm-pretrain", "task_id": "run-0412", "app.kubernetes.io/part-of": "llm"},
            "annotations": {"sluice.dev/team": "pretraining",
                            "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\"}"},
        },
        "spec": {"nodeName": "gpu-node-7", "containers": [{"name": "trainer", "image": "vllm/vllm-openai:v0.5.5"}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "trainer", "image": "vllm/vllm-openai:v0.5.5", "ready": True, "restartCount": 0,
            "imageID": "docker.io/vllm/vllm-openai@sha256:" + "ab" * 32, "containerID": f"containerd://{cid}"}]},
    }


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        m = _POD_PATH.match(self.path)
        body = json.dumps(pod(m.group(1), m.group(2))).encode() if m else b'{"kind":"Status","code":404}'
        self.send_response(200 if m else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        print(f"fake kube api: {format % args}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=18443)
    args = ap.parse_args(argv)
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
