"""OAuth 2.0 client-credentials tokens for the Python Kafka client (aiokafka under Faust).

librdkafka fetches its own OAUTHBEARER tokens (``sasl.oauthbearer.method=oidc``); aiokafka asks a
token provider instead. This one makes the same request librdkafka makes (a POST of
``grant_type=client_credentials`` with the client id and secret as HTTP basic auth) and keeps the
token until 80% of its lifetime has passed, so that a token is never presented as it expires.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.abc import AbstractTokenProvider
from pydantic import SecretStr

from streams.errors import SluiceError

# A token is renewed once this share of its lifetime has passed (librdkafka renews at 80% too).
RENEW_AT = 0.8
# Lifetime assumed when the token endpoint says none (expires_in is only RECOMMENDED by RFC 6749).
DEFAULT_LIFETIME_S = 300.0


class TokenError(SluiceError):
    """The token endpoint refused or gave no usable token."""


@dataclass
class ClientCredentials:
    """A client-credentials grant at ``token_url``, with the token it last got."""

    token_url: str
    client_id: str
    client_secret: SecretStr | None
    scope: str | None = None
    timeout_s: float = 10.0
    clock: Callable[[], float] = time.monotonic
    _token: str | None = field(default=None, repr=False)
    _renew_at: float = 0.0

    def request(self) -> dict[str, Any]:
        """The arguments of the token request (for httpx), secret included: never log them."""
        data = {"grant_type": "client_credentials"}
        if self.scope:
            data["scope"] = self.scope
        secret = self.client_secret.get_secret_value() if self.client_secret is not None else ""
        return {"url": self.token_url, "data": data, "auth": (self.client_id, secret)}

    def accept(self, status: int, body: Any) -> str:
        """Keep the token of a token-endpoint answer; errors name the endpoint and the reason, never the secret."""
        if status != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            reason = body.get("error") if isinstance(body, dict) else None
            raise TokenError(f"the token endpoint {self.token_url} answered {status}"
                             f"{f' ({reason})' if reason else ''} for client {self.client_id!r}; "
                             "check the client id, its secret and the scope")
        lifetime = float(body.get("expires_in") or DEFAULT_LIFETIME_S)
        self._token = body["access_token"]
        self._renew_at = self.clock() + RENEW_AT * lifetime
        return self._token

    def cached(self) -> str | None:
        return self._token if self._token is not None and self.clock() < self._renew_at else None


class AiokafkaTokenProvider(AbstractTokenProvider):
    """aiokafka's ``sasl_oauth_token_provider``: one token shared by every connection, renewed when due."""

    def __init__(self, grant: ClientCredentials, transport: Any = None) -> None:
        super().__init__()
        self.grant = grant
        self.transport = transport  # an httpx transport; None: the network
        self._lock = asyncio.Lock()

    async def token(self) -> str:
        import httpx

        async with self._lock:  # connections opened together share one request
            cached = self.grant.cached()
            if cached is not None:
                return cached
            try:
                async with httpx.AsyncClient(timeout=self.grant.timeout_s, transport=self.transport) as client:
                    resp = await client.post(**self.grant.request())
            except httpx.HTTPError as exc:
                raise TokenError(f"the token endpoint {self.grant.token_url} did not answer "
                                 f"({type(exc).__name__}); check the URL and the network") from None
            try:
                body: Any = resp.json()
            except ValueError:
                body = None
            return self.grant.accept(resp.status_code, body)

    def __repr__(self) -> str:
        return f"<AiokafkaTokenProvider {self.grant.token_url} client={self.grant.client_id!r}>"
