"""Real network faults between a worker and a server: Toxiproxy (Shopify's TCP proxy), built from the Go
module proxy with ``go install`` into ``.stack/tools`` (nothing of it is committed).

One :class:`Toxiproxy` server holds any number of proxies, each a listening port in front of one
upstream ``host:port``. Faults are Toxiproxy's toxics, put on a proxy and taken off again:

- ``latency``: every byte waits ``latency`` ms (± ``jitter``) each way;
- ``blackhole``: the ``timeout`` toxic with timeout 0: data stops and the connection is never closed,
  what a dropped route or a firewall silently eating packets looks like to a client;
- ``reset``: ``reset_peer``: connections are reset (TCP RST) at once;
- ``slow_close``: the proxy waits before closing a connection the server closed;
- ``bandwidth``: a few KB/s each way;
- ``down``: the proxy disabled: connections are refused, as if the server's port were closed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from devtools.stack.base import free_port
from streams.config import REPO_ROOT

MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0"
TOOLS = REPO_ROOT / ".stack" / "tools"

# Each fault kind: (toxic type, attributes), applied downstream (server to client) and upstream alike.
TOXICS: dict[str, tuple[str, dict[str, Any]]] = {
    "latency": ("latency", {"latency": 300, "jitter": 100}),
    "blackhole": ("timeout", {"timeout": 0}),
    "reset": ("reset_peer", {"timeout": 0}),
    "slow_close": ("slow_close", {"delay": 3000}),
    "bandwidth": ("bandwidth", {"rate": 32}),  # KB/s
}
KINDS = (*TOXICS, "down")


def toxiproxy_binary() -> Path:
    binary = TOOLS / "bin" / "server"
    if not binary.exists():
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("Go is needed to build Toxiproxy (go install); install Go (the polyglot machines "
                               "have it) to run the fault suite's network faults")
        subprocess.run([go, "install", MODULE], check=True, env={**os.environ, "GOBIN": str(TOOLS / "bin")})
    return binary


@dataclass
class Proxy:
    name: str
    listen_port: int
    upstream: str  # host:port

    def url_for(self, upstream_url: str) -> str:
        """``upstream_url`` (scheme, path) with this proxy's address instead of the server's."""
        parts = urlsplit(upstream_url)
        return urlunsplit((parts.scheme, f"127.0.0.1:{self.listen_port}", parts.path, parts.query, ""))


@dataclass
class Toxiproxy:
    """A Toxiproxy server (started with :meth:`start`, stopped with :meth:`stop`) and its proxies."""

    api_port: int = field(default_factory=free_port)
    proxies: dict[str, Proxy] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 10.0) -> Toxiproxy:
        self.proc = subprocess.Popen([str(toxiproxy_binary()), "-host", "127.0.0.1", "-port", str(self.api_port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._call("GET", "/proxies")
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"toxiproxy did not start on 127.0.0.1:{self.api_port}") from None
                time.sleep(0.1)
            else:
                return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310 - http to 127.0.0.1, built above
            text = resp.read()
        return json.loads(text) if text else None

    def add(self, name: str, upstream: str) -> Proxy:
        """A proxy named ``name`` in front of ``upstream`` (``host:port``)."""
        proxy = Proxy(name, free_port(), upstream)
        self._call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{proxy.listen_port}",
                                        "upstream": upstream, "enabled": True})
        self.proxies[name] = proxy
        return proxy

    def fault(self, name: str, kind: str) -> None:
        """Start fault ``kind`` (see the module's docstring) on proxy ``name``."""
        if kind == "down":
            self._call("POST", f"/proxies/{name}", {"enabled": False})
            return
        toxic, attributes = TOXICS[kind]
        for stream in ("downstream", "upstream"):
            self._call("POST", f"/proxies/{name}/toxics", {"name": f"{kind}-{stream}", "type": toxic,
                                                           "stream": stream, "attributes": attributes})

    def reroute(self, name: str, upstream: str) -> None:
        """Point proxy ``name`` at another ``host:port``; Toxiproxy restarts it, closing its connections."""
        self._call("POST", f"/proxies/{name}", {"upstream": upstream})
        self.proxies[name].upstream = upstream

    def heal(self, name: str) -> None:
        """Every fault off proxy ``name``: enabled, no toxics."""
        self._call("POST", f"/proxies/{name}", {"enabled": True})
        for toxic in self._call("GET", f"/proxies/{name}/toxics") or []:
            try:
                self._call("DELETE", f"/proxies/{name}/toxics/{toxic['name']}")
            except urllib.error.HTTPError as exc:  # removed meanwhile
                if exc.code != 404:
                    raise
