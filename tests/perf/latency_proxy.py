"""A network between a benchmark and a local server: Toxiproxy (Shopify's TCP proxy, from the Go
module proxy, built by devtools/faults/toxiproxy.py), with a fixed latency each way.

On loopback a PUT costs only CPU, and the store server shares the benchmark's cores; a real object
store is a network away and a PUT mostly waits. Behind this proxy both phases of a benchmark wait
the same way. Built at run time with ``go install`` into .stack/tools (nothing of it is committed).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from devtools.faults.toxiproxy import toxiproxy_binary
from devtools.stack.base import free_port


def _api(port: int, path: str, body: dict) -> None:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()  # noqa: S310 - http to 127.0.0.1, built above


@contextmanager
def latency_proxy(upstream_url: str, latency_ms: int) -> Iterator[str]:
    """``upstream_url`` behind a proxy that delays every byte ``latency_ms`` each way; yields its URL."""
    api_port, listen_port = free_port(), free_port()
    target = urlsplit(upstream_url)
    proc = subprocess.Popen([str(toxiproxy_binary()), "-host", "127.0.0.1", "-port", str(api_port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                _api(api_port, "/proxies", {"name": "store", "listen": f"127.0.0.1:{listen_port}",
                                            "upstream": target.netloc})
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"toxiproxy did not start on 127.0.0.1:{api_port}") from None
                time.sleep(0.1)
        for stream in ("upstream", "downstream"):
            _api(api_port, "/proxies/store/toxics", {"name": stream, "type": "latency", "stream": stream,
                                                     "attributes": {"latency": latency_ms}})
        yield urlunsplit((target.scheme, f"127.0.0.1:{listen_port}", target.path, "", ""))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
