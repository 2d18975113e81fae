"""Sessions of MCP clients on `/mcp`, kept in Redis so that any API process serves any request of a
session: `mcp:session:<id>` → the key that opened it, the protocol version agreed and the server it
is scoped to ("" for the whole of /mcp), for SESSION_TTL seconds after its last request. A session
is its key's alone: another key presenting its id is told the session is unknown."""
from __future__ import annotations

import secrets
from dataclasses import dataclass

import orjson

from api.services import redis_keys
from api.services.store import Store

SESSION_TTL = 24 * 3600


@dataclass(frozen=True, slots=True)
class McpSession:
    id: str
    token_id: int
    version: str
    scope: str  # the server of /mcp/<server>, "" for /mcp


def valid_id(session_id: str) -> bool:
    """Visible ASCII, as the transport requires, and of the length ours have."""
    return 16 <= len(session_id) <= 64 and session_id.isascii() and session_id.isalnum()


async def open_session(store: Store, token_id: int, version: str, scope: str) -> McpSession:
    session = McpSession(secrets.token_hex(16), token_id, version, scope)
    value = orjson.dumps({"t": token_id, "v": version, "s": scope})
    await store.redis.set(redis_keys.mcp_session(store, session.id), value, ex=SESSION_TTL)
    return session


async def find_session(store: Store, session_id: str) -> McpSession | None:
    """The session, its life renewed (one round trip); None when unknown or expired."""
    if not valid_id(session_id):
        return None
    raw = await store.redis.getex(redis_keys.mcp_session(store, session_id), ex=SESSION_TTL)
    if not raw:
        return None
    data = orjson.loads(raw)
    return McpSession(session_id, int(data.get("t") or 0), str(data.get("v") or ""), str(data.get("s") or ""))


async def end_session(store: Store, session_id: str) -> bool:
    if not valid_id(session_id):
        return False
    return bool(await store.redis.delete(redis_keys.mcp_session(store, session_id)))
