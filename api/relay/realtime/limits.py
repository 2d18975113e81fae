"""Places held per API key and per user, counted in Redis across the gateway's processes: open Realtime
sessions (options RealtimeMaxSessionsPerKey, RealtimeMaxSessionsPerUser) and live client secrets
(RealtimeMaxSecretsPerKey, RealtimeMaxSecretsPerUser). Keys are free and a user may make many, so each
per-key bound has a per-user one beside it, taken in the same script.

A kind of place is two sorted sets in the user's hash tag (one Redis Cluster slot): the key's and the
user's, one member per place scored by its expiry. A session's place is renewed while the session lasts,
so a process that dies frees it within SLOT_TTL_MS; a secret's place expires with the secret."""
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
SESSIONS, SECRETS = "rts", "rtsec"  # the kinds of place (their keys' names in the user's layout)
TAKEN, KEY_FULL, USER_FULL = 1, 0, -1

# KEYS: 1 the key's places, 2 the user's; ARGV: 1 now ms, 2 expiry ms, 3 key limit, 4 user limit, 5 member
_TAKE = """
local now, expiry = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], expiry, ARGV[5])
  if redis.call('PTTL', KEYS[i]) < expiry - now then redis.call('PEXPIREAT', KEYS[i], expiry) end
end
return 1
"""
# KEYS: 1 the key's places, 2 the user's; ARGV: 1 new expiry ms, 2 member, 3 TTL ms
_RENEW = """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) == false then return 0 end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], ARGV[1], ARGV[2])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
return 1
"""


def places_keys(store: Store, kind: str, user_id: int, token_id: int) -> list[str]:
    """The key's and the user's sets of places of `kind`."""
    return [redis_keys.user_key(store, user_id, kind, token_id), redis_keys.user_key(store, user_id, kind)]


@dataclass(frozen=True, slots=True)
class Refused:
    """No place: `per_user` when the user's bound was reached (else the key's), `limit` that bound."""

    per_user: bool
    limit: int


@dataclass(slots=True)
class Slot:
    """One session's place among its key's and its user's open sessions."""

    store: Store
    keys: list[str]
    session_id: str

    async def renew(self) -> None:
        try:
            await Script(self.store.redis, _RENEW)(keys=self.keys,
                                                   args=[int(time.time() * 1000) + SLOT_TTL_MS, self.session_id,
                                                         SLOT_TTL_MS])
        except REDIS_DOWN as exc:  # the next renewal tries again; the place expires if none succeeds
            log.info("realtime session %s: its place not renewed (%s)", self.session_id, exc)

    async def release(self) -> None:
        try:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for key in self.keys:
                    pipe.zrem(key, self.session_id)
                await pipe.execute()
        except REDIS_DOWN as exc:
            log.info("realtime session %s: its place left to expire (%s)", self.session_id, exc)


async def take_place(store: Store, kind: str, user_id: int, token_id: int, member: str, ttl_ms: int,
                     key_limit: int, user_limit: int) -> Refused | None:
    """A place of `kind` for `member` until `ttl_ms` from now, or why not (None: taken)."""
    now = int(time.time() * 1000)
    taken = int(await Script(store.redis, _TAKE)(keys=places_keys(store, kind, user_id, token_id),
                                                 args=[now, now + ttl_ms, key_limit, user_limit, member]))
    if taken == TAKEN:
        return None
    return Refused(taken == USER_FULL, user_limit if taken == USER_FULL else key_limit)


async def take(store: Store, user_id: int, token_id: int, session_id: str, key_limit: int,
               user_limit: int) -> Slot | Refused:
    """A place for the session, or why not (the key or the user already has that many open sessions)."""
    refused = await take_place(store, SESSIONS, user_id, token_id, session_id, SLOT_TTL_MS, key_limit, user_limit)
    return refused if refused is not None else Slot(store, places_keys(store, SESSIONS, user_id, token_id),
                                                     session_id)
