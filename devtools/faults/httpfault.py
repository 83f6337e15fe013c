"""An HTTP proxy in front of Elasticsearch that can answer for it: 429, 503 or 401, with the bodies and
headers Elasticsearch itself sends, for as long as a fault lasts; otherwise it passes every request on.

Toxiproxy works on bytes and cannot answer a status; this does, in a thread of the fault run's own
process (aiohttp, which the workers already use for their endpoints).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from devtools.stack.base import free_port

# What Elasticsearch answers (type, reason, extra headers) for each status a fault can make it answer.
ANSWERS: dict[int, tuple[str, str, dict[str, str]]] = {
    429: ("es_rejected_execution_exception",
          "rejected execution of TransportShardBulkAction (queue capacity 200) (fault injected)", {}),
    503: ("master_not_discovered_exception", "no master node (fault injected)", {}),
    401: ("security_exception", "unable to authenticate user [sluice] for REST request [/_bulk] (fault injected)",
          {"WWW-Authenticate": 'Basic realm="security", charset="UTF-8"'}),
}
_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"})


class StatusFault:
    """``start()`` returns the proxy's URL; ``answer(status)`` makes it answer every request with
    ``status`` until ``answer(None)``; ``answered`` counts the requests answered so."""

    def __init__(self, upstream_url: str) -> None:
        self.upstream = upstream_url.rstrip("/")
        self.port = free_port()
        self.status: int | None = None
        self.answered = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, status: int | None) -> None:
        if status is not None and status not in ANSWERS:
            raise ValueError(f"no Elasticsearch answer for {status}; choose {sorted(ANSWERS)}")
        self.status = status

    def start(self) -> str:
        self._thread = threading.Thread(target=self._serve, name="es-status-fault", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the Elasticsearch fault proxy did not start on {self.url}")
        return self.url

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, web

        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        session: ClientSession | None = None

        async def handle(request: web.Request) -> web.StreamResponse:
            nonlocal session
            status = self.status
            if status is not None:
                self.answered += 1
                etype, reason, headers = ANSWERS[status]
                return web.json_response({"error": {"root_cause": [{"type": etype, "reason": reason}], "type": etype,
                                                     "reason": reason}, "status": status},
                                         status=status, headers=headers)
            if session is None:
                session = ClientSession(auto_decompress=False, timeout=ClientTimeout(total=None))
            headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
            async with session.request(request.method, self.upstream + request.rel_url.path_qs, headers=headers,
                                       data=await request.read(), allow_redirects=False) as resp:
                body = await resp.read()
                out = {k: v for k, v in resp.headers.items() if k.lower() not in _HOP}
                return web.Response(body=body, status=resp.status, headers=out)

        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", handle)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        loop.run_until_complete(web.TCPSite(self._runner, "127.0.0.1", self.port).start())
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            if session is not None:
                loop.run_until_complete(session.close())
            loop.run_until_complete(self._runner.cleanup())
            loop.close()
