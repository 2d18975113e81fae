# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""An API process killed with SIGKILL in the middle of a window, its streams open: the sweep closes
their reservations and each window (a calendar and a rolling one) ends with exactly the charge, in
Redis and, once the workers ran, in the database."""
from __future__ import annotations

import time

from api.services.billing.reservations import close_orphans, reservations_key
from api.services.budgets.limits import normalise
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from models import BudgetUsage, Log
from models.enums import LogType
from tests.faults.killed_streams import books_balance, streams_of_a_killed_process
from tests.relay.fakes import upstreams  # noqa: F401

LIMITS = normalise([{"window": "day", "quota": 10**9}, {"window": "5h", "requests": 10}])


async def test_api_process_killed_mid_window_leaves_each_window_its_exact_charge(client, settings, api_process,
                                                                                 upstreams) -> None:
    async with streams_of_a_killed_process(settings, api_process, upstreams, 2, limits=LIMITS) as killed:
        users, tokens, store = killed.users, killed.tokens, killed.store
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
