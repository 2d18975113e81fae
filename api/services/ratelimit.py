"""Fixed-window counters in Redis (one round trip, atomic)."""
from __future__ import annotations

from api.services import redis_keys
from api.services.store import Store

_HIT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RateLimiter:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._script = store.redis.register_script(_HIT)

    async def hit(self, bucket: str, ident: str, limit: int, window: int) -> bool:
        """Count one event; False when the caller has gone over `limit` in the current window."""
        if limit <= 0:
            return True
        count = await self._script(keys=[redis_keys.rate_limit(self.store, bucket, ident)], args=[window])
        return int(count) <= limit

    async def reset(self, bucket: str, ident: str) -> None:
        await self.store.redis.delete(redis_keys.rate_limit(self.store, bucket, ident))
