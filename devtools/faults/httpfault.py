"""Elasticsearch answering 429, 503 or 401: a small HTTP server that answers every request with that
status, and the body and headers Elasticsearch itself sends.

Toxiproxy works on bytes and cannot answer a status. For as long as such a fault lasts, the hot sink's
Toxiproxy link is pointed at this server instead of Elasticsearch (``Toxiproxy.reroute``), which closes
the connections it holds: the sink's next requests get the status. Otherwise the link goes straight to
Elasticsearch, so an Elasticsearch that is stopped still refuses connections, as it would.
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


class StatusAnswers:
    """``start()`` serves on ``127.0.0.1:<port>``; ``status`` is what it answers (set it before pointing
    anything at it); ``answered`` counts the requests answered."""

    def __init__(self) -> None:
        self.port = free_port()
        self.status = 503
        self.answered = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: Any = None

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def answer(self, status: int) -> None:
        if status not in ANSWERS:
            raise ValueError(f"no Elasticsearch answer for {status}; choose {sorted(ANSWERS)}")
        self.status = status

    def start(self) -> StatusAnswers:
        self._thread = threading.Thread(target=self._serve, name="es-status-answers", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the Elasticsearch status server did not start on {self.netloc}")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self) -> None:
        from aiohttp import web

        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)

        async def handle(request: web.Request) -> web.StreamResponse:
            await request.read()
            self.answered += 1
            etype, reason, headers = ANSWERS[self.status]
            return web.json_response({"error": {"root_cause": [{"type": etype, "reason": reason}], "type": etype,
                                                 "reason": reason}, "status": self.status},
                                     status=self.status, headers=headers)

        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", handle)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        loop.run_until_complete(web.TCPSite(self._runner, "127.0.0.1", self.port).start())
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            loop.close()
