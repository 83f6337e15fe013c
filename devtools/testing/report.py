"""Local servers that receive what ``sluice summary --send`` delivers: a webhook (HTTP) and an SMTP server.

Both run in a thread on a loopback port and keep what they received; the webhook answers from a
script of responses (status, body), the last one repeated, so a test can make it refuse or throttle.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Webhook:
    url: str
    received: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    script: list[tuple[int, str]] = field(default_factory=lambda: [(200, "ok")])


@contextmanager
def webhook_server(script: list[tuple[int, str]] | None = None) -> Iterator[Webhook]:
    hook = Webhook("", script=list(script or [(200, "ok")]))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            hook.received.append(json.loads(body))
            hook.paths.append(self.path)
            status, text = hook.script.pop(0) if len(hook.script) > 1 else hook.script[0]
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if text.startswith("{") else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook?key=secret-token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Mailbox:
    port: int
    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    """A plain SMTP server (no TLS): EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT: what smtplib sends."""
    box = Mailbox(0)

    class Handler(socketserver.StreamRequestHandler):
        def reply(self, line: str) -> None:
            self.wfile.write(f"{line}\r\n".encode())

        def handle(self) -> None:
            self.reply("220 sluice-test ESMTP")
            sender, rcpts = "", list[str]()
            while raw := self.rfile.readline():
                line = raw.decode().rstrip("\r\n")
                verb = line.split(" ", 1)[0].upper()
                if verb in ("EHLO", "HELO"):
                    self.reply("250-sluice-test")
                    self.reply("250 AUTH PLAIN")
                elif verb == "AUTH":
                    box.logins.append(line.split(" ", 2)[-1])
                    self.reply("235 2.7.0 Authentication successful")
                elif verb == "MAIL":
                    sender, rcpts = line.split(":", 1)[1].strip(" <>"), []
                    self.reply("250 OK")
                elif verb == "RCPT":
                    rcpts.append(line.split(":", 1)[1].strip(" <>"))
                    self.reply("250 OK")
                elif verb == "DATA":
                    self.reply("354 End data with <CR><LF>.<CR><LF>")
                    data = b""
                    while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                        data += chunk[1:] if chunk.startswith(b"..") else chunk
                    box.messages.append(message_from_bytes(data))
                    box.envelopes.append((sender, rcpts))
                    self.reply("250 OK")
                elif verb == "QUIT":
                    self.reply("221 Bye")
                    return
                else:
                    self.reply("250 OK")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    box.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
