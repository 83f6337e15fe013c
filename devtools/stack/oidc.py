"""A tiny OAuth 2.0 token issuer on loopback, for testing OAUTHBEARER against a real broker.

It does the two things a Kafka OAUTHBEARER setup needs from an identity provider: a token endpoint
that grants RS256-signed JWTs to known clients (client-credentials grant, client id and secret as
HTTP basic auth, as librdkafka's ``sasl.oauthbearer.method=oidc`` sends
them), and a JWKS document with the public key, which the broker's
``OAuthBearerValidatorCallbackHandler`` checks every token against. Nothing else of OIDC (no
discovery, no users, no refresh tokens).

    issuer = TokenIssuer({"sluice-assemble": "secret"}, audience="kafka")
    issuer.start()            # issuer.token_url, issuer.jwks_url
    ...
    issuer.stop()
"""

from __future__ import annotations

import base64
import hmac
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _uint(n: int) -> str:
    return _b64(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class TokenIssuer:
    def __init__(self, clients: dict[str, str], audience: str = "kafka", lifetime_s: int = 300) -> None:
        self.clients = clients
        self.audience = audience
        self.lifetime_s = lifetime_s
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = uuid.uuid4().hex[:12]
        self.granted: list[str] = []  # client ids, in order: what a test can count
        self._server: ThreadingHTTPServer | None = None

    # -- the two documents ---------------------------------------------------------------------------
    def jwks(self) -> dict[str, Any]:
        public = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                          "n": _uint(public.n), "e": _uint(public.e)}]}

    def token_for(self, client_id: str, scope: str | None) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": client_id, "aud": self.audience, "iat": now,
                  "exp": now + self.lifetime_s, "jti": uuid.uuid4().hex}
        if scope:
            claims["scope"] = scope
        head = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": self.kid}).encode())
        body = _b64(json.dumps(claims).encode())
        signature = self.key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return {"access_token": f"{head}.{body}.{_b64(signature)}", "token_type": "Bearer",
                "expires_in": self.lifetime_s}

    def grant(self, authorization: str | None, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") != ["client_credentials"]:
            return 400, {"error": "unsupported_grant_type"}
        try:
            scheme, encoded = (authorization or "").split(" ", 1)
            client_id, secret = base64.b64decode(encoded).decode().split(":", 1)
        except ValueError:
            return 401, {"error": "invalid_client"}
        expected = self.clients.get(client_id)
        if scheme.lower() != "basic" or expected is None or not hmac.compare_digest(secret, expected):
            return 401, {"error": "invalid_client"}
        self.granted.append(client_id)
        scopes = form.get("scope")
        return 200, self.token_for(client_id, scopes[0] if scopes else None)

    # -- serving -------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("start() the issuer first")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def issuer(self) -> str:
        return self.base_url

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}/jwks"

    def start(self) -> None:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/jwks":
                    self._send(200, issuer.jwks())
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                if self.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                self._send(*issuer.grant(self.headers.get("Authorization"), form))

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="token-issuer", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
