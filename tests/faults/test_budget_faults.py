# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Limits over time exact under faults (README, "Budgets and limits"): the settlement worker killed
with SIGKILL mid-window, inside its transaction and after its commit; Redis restarted mid-window,
empty and with its AOF, requests held upstream across it. Each ends with the windows' invariant
(tests/faults/ledger.py, check_windows: the database's window = Σ its charges in the consumption
logs = Redis's live window) and the balances' (check_books).

Balances, windows and records live on a Redis of the test's own (the workers' queues stay on the
shared one, BROKER_URL); the gateway's clock is fixed, so no window turns during a test."""
from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from dataclasses import dataclass, replace
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from tortoise.transactions import in_transaction

from api import keys
from api.app import create_app
from api.services.billing.settlement import pending_key
from api.services.budgets.limits import normalise
from api.services.store import Store
from models import BudgetUsage, Settlement, Token, User
from models.settings import Settings
from tests.conftest import Process, start_worker
from tests.faults.ledger import KEY_START, Books, check_books, check_windows
from tests.helpers import both_databases, eventually
from tests.own_redis import OwnRedis
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    add_channel,
    drain,
    headers_for,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)
from tests.services.billing.test_budget_windows import BODY, CHARGE, priced

LIMIT = 8  # requests a day on the key
QUOTA = 8 * CHARGE  # quota a day on the user
ROOMY = 10**6  # a quota limit that counts without binding
STREAM = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
# The first worker waits on the test's lock for as long as it is held, never giving up meanwhile.
PATIENT = {"DB_STATEMENT_TIMEOUT": "120", "DB_TRANSACTION_TIMEOUT": "120"}


@pytest.fixture
def own_settings(settings: Settings, own_redis: OwnRedis) -> Settings:
    return replace(settings, redis_url=own_redis.url)


@pytest.fixture
async def budget_gateway(aiohttp_client, own_settings: Settings, upstreams) -> tuple[TestClient, FakeUpstream]:
    """The gateway on the test's own Redis, priced so that each chat costs CHARGE, its clock fixed."""
    gateway = await aiohttp_client(create_app(own_settings))
    await priced(gateway)
    fake = await upstreams()
    await add_channel(gateway, fake)
    now = time.time()
    relay_of(gateway).quota.clock = lambda: now
    return gateway, fake


async def chat(gateway: TestClient, token: Token, body: dict[str, Any] = BODY) -> tuple[int, dict[str, Any] | bytes]:
    resp = await gateway.post("/v1/chat/completions", json=body, headers=headers_for(token))
    if body.get("stream"):
        return resp.status, await resp.read()
    return resp.status, await resp.json()


async def served(gateway: TestClient, token: Token, n: int) -> None:
    for _ in range(n):
        status, body = await chat(gateway, token)
        assert status == 200, body


async def until_refused(gateway: TestClient, token: Token) -> tuple[int, int]:
    """Chats one after another until one is refused: (how many were admitted, the usage the refusal names)."""
    for admitted in range(4 * LIMIT):
        status, body = await chat(gateway, token)
        if status == 429:
            assert isinstance(body, dict) and body["error"]["code"] == "budget_exceeded", body
            used = re.search(r"\((\d+) used\)", body["error"]["message"])
            assert used is not None, body
            return admitted, int(used[1])
        assert status == 200, body
    raise AssertionError(f"{4 * LIMIT} chats admitted: the window never refused")


async def limited_key(user: User, limits: list[dict[str, Any]]) -> Token:
    """A key with a balance of its own (as the ledger's) and these limits over time."""
    return await make_key(user, remain_quota=KEY_START, unlimited=False, limits=normalise(limits))


def kill(proc: Process) -> None:
    os.killpg(proc.proc.pid, signal.SIGKILL)
    proc.proc.wait()


async def pending(store: Store, user: User) -> list[str]:
    return sorted(await store.redis.hkeys(pending_key(store, user.id)))


# -- the settlement worker killed ------------------------------------------------------------------

WAITING_ON_A_ROW = ("SELECT count(*) AS n FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'")


async def kill_inside_its_transaction(spawn, settings: Settings, user: User) -> Process:
    """PostgreSQL: the user's window row locked by the test, the worker waits on it inside its
    transaction (its Settlement rows, the balances and the key's window written, not committed);
    killed there."""
    row = await BudgetUsage.get(user_id=user.id, owner_kind="user")
    async with in_transaction() as conn:
        await BudgetUsage.filter(id=row.id).using_db(conn).select_for_update().first()
        worker = await start_worker(spawn, settings, name="worker-1", **PATIENT)
        await asyncio.to_thread(_send, "billing.apply", [user.id])

        async def waiting() -> bool:
            return bool((await conn.execute_query_dict(WAITING_ON_A_ROW))[0]["n"])

        await eventually(waiting, timeout=30)
        await asyncio.to_thread(kill, worker)
    return worker


async def kill_after_its_commit(spawn, settings: Settings, own_redis: OwnRedis, user: User, count: int) -> Process:
    """The worker's Redis refuses it HDEL: it commits the records, then cannot remove them from
    Redis (the state a worker killed between the two leaves); killed once they are committed."""
    worker = await start_worker(spawn, replace(settings, redis_url=own_redis.user_url("settler", "-hdel")),
                                name="worker-1")
    await asyncio.to_thread(_send, "billing.apply", [user.id])

    async def committed() -> bool:
        return await Settlement.filter(user_id=user.id).count() == count and "NoPermissionError" in worker.output()

    await eventually(committed, timeout=30)
    await asyncio.to_thread(kill, worker)
    return worker


@pytest.mark.parametrize(("database_url", "kill_at"), [
    ("postgres", "in_transaction"), ("sqlite", "after_commit"), ("postgres", "after_commit")],
    indirect=["database_url"])
async def test_settlement_worker_killed_mid_window_counts_each_record_once(
        budget_gateway, own_settings, own_redis, spawn, kill_at) -> None:
    """Three chats applied, four pending; the worker that takes the four is killed with SIGKILL
    inside its transaction or after its commit, before it removed them. The next worker applies
    them once; the window then refuses the ninth request of a day limit of eight.

    (Not inside the transaction on SQLite: there a worker's transaction that meets another
    process's write lock fails at once and is tried again 2 s later, so no worker can be held in one.)"""
    gateway, _ = budget_gateway
    store = gateway.server.app[keys.STORE]
    user = await rich_user(limits=normalise([{"window": "day", "quota": ROOMY}]))
    token = await limited_key(user, [{"window": "day", "quota": ROOMY}, {"window": "day", "requests": LIMIT}])
    books = Books([user], [token])
    await served(gateway, token, 3)
    await drain(gateway)  # in the database: the windows' rows exist
    await served(gateway, token, 4)
    records = await pending(store, user)
    assert len(records) == 4
    if kill_at == "in_transaction":
        await kill_inside_its_transaction(spawn, own_settings, user)
    else:
        await kill_after_its_commit(spawn, own_settings, own_redis, user, 7)
    assert await Settlement.filter(user_id=user.id).count() == (7 if kill_at == "after_commit" else 3)
    assert await pending(store, user) == records  # killed before it removed them

    second = await start_worker(spawn, own_settings, name="worker-2")

    async def applied(count: int) -> bool:
        return not await pending(store, user) and await Settlement.filter(user_id=user.id).count() == count

    async def swept() -> bool:
        """billing.sweep, as the scheduler sends it, until the records are applied. (The dead worker's
        own retry is lost with it, and its mark, "a retry on its way", makes a billing.apply sent
        within the retry's delay leave the user to the sweep.)"""
        if await applied(7):
            return True
        await asyncio.to_thread(_send, "billing.sweep")
        return False

    await eventually(swept, timeout=60, interval=1)  # once the dead worker's lease lapsed
    assert await check_windows(store, user) == {f"k{token.id}:day": (7 * CHARGE, 7, 140),
                                                "u:day": (7 * CHARGE, 7, 140)}
    assert await until_refused(gateway, token) == (LIMIT - 7, LIMIT)  # the eighth, then refused
    await eventually(lambda: applied(8), timeout=60)  # the gateway's billing.apply, by the second worker
    assert second.proc.poll() is None, second.output()
    await check_books(store, books)
    assert await check_windows(store, user) == {f"k{token.id}:day": (LIMIT * CHARGE, LIMIT, 20 * LIMIT),
                                                "u:day": (LIMIT * CHARGE, LIMIT, 20 * LIMIT)}


def _send(actor_name: str, *args: object) -> None:
    from workers.broker import send

    send(actor_name, *args)


# -- Redis restarted mid-window --------------------------------------------------------------------


@dataclass
class Owner:
    """A user and its key; `limited` the owner whose day limit binds: the key (LIMIT requests) or the
    user (QUOTA)."""

    user: User
    token: Token
    limited: str
    applied: int = 0  # chats in the database before the restart
    pending: int = 0  # chats whose records were still in Redis at the restart
    held: int = 0  # chats running across it
    after: int = 0  # chats admitted after it, the held ones still running
    used: int = 0  # the window's usage the first refusal after it named
    later: int = 0  # chats admitted once the held ones finished
    used_at_end: int = 0  # the usage the last refusal named
    served: int = 0  # chats answered in all

    @property
    def part(self) -> str:
        return f"k{self.token.id}" if self.limited == "key" else "u"


async def owners() -> list[Owner]:
    by_key = await rich_user("by_key", limits=normalise([{"window": "day", "quota": ROOMY}]))
    by_user = await rich_user("by_user", limits=normalise([{"window": "day", "quota": QUOTA},
                                                           {"window": "5h", "requests": 1000}]))
    return [Owner(by_key, await limited_key(by_key, [{"window": "day", "requests": LIMIT}]), "key"),
            Owner(by_user, await limited_key(by_user, []), "user")]


async def across_a_restart(gateway: TestClient, fake: FakeUpstream, own_redis: OwnRedis, *,
                           keep_data: bool) -> list[Owner]:
    """For each owner: two chats applied, two pending, two streams held upstream; Redis killed and
    started again (`keep_data`: from its AOF; else empty); chats until one is refused, the streams
    still held; the streams finished; chats until one is refused again. Ends with every record applied and
    the balances' invariant checked."""
    store = gateway.server.app[keys.STORE]
    found = await owners()
    for owner in found:
        await served(gateway, owner.token, 2)
    await drain(gateway)
    for owner in found:
        await served(gateway, owner.token, 2)
        owner.applied = 2
        owner.pending = len(await pending(store, owner.user))
    fake.feeds = []
    streams = [asyncio.ensure_future(chat(gateway, owner.token, STREAM)) for owner in found for _ in range(2)]
    for owner in found:
        owner.held = 2

    async def all_held() -> bool:
        return fake.feeds is not None and len(fake.feeds) == len(streams)

    await eventually(all_held, timeout=20)
    own_redis.restart(keep_data=keep_data, kill=True)
    for owner in found:
        owner.after, owner.used = await until_refused(gateway, owner.token)
    for feed in fake.feeds:
        feed.put_nowait(None)
    for status, body in await asyncio.gather(*streams):
        assert status == 200 and isinstance(body, bytes) and b"[DONE]" in body, body
    for owner in found:  # the streams settled into the window: what room is left, then refused
        owner.later, owner.used_at_end = await until_refused(gateway, owner.token)
        owner.served = owner.applied + owner.pending + owner.held + owner.after + owner.later
    await drain(gateway)
    await check_books(store, Books([o.user for o in found], [o.token for o in found]))
    return found


def spent(owner: Owner) -> tuple[int, int]:
    """What the owner's chats took from its binding window: (quota, requests) charged."""
    return owner.served * CHARGE, owner.served


@both_databases
async def test_redis_restarted_empty_mid_window_rebuilds_the_window_from_the_database(
        budget_gateway, own_redis) -> None:
    """The rebuilt window holds what the database held (not a fresh allowance): what opens again
    is, as documented, the records not yet applied and the requests running at the restart."""
    gateway, fake = budget_gateway
    store = gateway.server.app[keys.STORE]
    for owner in await across_a_restart(gateway, fake, own_redis, keep_data=False):
        assert (owner.pending, owner.held) == (2, 2)
        lost = owner.pending + owner.held  # the documented loss, in chats
        quota, requests = spent(owner)
        if owner.limited == "key":
            assert owner.used == LIMIT  # the two applied counted from the database
            assert owner.after == LIMIT - owner.applied
            assert requests <= LIMIT + lost
        else:
            # from the database's two (not 0), without the lost records and the running streams
            assert owner.used == (owner.applied + owner.after) * CHARGE and owner.after > 0
            assert quota <= QUOTA + lost * CHARGE
        charged = owner.served - owner.pending  # the pending records went with the data: served free
        windows = await check_windows(store, owner.user)
        assert windows[f"{owner.part}:day"] == (charged * CHARGE, charged, 20 * charged)


@both_databases
async def test_redis_restarted_with_its_aof_mid_window_loses_nothing(budget_gateway, own_redis) -> None:
    """Redis killed and started again from its AOF (appendfsync always): every window holds on to
    the requests applied, pending and running at the restart; each window admits its limit exactly."""
    gateway, fake = budget_gateway
    store = gateway.server.app[keys.STORE]
    for owner in await across_a_restart(gateway, fake, own_redis, keep_data=True):
        quota, requests = spent(owner)
        if owner.limited == "key":
            assert owner.used == LIMIT
            assert requests == LIMIT
        else:
            assert quota <= QUOTA
            assert owner.used >= owner.served * CHARGE  # the held streams' reservations kept (each ≥ its charge)
        windows = await check_windows(store, owner.user)
        assert windows[f"{owner.part}:day"] == (owner.served * CHARGE, owner.served, 20 * owner.served)
