"""The Redis connection of a process, with the key prefix every key of this deployment carries."""
from __future__ import annotations

import redis.asyncio as aioredis


class Store:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, prefix: str, pool_size: int = 256) -> Store:
        # A blocking pool: past `pool_size` busy connections a caller waits for one (up to 10 s)
        # instead of failing; redis-py's default pool raises "Too many connections" at 100.
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=pool_size, timeout=10,
                                                        decode_responses=True, health_check_interval=30)
        return cls(aioredis.Redis(connection_pool=pool), prefix)

    def key(self, *parts: object) -> str:
        return self.prefix + ":".join(str(p) for p in parts)

    async def close(self) -> None:
        await self.redis.aclose(close_connection_pool=True)  # the pool was passed in: close it too
