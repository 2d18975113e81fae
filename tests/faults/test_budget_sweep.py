# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""An API process killed with SIGKILL in the middle of a window, its streams open: the sweep closes
their reservations and each window (a calendar and a rolling one) ends with exactly the charge, in
Redis and, once the workers ran, in the database."""
from __future__ import annotations

import asyncio
import os
import signal
import time

import aiohttp

from api.services.billing.reservations import close_orphans, reservations_key
from api.services.budgets.limits import normalise
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from api.services.store import Store
from api.upstream.catalogue import ChannelType
from models import BudgetUsage, Channel, Log
from models.enums import LogType
from tests.faults.test_reservations import BODY, books_balance
from tests.helpers import eventually
from tests.relay.fakes import headers_for, make_key, rich_user, upstreams  # noqa: F401

LIMITS = normalise([{"window": "day", "quota": 10**9}, {"window": "5h", "requests": 10}])


async def test_api_process_killed_mid_window_leaves_each_window_its_exact_charge(client, settings, api_process,
                                                                                 upstreams) -> None:
    fake = await upstreams(hang_after=4, usage=None)
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    users = [await rich_user(f"u{i}", quota=1_000_000, limits=LIMITS) for i in range(2)]
    tokens = [await make_key(u, remain_quota=300_000, unlimited=False) for u in users]
    proc, url = await api_process(CHECKPOINT_INTERVAL="0.1", RESERVATION_TTL="60")
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    http = aiohttp.ClientSession()
    try:
        streams = [await http.post(f"{url}/v1/chat/completions", json=BODY, headers=headers_for(t)) for t in tokens]
        for resp in streams:
            got = b""
            while got.count(b'"content"') < 5:
                got += await resp.content.readline()

        async def checkpointed() -> bool:
            for user in users:
                entries = await store.redis.hgetall(reservations_key(store, user.id))
                renewals = [v for k, v in entries.items() if k.endswith("#")]
                if len(renewals) != 1 or int(renewals[0].split("|")[1]) == 0:
                    return False
            return True

        await eventually(checkpointed, timeout=20)
        os.killpg(proc.proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.proc.wait)
        for resp in streams:
            resp.close()
        start, _ = bounds("day", time.time())
        for user in users:  # the windows hold the reservations, and their starts are kept beside them
            entries = await store.redis.hgetall(reservations_key(store, user.id))
            assert any(k.endswith("@") for k in entries)
            assert await store.redis.hget(window_key(store, user.id, "u", "5h", 0), "r") == "1"
        closed = await close_orphans(store, 500_000, now_ms=int(time.time() * 1000) + 61_000)
        assert len(closed) == 2
        await books_balance(store, users, tokens)
        for user in users:
            log = await Log.get(user_id=user.id, type=LogType.CONSUME)
            day = await store.redis.hgetall(window_key(store, user.id, "u", "day", start))
            rolling = await store.redis.hgetall(window_key(store, user.id, "u", "5h", 0))
            total = log.prompt_tokens + log.completion_tokens
            assert (int(day["q"]), int(day["r"]), int(day["t"])) == (log.quota, 1, total)
            assert (int(rolling["q"]), int(rolling["r"])) == (log.quota, 1)
            rows = await BudgetUsage.filter(user_id=user.id).order_by("identity").values_list(
                "identity", "quota", "requests", "tokens")
            assert rows == [("5h", log.quota, 1, total), ("day", log.quota, 1, total)]
            assert await store.redis.hgetall(reservations_key(store, user.id)) == {}
    finally:
        await http.close()
        await store.close()
