"""Token counts asked by clients: POST /v1/messages/count_tokens and Gemini's `:countTokens`.

A count is free (nothing is relayed, nothing billed), so it has limits of its own:

- COUNT_RPM counts a minute per user, whatever relay limits the user has (a fixed window in Redis:
  one round trip), checked before the body is read;
- a large prompt is counted in the counting pool, off the event loop
  (api.upstream.tokenizer.count_off_loop), and at most MAX_LARGE_COUNTS of those wait or run in a
  process at once: one more is refused at once (429) rather than queued with its body in memory;
- the body is bounded before it is read (api.bodies.COUNT_MAX_BODY).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from api import keys
from api.relay.auth import parse_key
from api.relay.refusals import refuse
from api.relay.state import relay_state
from api.upstream.errors import RelayError
from api.upstream.tokenizer import OFF_LOOP_BYTES, count_chat_request, count_off_loop

COUNT_RPM = 120  # counts a minute per user
COUNT_WINDOW = 60
MAX_LARGE_COUNTS = 4  # large counts waiting or running in one process

_large_counts = 0


def _limited(request: web.Request, scope: str, limit: int, seconds: int) -> RelayError:
    return refuse(request, 429, "relay_rate_limited", "rate_limit_exceeded", "rate_limit_error",
                  headers={"Retry-After": str(seconds)}, scope=scope, limit=limit, seconds=seconds)


async def admit_count(request: web.Request) -> None:
    """Count this request against its user's token counts of the minute (429 past them), before its
    body is read: a client over its limit costs no read nor parse. The handler has checked the key."""
    token = await relay_state(request).auth.token(parse_key(request)[0])  # the handler's check, cached
    user = str(token.user_id if token is not None else 0)
    if not await request.config_dict[keys.LIMITER].hit("count", user, COUNT_RPM, COUNT_WINDOW):
        raise _limited(request, "token counts per minute", COUNT_RPM, COUNT_WINDOW)


async def client_count(request: web.Request, body: Mapping[str, Any]) -> int:
    """The prompt tokens of `body` (an OpenAI chat request) of an admitted count (`admit_count`);
    429 when the process is busy counting large prompts."""
    global _large_counts
    size = request.content.total_bytes  # the body's bytes, as read (inflated)
    if size <= OFF_LOOP_BYTES:
        return count_chat_request(body)
    if _large_counts >= MAX_LARGE_COUNTS:
        raise _limited(request, "large token counts in progress", MAX_LARGE_COUNTS, 1)
    _large_counts += 1
    try:
        return await count_off_loop(count_chat_request, body, size)
    finally:
        _large_counts -= 1
