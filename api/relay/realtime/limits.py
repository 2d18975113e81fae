"""Open Realtime sessions per API key (option RealtimeMaxSessionsPerKey), counted in Redis across the
gateway's processes: a sorted set per key, one member per session scored by its expiry, renewed while
the session lasts, so a process that dies frees its sessions' places within SLOT_TTL_MS."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from api.middlewares import REDIS_DOWN
from api.services import redis_keys
from api.services.store import Script, Store

log = logging.getLogger("api.relay")
SLOT_TTL_MS = 60_000  # a session's place lives this long without a renewal
RENEW_EVERY = 20.0  # seconds between two renewals by a running session

# KEYS: 1 the key's sessions; ARGV: 1 now ms, 2 expiry ms, 3 limit, 4 session id, 5 TTL ms
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""
_RENEW = """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) == false then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""


def sessions_key(store: Store, user_id: int, token_id: int) -> str:
    return redis_keys.user_key(store, user_id, "rts", token_id)


@dataclass(slots=True)
class Slot:
    """One session's place among its key's open sessions."""

    store: Store
    key: str
    session_id: str

    async def renew(self) -> None:
        now = int(time.time() * 1000)
        try:
            await Script(self.store.redis, _RENEW)(keys=[self.key],
                                                   args=[now + SLOT_TTL_MS, self.session_id, SLOT_TTL_MS])
        except REDIS_DOWN as exc:  # the next renewal tries again; the place expires if none succeeds
            log.info("realtime session %s: its place not renewed (%s)", self.session_id, exc)

    async def release(self) -> None:
        try:
            await self.store.redis.zrem(self.key, self.session_id)
        except REDIS_DOWN as exc:
            log.info("realtime session %s: its place left to expire (%s)", self.session_id, exc)


async def take(store: Store, user_id: int, token_id: int, session_id: str, limit: int) -> Slot | None:
    """A place for the session, or None when the key already has `limit` open sessions."""
    key = sessions_key(store, user_id, token_id)
    now = int(time.time() * 1000)
    taken = await Script(store.redis, _TAKE)(keys=[key],
                                             args=[now, now + SLOT_TTL_MS, limit, session_id, SLOT_TTL_MS])
    return Slot(store, key, session_id) if int(taken) else None
