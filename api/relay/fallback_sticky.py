"""Which model of its chain a session fell back to (README, Fallbacks: FallbackStickySeconds), so its
next requests go there first instead of failing again on the model that could not answer.

One Redis string per session and chain — `{u<user>}:fbs:<group and asked-model digest>:<session
digest>` → `<model>:<until, unix ms>` — written when a request of the session fell back and the
model it moved to answered, read (one GET) before the admission of the session's next request
with a chain. The time written in the value decides, against this process's clock (injected in
tests): the key's own Redis life is only a bound for the clean-up, so a stickiness ends when its
seconds are over, never later, and is not renewed by the requests it sends to the other model —
the model asked for is tried again then.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

from api.relay.affinity import Session
from api.services import redis_keys
from api.services.store import Store

SLACK_SECONDS = 5  # the key's Redis life past its own time (the value's time decides)


class StickyModels:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def key(self, user_id: int, group: str, asked: str, session: Session) -> str:
        scope = hashlib.blake2b(f"{group}\0{asked}".encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
        return redis_keys.user_key(self.store, user_id, "fbs", scope, session.digest)

    async def read(self, key: str) -> str | None:
        """The model the session sticks to, or None (none written, or its time is over)."""
        raw = await self.store.redis.get(key)
        if not raw:
            return None
        model, _, until = str(raw).rpartition(":")
        if not model or not until.isdigit() or int(until) <= int(self.clock() * 1000):
            return None
        return model

    async def write(self, key: str, model: str, seconds: int) -> None:
        until = int(self.clock() * 1000) + seconds * 1000
        await self.store.redis.set(key, f"{model}:{until}", ex=seconds + SLACK_SECONDS)

    async def clear(self, key: str) -> None:
        await self.store.redis.delete(key)
