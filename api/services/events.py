"""Cross-process invalidation over Redis pub/sub.

Every mutation of an option, channel, token or user publishes {kind, ...} on one channel; each
process runs one listener that calls the callbacks registered for that kind. Callbacks must be cheap
(drop or refresh an in-process cache).
"""
from __future__ import annotations

import asyncio
import inspect
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from redis.exceptions import ConnectionError as RedisConnectionError

from api.services import redis_keys
from api.services.cancellation import raise_if_cancelled
from api.services.store import Store

log = logging.getLogger(__name__)
Callback = Callable[[dict[str, Any]], Awaitable[None] | None]


def database_of(store: Store) -> int:
    pool = getattr(store.redis, "connection_pool", None)
    return int((getattr(pool, "connection_kwargs", None) or {}).get("db") or 0)


class EventBus:
    def __init__(self, store: Store) -> None:
        self.store = store
        # Pub/sub ignores the database number: the channel names it, so that deployments sharing a
        # Redis server (same prefix, other database) never hear each other.
        self.channel = redis_keys.events_channel(store, database_of(store))
        self._callbacks: dict[str, list[Callback]] = defaultdict(list)
        self._ready = asyncio.Event()

    def subscribe(self, kind: str, callback: Callback) -> None:
        self._callbacks[kind].append(callback)

    async def publish(self, kind: str, **payload: Any) -> None:
        await self.store.redis.publish(self.channel, orjson.dumps({"kind": kind, **payload}))

    async def wait_ready(self) -> None:
        await self._ready.wait()

    async def dispatch(self, message: dict[str, Any]) -> None:
        for callback in self._callbacks.get(message.get("kind", ""), ()):
            try:
                result = callback(message)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("event callback failed for %s", message.get("kind"))

    async def run(self) -> None:
        """Listen until cancelled; after a lost connection, resubscribe and tell everyone to reload."""
        while True:
            pubsub = None
            try:
                await self.store.redis.initialize()  # a cluster client learns its slots here
                pubsub = self.store.redis.pubsub(ignore_subscribe_messages=True)
                await pubsub.subscribe(self.channel)
                if self._ready.is_set():
                    # Messages may have been missed while disconnected: every cache reloads.
                    await self.dispatch({"kind": "*reset"})
                    for kind in list(self._callbacks):
                        if kind != "*reset":
                            await self.dispatch({"kind": kind, "reset": True})
                self._ready.set()
                async for raw in pubsub.listen():
                    if raw.get("type") != "message":
                        continue
                    try:
                        message = orjson.loads(raw["data"])
                    except orjson.JSONDecodeError:
                        continue
                    await self.dispatch(message)
                    raise_if_cancelled()
            except asyncio.CancelledError:
                raise
            except (RedisConnectionError, OSError) as exc:
                log.warning("event listener lost Redis (%s); reconnecting", exc)
                await asyncio.sleep(0.5)
            finally:
                try:
                    if pubsub is not None:
                        await pubsub.aclose()
                except (RedisConnectionError, OSError):
                    pass
