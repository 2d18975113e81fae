# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A database that stops answering: PostgreSQL behind a proxy of the test's own that turns into a
blackhole (connections accepted, nothing answered, nothing refused: a cut network, a hung
failover), and SQLite with another process holding the write lock.

Nothing waits for the whole outage: each console request, and each relay request that must look
its key up, answers 503 with Retry-After, its wait ended by the configured timeouts
(DB_CONNECT_TIMEOUT for a connection, DB_STATEMENT_TIMEOUT and one second of client grace for the
statement; SQLite's busy timeout) or by the breaker those timeouts opened — as the process logs the
cause of each 503; the relay keeps serving the keys it knows; the worker's settlement gives its lock
up instead of holding it; once the proxy forwards again every request is billed exactly once.
Asserted by what ended each wait, never by how long it took (a loaded machine stretches them all):
a request that hangs fails after a generous guard only.
"""
from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from dataclasses import replace
from typing import Any

import asyncpg
import orjson
import pytest
from tortoise import Tortoise

from api import keys
from api.app import create_app
from api.services import redis_keys
from api.services.billing.balances import user_quota_key
from api.services.billing.settlement import apply_pending, pending_for, pending_key, users_with_pending
from api.services.configuration.options import OptionsService
from api.services.locks import LockBusy, lease_lock
from models import Settlement, User
from models.db import close_database, init_database
from models.settings import CLIENT_GRACE, Settings
from tests.conftest import process_env
from tests.faults.blackhole import Blackhole
from tests.faults.causes import HANG_GUARD, Answer, Causes, timed, watching
from tests.faults.ledger import Books, check_books, report
from tests.helpers import ApiClient, eventually, make_user
from tests.relay.fakes import add_channel, headers_for, make_key, rich_user, upstreams  # noqa: F401

TIMEOUTS = {"DB_CONNECT_TIMEOUT": "1", "DB_STATEMENT_TIMEOUT": "1", "DB_TRANSACTION_TIMEOUT": "2"}
SHORTEST = 1.0  # seconds: the shortest configured wait a timed-out request waited for (a connection)
BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The database timeouts of this process's own connection (opened from the environment) and of
    the processes it starts."""
    for name, value in TIMEOUTS.items():
        monkeypatch.setenv(name, value)
    return TIMEOUTS


@pytest.fixture
def settings(settings: Settings, short_timeouts: dict[str, str]) -> Settings:
    """The app's own settings carry the same short timeouts (the API opens its database with them)."""
    return replace(settings, db_connect_timeout=float(short_timeouts["DB_CONNECT_TIMEOUT"]),
                   db_statement_timeout=float(short_timeouts["DB_STATEMENT_TIMEOUT"]),
                   db_transaction_timeout=float(short_timeouts["DB_TRANSACTION_TIMEOUT"]))


@pytest.fixture
def proxy(postgres_database: str):
    hole = Blackhole.before(postgres_database)
    yield hole
    hole.stop()


def cut_by_the_timeouts(causes: Causes, answer: Answer) -> bool:
    """Whether this 503 came from a timeout of the database client (having waited for it: a slower
    machine only waits longer) or from the breaker such a timeout opened (nothing sent)."""
    seen = causes.of(answer)
    if seen[:1] == ["DatabaseDown"]:
        return True
    return "TimeoutError" in seen and answer.seconds >= SHORTEST - 0.05


async def start_worker(spawn, settings: Settings, redis_sync) -> Any:
    """`python -m workers` on these settings (the proxied database), ready when it consumed a heartbeat."""
    from tests.conftest import _send_heartbeat
    from workers.broker import setup_broker

    proc = spawn([sys.executable, "-m", "workers", "--processes", "1", "--threads", "4"],
                 process_env(settings, **TIMEOUTS), name="worker")
    setup_broker(settings)
    key = f"{settings.redis_prefix}heartbeat:worker"

    async def beaten() -> bool:
        assert proc.proc.poll() is None, "worker exited:\n" + proc.output()
        await asyncio.to_thread(_send_heartbeat)
        return redis_sync.exists(key) == 1

    await eventually(beaten, timeout=30, interval=0.3)
    return proc


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_postgres_blackhole_answers_503_within_the_timeouts_and_bills_once_after(
        short_timeouts, aiohttp_client, settings: Settings, proxy: Blackhole, upstreams, spawn, redis_sync) -> None:
    settings = replace(settings, database_url=proxy.url(settings.database_url))
    gateway = await aiohttp_client(create_app(settings))
    store = gateway.server.app[keys.STORE]
    await add_channel(gateway, await upstreams())
    worker = await start_worker(spawn, settings, redis_sync)
    alice = ApiClient(gateway)
    await make_user("alice")
    await alice.login("alice", "password123")
    users = [await rich_user(f"user{i}", quota=1_000_000) for i in range(2)]
    known = [await make_key(u, remain_quota=400_000, unlimited=False) for u in users]
    unseen = await make_key(users[0])  # never used: not in any cache
    for token in known:  # their keys and balances are in Redis from here on
        assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200

    client = Tortoise.get_connection("default")
    assert client.acquire_timeout == 1.0 and client._template["timeout"] == 1.0  # the configured waits
    assert client._template["command_timeout"] == 1.0 + CLIENT_GRACE

    with watching() as causes:
        proxy.swallow()
        needs_database = [
            ("GET /api/user/self", gateway.get("/api/user/self", headers={"New-Api-User": str(alice.user_id)})),
            ("GET /api/token/", gateway.get("/api/token/?p=0", headers={"New-Api-User": str(alice.user_id)})),
            ("PUT /api/user/self", gateway.put("/api/user/self", json={"display_name": "Alice"},
                                               headers={"New-Api-User": str(alice.user_id)})),
            ("POST /api/user/login", gateway.post("/api/user/login", json={"username": "alice",
                                                                           "password": "password123"})),
            *((f"relay, uncached key #{i}", gateway.post("/v1/chat/completions", json=BODY,
                                                          headers=headers_for(unseen)))
              for i in range(3)),
        ]
        served = [gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(t)) for t in known * 2]
        answers = await asyncio.gather(*(timed(call) for _, call in needs_database), *(timed(c) for c in served))
        for (name, _), answer in zip(needs_database, answers, strict=False):
            assert answer.status == 503 and answer.headers.get("Retry-After"), (name, answer)
            assert cut_by_the_timeouts(causes, answer), (name, causes.of(answer), f"{answer.seconds:.2f} s")
            if name.startswith("relay"):
                assert answer.body["error"]["code"] == "service_unavailable", answer.body
            else:
                assert answer.body["success"] is False and answer.body["data"] is None, answer.body
        # The first of them to give up did so on a timeout, and opened the breaker on it, once.
        assert any("TimeoutError" in causes.of(a) for a in answers[:len(needs_database)])
        assert causes.opened == ["TimeoutError"], causes.opened
        assert [answer.status for answer in answers[len(needs_database):]] == [200] * 4  # served from Redis
        await store.redis.delete(user_quota_key(store, users[1].id))  # a known key whose balance must be reloaded
        reload = await timed(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(known[1])))
        assert reload.status == 503 and reload.headers.get("Retry-After"), reload
        assert cut_by_the_timeouts(causes, reload), causes.of(reload)
    slowest = max(answer.seconds for answer in answers[:len(needs_database)])

    # The worker tries those records while the database is away: it gives its billing locks up.
    async def tried_and_let_go() -> bool:
        pending = await store.redis.exists(*(pending_key(store, u.id) for u in users))
        locks = [key async for key in store.redis.scan_iter(match=redis_keys.billing_lock(store, "*"))]
        return pending > 0 and not locks and "not applied (retried later)" in worker.output()

    await eventually(tried_and_let_go, timeout=20, interval=0.2)

    proxy.open()

    async def logged_in() -> bool:  # once the breaker's probe (every second) has seen it back
        login = await timed(gateway.post("/api/user/login", json={"username": "alice", "password": "password123"}))
        return login.status == 200 and login.body["success"]

    await eventually(logged_in, timeout=60, interval=0.2)

    async def settled() -> bool:
        return await users_with_pending(store) == []

    await eventually(settled, timeout=30, interval=0.2)  # by the worker, through the proxy
    summary = await check_books(store, Books(users, known))
    assert summary.logs == 6  # two before, four during: each once
    report("PostgreSQL behind a network blackhole (connections accepted, never answered), then back",
           "console and uncached-key relay requests 503 + Retry-After, ended by the timeouts or the breaker "
           f"they opened (the slowest after {slowest:.1f} s); "
           "known keys served throughout",
           "every request, once: the worker gave its locks up while the database was away and applied the "
           "records once it answered", summary)


async def test_sqlite_write_lock_held_elsewhere_bounds_every_wait(short_timeouts, client, settings, upstreams) -> None:
    await add_channel(client, await upstreams())
    alice = ApiClient(client)
    user = await make_user("alice")
    await alice.login("alice", "password123")
    unseen = await make_key(await rich_user("bob"))
    headers = {"New-Api-User": str(alice.user_id)}
    holder = sqlite3.connect(settings.database_url.removeprefix("sqlite://"), isolation_level=None)
    try:
        with watching() as causes:
            holder.execute("BEGIN IMMEDIATE")  # another process writing: the file's write lock is taken
            writes = [timed(client.put("/api/user/self", json={"display_name": f"Alice {i}"}, headers=headers))
                      for i in range(3)]
            reads = [timed(client.get("/api/user/self", headers=headers)) for _ in range(2)]
            answers = await asyncio.gather(*writes, *reads)
            for answer in answers:
                assert answer.status in (200, 503), answer  # a read may wait behind a write for the connection
                if answer.status == 503:
                    assert answer.headers.get("Retry-After") and answer.body["success"] is False, answer.body
                    assert busy_or_queued(causes, answer), causes.of(answer)
            assert [answer.status for answer in answers[:3]] == [503] * 3
            # At least one write waited out the busy timeout on the lock itself (the others, queued
            # behind it for the process's one connection, may have given up on that wait instead).
            assert any(causes.of(answer)[-1:] == ["OperationalError"] for answer in answers[:3]), \
                [causes.of(answer) for answer in answers]
            # Alone, a read goes through (WAL: readers do not wait for a writer), and so does a relay
            # request whose key is looked up (a read).
            assert (await timed(client.get("/api/user/self", headers=headers))).status == 200
            relayed = await timed(client.post("/v1/chat/completions", json=BODY, headers=headers_for(unseen)))
            assert relayed.status == 200, relayed
            token = {"name": "x", "unlimited_quota": True, "expired_time": -1}
            created = await timed(client.post("/api/token/", json=token, headers=headers))
            assert created.status == 503 and busy_or_queued(causes, created), (created, causes.of(created))
    finally:
        holder.rollback()
        holder.close()
    after = await timed(client.put("/api/user/self", json={"display_name": "Alice"}, headers=headers))
    assert after.status == 200 and after.body["success"], after.body
    assert (await User.get(id=user.id)).display_name == "Alice"


def busy_or_queued(causes: Causes, answer: Answer) -> bool:
    """SQLite's busy timeout ("database is locked": the lock never came) or the configured wait for
    the process's one connection (a TimeoutError), having waited for it."""
    seen = causes.of(answer)
    if seen[-1:] == ["OperationalError"]:
        return "locked" in str(causes.by_request[answer.request_id])
    return "TimeoutError" in seen and answer.seconds >= SHORTEST - 0.05


# -- the billing lock and the worker's queue ------------------------------------------------------


async def put_record(store, user_id: int, rid: str, quota: int) -> None:
    record = {"rid": rid, "q": quota, "t": 0, "tl": 0, "c": 0, "m": "gpt-4", "p": 1, "ct": 1, "ts": time.time()}
    await store.redis.hset(pending_key(store, user_id), rid, orjson.dumps(record))


@pytest.fixture
async def store(settings: Settings):
    from api.services.store import Store

    shop = Store.from_url(settings.redis_url, settings.redis_prefix)
    yield shop
    await shop.close()


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_settlement_stuck_in_a_blackhole_gives_its_lock_up(short_timeouts, settings, proxy, store) -> None:
    """The transaction is mid-way (the user's row locked, waiting on it) when the network goes: the
    settlement fails within its timeout, its billing lock is released, nothing is applied; the
    records apply once when the database answers again (after PostgreSQL ends the session left
    idle in its transaction, whose row lock it held)."""
    await init_database(proxy.url(settings.database_url))
    try:
        options = OptionsService(store)
        await options.load()
        user = await make_user("alice", quota=1_000)
        await put_record(store, user.id, "r-stuck", 7)
        lock_key = redis_keys.billing_lock(store, user.id)
        direct = await asyncpg.connect(settings.database_url)  # not through the proxy, no timeouts
        await direct.execute("BEGIN")
        await direct.execute('SELECT 1 FROM "user" WHERE id = $1 FOR UPDATE', user.id)
        settling = asyncio.create_task(apply_pending(store, options, user.id, wait=0, timeout=2))

        async def waiting_on_the_row() -> bool:
            return bool(await direct.fetchval("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"))

        await eventually(waiting_on_the_row)
        proxy.swallow()
        await direct.execute("ROLLBACK")  # the row is the settlement's now; its answer goes nowhere
        await direct.close()
        done, _ = await asyncio.wait({settling}, timeout=HANG_GUARD)  # not cancelled: a stuck one would hang here
        assert done, "the settlement is still stuck"
        with pytest.raises(TimeoutError):  # its own timeout ended it (the transaction's 2 s), nothing else
            settling.result()
        assert not await store.redis.exists(lock_key)  # released, not held for the outage
        assert await store.redis.hlen(pending_key(store, user.id)) == 1

        proxy.open()

        async def applied() -> int:
            try:
                return await apply_pending(store, options, user.id, wait=0, timeout=2)
            except Exception:  # the abandoned session still holds the row, until PostgreSQL ends it
                return 0

        assert await eventually(applied, timeout=30, interval=0.2) == 1
        assert await apply_pending(store, options, user.id) == 0
        assert await Settlement.filter(request_id="r-stuck").count() == 1
        assert (await User.get(id=user.id)).quota == 1_000 - 7
    finally:
        await close_database()


async def test_a_lock_whose_block_is_stuck_is_no_longer_renewed_after_max_hold(store) -> None:
    key = redis_keys.lock(store, "test")
    async with lease_lock(store, key, lease=0.3, max_hold=0.3):
        async def lapsed() -> bool:
            return not await store.redis.exists(key)

        await eventually(lapsed, timeout=10)  # while the block still runs
    with pytest.raises(LockBusy):
        async with lease_lock(store, key, lease=5, wait=0), lease_lock(store, key, wait=0):
            pass


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_other_users_settle_while_one_user_is_stuck(short_timeouts, settings, store, worker) -> None:
    """One user's row is locked elsewhere (a stuck transaction) and a dozen messages for that user
    arrive first: no worker thread waits on that user, and the other users' records, in the same
    message or behind it, are applied at once; the stuck user's once its row is free."""
    from workers.broker import send

    await init_database(settings.database_url)
    try:
        stuck, *others = [await make_user(f"user{i}", quota=1_000_000) for i in range(3)]
        for user in (stuck, *others):
            for n in range(2):
                await put_record(store, user.id, f"r-{user.id}-{n}", 100 + n)
        holder = await asyncpg.connect(settings.database_url)  # no timeouts: it holds the row for as long as it likes
        await holder.execute("BEGIN")
        await holder.execute('SELECT 1 FROM "user" WHERE id = $1 FOR UPDATE', stuck.id)
        for _ in range(12):
            await asyncio.to_thread(send, "billing.apply", [stuck.id])
        await asyncio.to_thread(send, "billing.apply", [stuck.id, others[0].id])
        await asyncio.to_thread(send, "billing.apply", [others[1].id])

        async def others_applied() -> bool:
            pending = await pending_for(store, [u.id for u in others])
            return all(count == 0 for count in pending.values())

        await eventually(others_applied, timeout=15, interval=0.1)
        assert (await pending_for(store, [stuck.id]))[stuck.id] == 2  # still waiting for its row
        for user in others:
            assert (await User.get(id=user.id)).quota == 1_000_000 - 201
        await holder.execute("ROLLBACK")
        await holder.close()

        async def all_applied() -> bool:
            return await users_with_pending(store) == []

        await eventually(all_applied, timeout=30, interval=0.1)  # the stuck user's retry
        summary = await check_books(store, Books([stuck, *others], []))
        assert summary.logs == 6 and summary.charged == 3 * 201
        assert await Settlement.filter(user_id=stuck.id).count() == 2
    finally:
        await close_database()
