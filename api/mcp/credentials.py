"""OAuth 2.0 client-credentials tokens for MCP servers that want one (RFC 6749 §4.4): fetched by the
gateway from the server's token URL with its client id and secret, cached per process until shortly
before they expire, one fetch at a time per client, and dropped when the server answers 401. The
token is registered with the upstream masking (api.upstream.masking.remember) while it lives."""
from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable

import aiohttp
import orjson

from api.mcp.policy import check_literal
from api.mcp.registry import OAuthClient
from api.mcp.wire import McpError
from api.upstream import masking

EARLY = 60.0  # seconds before its expiry a token is fetched again
DEFAULT_LIFE = 3600.0  # a token answered without expires_in
TOKEN_TIMEOUT = 20.0
MAX_TOKEN_BODY = 64 * 1024


def _key(oauth: OAuthClient) -> str:
    raw = "\n".join((oauth.token_url, oauth.client_id, oauth.client_secret, oauth.scope))
    return hashlib.sha256(raw.encode()).hexdigest()


class OAuthTokens:
    def __init__(self, http: aiohttp.ClientSession, allow_private: Callable[[], bool],
                 clock: Callable[[], float] = time.time) -> None:
        self.http = http
        self.allow_private = allow_private
        self.clock = clock
        self._tokens: dict[str, tuple[str, float]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def drop(self, oauth: OAuthClient) -> None:
        self._tokens.pop(_key(oauth), None)

    async def token(self, oauth: OAuthClient) -> str:
        key = _key(oauth)
        hit = self._tokens.get(key)
        if hit is not None and hit[1] - EARLY > self.clock():
            return hit[0]
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            hit = self._tokens.get(key)
            if hit is not None and hit[1] - EARLY > self.clock():
                return hit[0]
            token, expires_at = await self._fetch(oauth)
            self._tokens[key] = (token, expires_at)
            return token

    async def _fetch(self, oauth: OAuthClient) -> tuple[str, float]:
        check_literal(oauth.token_url, self.allow_private())
        form = {"grant_type": "client_credentials", "client_id": oauth.client_id,
                "client_secret": oauth.client_secret}
        if oauth.scope:
            form["scope"] = oauth.scope
        try:
            async with self.http.post(oauth.token_url, data=form, headers={"Accept": "application/json"},
                                      allow_redirects=False,
                                      timeout=aiohttp.ClientTimeout(total=TOKEN_TIMEOUT)) as resp:
                raw = await resp.content.read(MAX_TOKEN_BODY)
                status = resp.status
        except TimeoutError:
            raise McpError("auth", "the OAuth token endpoint did not answer in time") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise McpError("auth", f"the OAuth token endpoint cannot be reached ({type(exc).__name__})") from None
        if status != 200:
            raise McpError("auth", f"the OAuth token endpoint answered {status}")
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise McpError("auth", "the OAuth token endpoint answered no JSON") from None
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise McpError("auth", "the OAuth token endpoint answered no access_token")
        life = body.get("expires_in")
        seconds = float(life) if isinstance(life, int | float) and not isinstance(life, bool) and life > 0 \
            else DEFAULT_LIFE
        expires_at = self.clock() + seconds
        masking.remember(token, expires_at)
        return token, expires_at
