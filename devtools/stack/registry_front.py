"""An https front with authentication for the local schema registry.

The local registry (Apicurio 2.4 in ccompat mode) authenticates only through an OIDC server
(Keycloak), and a secured local stack has none. This front plays the part of what a real registry
does for Sluice's clients: it serves https with the stack's certificate (asking for a client
certificate from the stack's CA when told to), checks ``Authorization`` against one basic-auth user
or one bearer token, and forwards what it admits to the registry on a loopback port it started
itself. Its own test is the secured test suite: a wrong password, a missing token or an untrusted
client certificate must be refused here as a real registry refuses them.

    python -m devtools.stack.registry_front CONFIG.json -- COMMAND...

``CONFIG.json`` (0600: it holds the credentials) names ``listen_port``, ``upstream_port``,
``cert``, ``key``, ``client_ca`` (or null), and ``basic`` ([user, password]) or ``bearer`` (a
token). COMMAND runs the registry itself; the front exits when it does, and stops it on SIGTERM.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import json
import signal
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

# Headers that belong to one connection, not to the request (RFC 9110 section 7.6.1), and the
# credentials, which stay at the front.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "authorization", "content-length"})


def expected_authorization(conf: dict[str, Any]) -> str:
    """The one ``Authorization`` value the front admits."""
    if conf.get("bearer"):
        return f"Bearer {conf['bearer']}"
    user, password = conf["basic"]
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def admitted(header: str | None, expected: str) -> bool:
    return header is not None and hmac.compare_digest(header.encode(), expected.encode())


def server_context(conf: dict[str, Any]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(conf["cert"], conf["key"])
    if conf.get("client_ca"):
        context.load_verify_locations(conf["client_ca"])
        context.verify_mode = ssl.CERT_REQUIRED
    return context


async def serve(conf: dict[str, Any], registry: subprocess.Popen[bytes]) -> None:
    import aiohttp
    from aiohttp import web

    expected = expected_authorization(conf)
    upstream = f"http://127.0.0.1:{conf['upstream_port']}"
    session = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        if not admitted(request.headers.get("Authorization"), expected):
            scheme = "Bearer" if conf.get("bearer") else 'Basic realm="registry"'
            return web.json_response({"error_code": 401, "message": "Unauthorized"}, status=401,
                                     headers={"WWW-Authenticate": scheme})
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            async with session.request(request.method, upstream + request.rel_url.path_qs, headers=headers,
                                       data=await request.read()) as resp:
                body = await resp.read()
                out = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_BY_HOP}
                return web.Response(status=resp.status, body=body, headers=out)
        except aiohttp.ClientError as exc:
            return web.json_response({"error_code": 502, "message": f"registry not answering: {exc}"}, status=502)

    app = web.Application(client_max_size=16 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", conf["listen_port"], ssl_context=server_context(conf))
    await site.start()
    print(f"registry front: https://127.0.0.1:{conf['listen_port']} -> {upstream}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    while not stop.is_set() and registry.poll() is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=0.5)
    await runner.cleanup()
    await session.close()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    conf = json.loads(Path(argv[0]).read_text())
    registry = subprocess.Popen(argv[2:])
    try:
        asyncio.run(serve(conf, registry))
    finally:
        if registry.poll() is None:
            registry.terminate()
            try:
                registry.wait(20)
            except subprocess.TimeoutExpired:
                registry.kill()
    return registry.returncode or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
