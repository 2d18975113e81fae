"""A burst of requests on a cold key cache makes one lookup, and an invalidation during it wins."""
from __future__ import annotations

import asyncio

from api.relay.auth import KeyAuth, TokenInfo
from api.services.store import Store
from models.settings import Settings


async def test_concurrent_cold_lookups_share_one_load(settings: Settings) -> None:
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    auth = KeyAuth(store)
    calls = 0
    gate = asyncio.Event()
    started = asyncio.Event()
    info = TokenInfo(7, 3, "k", 1, -1, True, None, None, "")

    async def slow_load(key: str, key_hash: str) -> TokenInfo:
        nonlocal calls
        calls += 1
        started.set()
        await gate.wait()
        return info

    auth._load_token = slow_load  # type: ignore[method-assign]
    try:
        waiters = [asyncio.ensure_future(auth.token("sk-key")) for _ in range(200)]
        await asyncio.sleep(0)
        gate.set()
        results = await asyncio.gather(*waiters)
        assert calls == 1
        assert all(r is info for r in results)
        assert await auth.token("sk-key") is info and calls == 1  # now cached

        # An invalidation that arrives while a load is running: the stale result is not kept.
        auth._tokens.clear()
        gate.clear()
        started.clear()
        load = asyncio.ensure_future(auth.token("sk-key"))
        await started.wait()  # the load has started: it reads what was there before the change
        await auth._on_token({"id": 7})
        gate.set()
        await load
        assert auth._tokens == {}
    finally:
        await store.close()
