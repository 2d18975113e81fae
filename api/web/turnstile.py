"""Cloudflare Turnstile: the server-side check of the `?turnstile=` token.

When TurnstileCheckEnabled, the decorated routes (register, login, verification, reset) need a token
that the siteverify endpoint (settings.turnstile_verify_url) accepts for TurnstileSecretKey and the
caller's IP. A session that passed once is marked ("turnstile" field) and is not asked again.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

from api import keys
from api.errors import ApiError
from api.web.net import client_ip
from api.web.sessions import sessions_of

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
VERIFY_TIMEOUT = aiohttp.ClientTimeout(total=10)
SESSION_FIELD = "turnstile"


async def verify(http: aiohttp.ClientSession, url: str, secret: str, token: str, remote_ip: str) -> bool:
    """True when siteverify accepts the token; ApiError when it cannot be asked."""
    form = {"secret": secret, "response": token, "remoteip": remote_ip}
    try:
        async with http.post(url, data=form, timeout=VERIFY_TIMEOUT,
                             headers={"Accept-Encoding": "identity", "Accept": "application/json"}) as resp:
            if resp.status != 200:
                log.warning("turnstile siteverify answered HTTP %s", resp.status)
                raise ApiError("turnstile_unavailable")
            body = await resp.json(content_type=None)
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        log.warning("turnstile siteverify unreachable: %s", type(exc).__name__)
        raise ApiError("turnstile_unavailable") from exc
    return isinstance(body, dict) and body.get("success") is True


async def check(request: web.Request) -> None:
    """Pass, or raise the ApiError the console shows."""
    options = request.config_dict[keys.OPTIONS]
    if not options.get_bool("TurnstileCheckEnabled"):
        return
    sessions = sessions_of(request)
    session = await sessions.load(request)
    if session is not None and session.data.get(SESSION_FIELD) == "1":
        return
    token = request.query.get("turnstile", "").strip()
    if not token:
        raise ApiError("turnstile_empty")
    accepted = await verify(request.config_dict[keys.HTTP], request.config_dict[keys.SETTINGS].turnstile_verify_url,
                            options.get("TurnstileSecretKey"), token, client_ip(request))
    if not accepted:
        raise ApiError("turnstile_failed")
    session = await sessions.get_or_create(request)
    await session.set(**{SESSION_FIELD: "1"})


def turnstile_checked(handler: Handler) -> Handler:
    """Decorator for the routes the Turnstile check guards."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        await check(request)
        return await handler(request)

    return wrapper
