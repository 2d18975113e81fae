# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Fault scenarios under load, each ending with the billing invariant (tests/faults/ledger.py) and
the service answering again without a restart: Redis restarted with its data (AOF) and without it,
and a storm of upstream faults (5xx, resets, hangs, malformed events, slow streams)."""
from __future__ import annotations

import asyncio
import random
from dataclasses import replace

import pytest

from api import keys
from api.app import create_app
from models import Log
from models.enums import LogType
from tests.faults.ledger import accounts, chat, check_books, report
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, headers_for, make_key, rich_user, upstreams  # noqa: F401


async def call(gateway, token, body: dict) -> tuple[int, bytes]:
    resp = await gateway.post("/v1/chat/completions", json=body, headers=headers_for(token))
    return resp.status, await resp.read()


@pytest.fixture
async def outage_gateway(aiohttp_client, settings, own_redis):
    return await aiohttp_client(create_app(replace(settings, redis_url=own_redis.url, streaming_timeout=1.0)))


@pytest.mark.parametrize("keep_data", [True, False], ids=["aof", "emptied"])
async def test_redis_restart_mid_load(outage_gateway, own_redis, upstreams, keep_data) -> None:
    """Requests held upstream across a Redis restart; more sent while it is down; all finished after.
    Emptied, Redis reloads each balance from the database; a settlement record that was not yet
    applied when the data went is lost with it (its request is served free: the documented case)."""
    gateway = outage_gateway
    store = gateway.server.app[keys.STORE]
    fake = await upstreams()
    await add_channel(gateway, fake)
    books = await accounts(3)
    done_before = await call(gateway, books.tokens[0], chat(False))  # settled; its record not yet applied
    assert done_before[0] == 200
    fake.gate = gate = asyncio.Event()
    kinds = [(t, stream) for t in books.tokens for stream in (True, False)]
    held = [asyncio.ensure_future(call(gateway, t, chat(stream))) for t, stream in kinds]

    async def all_held() -> bool:
        return fake.waiting == len(held)

    await eventually(all_held, timeout=20)
    own_redis.stop()
    refused = [await call(gateway, t, chat(False)) for t in books.tokens]
    assert {status for status, _ in refused} == {503}  # refused at once, not served free
    own_redis.restart(keep_data=keep_data)
    gate.set()
    results = await asyncio.gather(*held)
    assert [status for status, _ in results] == [200] * len(held)
    assert all(b"[DONE]" in body for (_, body), (_, stream) in zip(results, kinds, strict=True) if stream)
    summary = await check_books(store, books)
    served = 1 + len(held)
    lost = 0 if keep_data else 1
    assert summary.logs == served - lost
    assert await Log.filter(type=LogType.CONSUME).count() == served - lost
    after = await call(gateway, books.tokens[1], chat(True))  # answering again, no restart
    assert after[0] == 200 and b"[DONE]" in after[1]
    await drain(gateway)
    await check_books(store, books)
    name = "Redis restarted with its data (AOF)" if keep_data else "Redis restarted without its data"
    billed = ("every request in full, once" if keep_data else
              "every request in full, once, except one whose settlement record was not yet applied "
              "when the data went (served free)")
    report(name + ", 6 requests held upstream across it", "503 + Retry-After while down; the held requests "
           "answered in full after", billed, summary)


async def test_upstream_fault_storm(outage_gateway, upstreams) -> None:
    """Five faulty upstreams and a slow one under 60 concurrent requests, streamed and not."""
    gateway = outage_gateway
    store = gateway.server.app[keys.STORE]
    faults = [dict(fail_status=500), dict(fail_status=502), dict(cut_after=3), dict(hang_after=3),
              dict(malformed_after=2)]
    for behaviour in faults:
        await add_channel(gateway, await upstreams(**behaviour), name=str(behaviour))
    slow_feed: asyncio.Queue = asyncio.Queue()
    await add_channel(gateway, await upstreams(feed=slow_feed), name="slow")
    books = await accounts(4)
    rng = random.Random(7)
    plan = [(rng.choice(books.tokens), rng.random() < 0.6) for _ in range(60)]
    calls = [asyncio.ensure_future(call(gateway, token, chat(stream))) for token, stream in plan]

    async def trickle() -> None:  # the slow channel's streams: a piece at a time, then their end
        while not all(c.done() for c in calls):
            await slow_feed.put("slowly ")
            await asyncio.sleep(0.01)
            if slow_feed.qsize() < 2:
                await slow_feed.put(None)

    feeder = asyncio.ensure_future(trickle())
    results = await asyncio.wait_for(asyncio.gather(*calls), timeout=120)
    feeder.cancel()
    ok = sum(1 for status, _ in results if status == 200)
    failed = len(results) - ok
    assert all(status in (200, 429, 500, 502, 503) for status, _ in results), {s for s, _ in results}
    await drain(gateway)
    summary = await check_books(store, books)
    assert summary.logs <= ok  # a failure with no output is never charged
    after = await call(gateway, books.tokens[0], chat(False))
    assert after[0] in (200, 500, 502, 503)  # the pool still answers in its shape (channels may be disabled)
    report("Upstream storm: 500s, 502s, resets mid-stream, hangs, malformed events, slow streams; "
           "60 concurrent requests", f"{ok} answers (streams cut short end with an error event), "
           f"{failed} errors in the OpenAI shape", "answers for their output (partial streams for what "
           "was delivered); errors nothing", summary)


async def test_a_settlement_whose_reservation_redis_lost_charges_once(client, settings, redis_sync) -> None:
    """Redis lost the user's keys between pre-charge and settlement (the balance reloaded since):
    the settlement charges the reloaded balance in full and writes its record, once, however many
    times it is sent; a settlement sent again with the data intact does nothing."""
    from api.services.billing.quota import Limits, QuotaService
    from api.services.store import Store
    from models import User

    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    quota = QuotaService(store)
    user = await rich_user(quota=10_000)
    try:
        charge = await quota.pre_charge(settlement_id="r-lost", user_id=user.id, token_id=0, token_limited=False,
                                        pre=500, group="default", limits=Limits())
        assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) == 9_500
        for key in redis_sync.scan_iter(match=f"{store.prefix}{{u{user.id}}}:*"):
            redis_sync.delete(key)  # the data is gone
        await quota.load_balances(user.id, None)  # reloaded from the database: 10,000
        record = b'{"rid":"r-lost"}'
        await quota.settle(charge, 120, record, 10)
        charge.settled = False
        await quota.settle(charge, 120, record, 10)  # sent again (its first answer lost)
        assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) == 10_000 - 120
        assert await store.redis.hkeys(f"{store.prefix}{{u{user.id}}}:pend") == ["r-lost"]

        intact = await quota.pre_charge(settlement_id="r-kept", user_id=user.id, token_id=0, token_limited=False,
                                        pre=500, group="default", limits=Limits())
        await quota.settle(intact, 100, b'{"rid":"r-kept"}', 10)
        intact.settled = False
        await quota.settle(intact, 100, b'{"rid":"r-kept"}', 10)
        assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) == 10_000 - 120 - 100
        assert (await User.get(id=user.id)).quota == 10_000  # the records are the workers' to apply
    finally:
        await store.close()
