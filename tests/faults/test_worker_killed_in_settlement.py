"""A worker killed with SIGKILL inside a settlement: the user's billing lock it held lapses within
one short lease (not minutes), and the next worker applies the records exactly once."""
from __future__ import annotations

import asyncio
import os
import signal
import time

import orjson
import pytest
from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.billing.settlement import apply_pending, pending_key
from api.services.configuration.options import OptionsService
from api.services.locks import LEASE
from api.services.store import Store
from models import Settlement, User
from tests.helpers import eventually, make_user


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_worker_killed_inside_a_settlement_holds_the_lock_one_lease_at_most(client, settings, worker) -> None:
    from workers.broker import send

    user = await make_user("alice", quota=1_000)
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    lock_key = redis_keys.billing_lock(store, user.id)
    record = {"rid": "r-killed", "q": 7, "t": 0, "tl": 0, "c": 0, "m": "gpt-4", "p": 1, "ct": 1, "ts": time.time()}
    await store.redis.hset(pending_key(store, user.id), "r-killed", orjson.dumps(record))
    try:
        async with in_transaction() as conn:
            # The user's row locked here: the worker takes the billing lock, then waits on the row.
            await User.filter(id=user.id).using_db(conn).select_for_update().first()
            await asyncio.to_thread(send, "billing.apply", [user.id])
            await eventually(lambda: store.redis.exists(lock_key))
            os.killpg(worker.proc.pid, signal.SIGKILL)
            await asyncio.to_thread(worker.proc.wait)
            ttl = await store.redis.pttl(lock_key)
            assert 0 < ttl <= LEASE * 1000  # the dead worker's lock lapses within one lease
        options = OptionsService(store)
        await options.load()
        assert await apply_pending(store, options, user.id) == 1  # the next worker, once the lease lapsed
        assert await apply_pending(store, options, user.id) == 0
        assert await Settlement.filter(request_id="r-killed").count() == 1
        assert (await User.get(id=user.id)).quota == 1_000 - 7
    finally:
        await store.close()
