# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Budget windows exact under concurrency, refunds and an emptied Redis: 64 requests sent at once at a
window with room for 10 spend at most the window; a failed request gives back all it took; the
database's window holds the sum of its charges once the workers ran; a Redis that lost everything
rebuilds the window from the database, and never opens a fresh allowance."""
from __future__ import annotations

import asyncio
from typing import Any

import orjson

from api import keys
from api.services.budgets.limits import normalise
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from models import BudgetUsage, Log, Token, User
from models.enums import LogType
from tests.helpers import both_databases, eventually
from tests.relay.fakes import add_channel, drain, gateway, headers_for, make_key, relay_of, rich_user, upstreams  # noqa: F401

RATIOS = {"ModelRatio": {"gpt-4": 1}, "CompletionRatio": {"gpt-4": 1}}
# max_tokens 20: each request reserves its prompt + 20 quota and settles 13 + 7 = 20
BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "Write me a long story."}], "max_tokens": 20}
CHARGE = 20


async def priced(gateway) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for name, table in RATIOS.items():
        await options.update(name, orjson.dumps(table).decode())


async def burst(gateway, fake, token: Token, n: int) -> list[int]:
    """`n` chats at once (every other one streamed); those admitted are held upstream until every
    one is answered or waiting there."""
    calls = [asyncio.ensure_future(gateway.post("/v1/chat/completions", json={**BODY, "stream": i % 2 == 1},
                                                headers=headers_for(token))) for i in range(n)]

    async def all_in() -> bool:
        return fake.waiting + sum(1 for c in calls if c.done()) == n

    await eventually(all_in, timeout=60)
    fake.gate.set()
    statuses = []
    for call in calls:
        resp = await call
        await resp.read()
        statuses.append(resp.status)
    return statuses


async def live_window(gateway, user: User, part: str, identity: str, window: str) -> dict[str, int]:
    store = gateway.server.app[keys.STORE]
    start, _ = bounds(window, relay_of(gateway).quota.clock())
    raw = await store.redis.hgetall(window_key(store, user.id, part, identity, start))
    return {k: int(v) for k, v in raw.items() if k != "s"}


async def db_window(user: User) -> list[dict[str, Any]]:
    return await BudgetUsage.filter(user_id=user.id).values("owner_kind", "identity", "quota", "requests", "tokens")


@both_databases
async def test_64_requests_at_once_spend_at_most_a_window_with_room_for_10(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event())
    await add_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user, limits=normalise([{"window": "day", "requests": 10}]))
    statuses = await burst(gateway, fake, token, 64)
    assert statuses.count(200) == 10 and statuses.count(429) == 54
    assert await live_window(gateway, user, f"k{token.id}", "day", "day") == {"q": 10 * CHARGE, "r": 10, "t": 200}
    await drain(gateway)
    charges = await Log.filter(user_id=user.id, type=LogType.CONSUME).values_list("quota", flat=True)
    assert len(charges) == 10
    assert await db_window(user) == [{"owner_kind": "key", "identity": "day", "quota": sum(charges), "requests": 10,
                                      "tokens": 200}]


@both_databases
async def test_64_requests_at_once_at_a_quota_window_take_no_more_than_it_holds(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(gate=asyncio.Event())
    await add_channel(gateway, fake)
    user = await rich_user()
    probe = await make_key(user, limits=normalise([{"window": "hour", "quota": 10**9}]))
    call = asyncio.ensure_future(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(probe)))

    async def waiting() -> bool:
        return fake.waiting == 1
    await eventually(waiting, timeout=30)
    pre = (await live_window(gateway, user, f"k{probe.id}", "hour", "hour"))["q"]  # what one request reserves
    fake.gate.set()
    assert (await call).status == 200
    assert pre > CHARGE
    token = await make_key(user, limits=normalise([{"window": "hour", "quota": 10 * pre}]))
    fake.gate = asyncio.Event()
    statuses = await burst(gateway, fake, token, 64)
    assert statuses.count(200) == 10
    await drain(gateway)
    [row] = await BudgetUsage.filter(user_id=user.id, owner_id=str(token.id)).values("quota", "requests")
    assert row == {"quota": 10 * CHARGE, "requests": 10} and row["quota"] <= 10 * pre


async def test_a_failed_request_gives_the_window_back_all_it_took(gateway, upstreams) -> None:
    await priced(gateway)
    fake = await upstreams(fail_status=500)
    await add_channel(gateway, fake)
    user = await rich_user(limits=normalise([{"window": "day", "requests": 2}, {"window": "day", "quota": 1000},
                                             {"window": "day", "tokens": 1000}]))
    token = await make_key(user)
    for _ in range(5):  # failures never use the window up
        resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
        assert resp.status == 500
    assert await live_window(gateway, user, "u", "day", "day") == {"q": 0, "r": 0, "t": 0}
    fake.fail_status = None
    for _ in range(2):
        resp = await gateway.post("/v1/chat/completions", json={**BODY, "stream": True}, headers=headers_for(token))
        assert resp.status == 200
        await resp.read()
    assert await live_window(gateway, user, "u", "day", "day") == {"q": 2 * CHARGE, "r": 2, "t": 40}
    await drain(gateway)
    assert await db_window(user) == [{"owner_kind": "user", "identity": "day", "quota": 2 * CHARGE, "requests": 2,
                                      "tokens": 40}]


@both_databases
async def test_an_emptied_redis_rebuilds_the_window_from_the_database(gateway, upstreams) -> None:
    await priced(gateway)
    await add_channel(gateway, await upstreams())
    user = await rich_user()
    token = await make_key(user, limits=normalise([{"window": "day", "requests": 3}, {"window": "5h", "quota": 50}]))
    for _ in range(2):
        resp = await gateway.post("/v1/chat/completions", json={**BODY, "max_tokens": 5}, headers=headers_for(token))
        assert resp.status == 200
    await drain(gateway)  # the first is in the database
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "max_tokens": 5}, headers=headers_for(token))
    assert resp.status == 429  # the rolling window: 40 used, 13 + 5 more would pass 50
    store = gateway.server.app[keys.STORE]
    async for key in store.redis.scan_iter(match=f"{store.prefix}{{u{user.id}}}:*"):
        await store.redis.delete(key)  # Redis lost the user's keys (this test's own prefix)
    resp = await gateway.post("/v1/chat/completions", json={**BODY, "max_tokens": 5}, headers=headers_for(token))
    body = await resp.json()
    assert resp.status == 429 and "5h limit of 50 quota" in body["error"]["message"], body
    assert "(40 used)" in body["error"]["message"]
    assert await live_window(gateway, user, f"k{token.id}", "day", "day") == {"q": 40, "r": 2, "t": 40}


@both_databases
async def test_pending_records_count_in_the_rebuilt_window(gateway, upstreams) -> None:
    await priced(gateway)
    await add_channel(gateway, await upstreams())
    user = await rich_user()
    token = await make_key(user, limits=normalise([{"window": "day", "requests": 2}]))
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200
    await drain(gateway)
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200  # its record still pending (not applied)
    store = gateway.server.app[keys.STORE]
    for name in ("quota", "gen", "pver"):
        await store.redis.delete(f"{store.prefix}{{u{user.id}}}:{name}")  # the balance lost, the records kept
    start, _ = bounds("day", relay_of(gateway).quota.clock())
    await store.redis.delete(window_key(store, user.id, f"k{token.id}", "day", start))
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 429
    assert await live_window(gateway, user, f"k{token.id}", "day", "day") == {"q": 2 * CHARGE, "r": 2, "t": 40}
    await drain(gateway)
    await drain(gateway)  # a record delivered again counts once
    [row] = await db_window(user)
    assert row["requests"] == 2 and row["quota"] == 2 * CHARGE
