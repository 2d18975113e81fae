# ruff: noqa: F811  (the fake server fixture from tests.mcp.conftest is a test parameter)
"""A priced MCP tool call whose API process is killed with SIGKILL mid-call: its reservation is
closed by the sweep as a refund, a call settled before stays charged — each call charged once or
refunded, never both."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

from api.services.billing.reservations import close_orphans, reservations_key
from api.services.store import Store
from models import Settlement, Token, User
from tests.faults.test_reservations import books_balance
from tests.mcp.conftest import allow_private, fake, funded_user, make_key, mcp_client, register  # noqa: F401

PRICE = 700


async def test_a_priced_call_under_kill_9_is_charged_once_or_refunded(client, root, settings, api_process,
                                                                      fake) -> None:
    url, state = fake
    await allow_private(root)
    await register(root, url, price=PRICE)
    user = await funded_user(quota=100_000)
    key = await make_key(user, quota=50_000, unlimited=False)
    proc, base = await api_process(RESERVATION_TTL="60")
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    try:
        seen: dict[str, object] = {}
        # the client's session ends with the process: its errors on the way out are the kill's
        with contextlib.suppress(Exception, BaseExceptionGroup):
            async with mcp_client(base + "/mcp", key.key) as session:
                await session.initialize()
                seen["paid"] = (await session.call_tool("fake__echo", {"text": "paid"})).content[0].text
                call = asyncio.ensure_future(session.call_tool("fake__slow", {}))
                await state.slow_started.wait()
                entries = await store.redis.hgetall(reservations_key(store, user.id))
                seen["open"] = len([k for k in entries if not k.endswith(("#", "!"))])
                os.killpg(proc.proc.pid, signal.SIGKILL)
                await asyncio.to_thread(proc.proc.wait)
                call.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await call
        assert seen == {"paid": "paid", "open": 1}  # the first call answered; the slow one's reservation open
        assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) == 100_000 - 2 * PRICE
        assert await close_orphans(store, 500_000) == []  # not expired yet
        closed = await close_orphans(store, 500_000, now_ms=int(time.time() * 1000) + 61_000)
        assert len(closed) == 1
        assert await close_orphans(store, 500_000, now_ms=int(time.time() * 1000) + 61_000) == []  # once
        await books_balance(store, [user], [await Token.get(id=key.id)])
        assert (await User.get(id=user.id)).quota == 100_000 - PRICE
        assert (await Token.get(id=key.id)).remain_quota == 50_000 - PRICE
        assert await Settlement.filter(user_id=user.id).count() == 1
    finally:
        await store.close()
