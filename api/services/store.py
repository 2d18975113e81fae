"""The Redis connection of a process, with the key prefix every key of this deployment carries."""
from __future__ import annotations

import redis.asyncio as aioredis


class Store:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, prefix: str) -> Store:
        client = aioredis.Redis.from_url(url, decode_responses=True, health_check_interval=30)
        return cls(client, prefix)

    def key(self, *parts: object) -> str:
        return self.prefix + ":".join(str(p) for p in parts)

    async def close(self) -> None:
        await self.redis.aclose()
