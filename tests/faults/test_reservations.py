# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Reservations that outlive their process or their Redis: an API process killed with SIGKILL with
streams open (their reservations are closed by the sweep: prompt and checkpointed output charged,
the rest returned), and streams that finish while Redis is down (settled once it is back)."""
from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import orjson
import pytest

from api import keys
from api.app import create_app
from api.services.billing import pricing
from api.services.billing.reservations import ORPHAN, close_orphans, reservations_key
from api.upstream.tokenizer import count_chat_request
from models import Log, Token, User
from models.enums import LogType
from tests.faults.killed_streams import BODY, MESSAGES, books_balance, streams_of_a_killed_process
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, headers_for, live_balance, make_key, rich_user, upstreams  # noqa: F401


async def test_api_process_killed_with_streams_open(client, settings, api_process, upstreams) -> None:
    async with streams_of_a_killed_process(settings, api_process, upstreams, 3) as killed:
        users, tokens, store = killed.users, killed.tokens, killed.store
        produced = {}
        for user in users:
            entries = await store.redis.hgetall(reservations_key(store, user.id))
            produced[user.id] = int(next(v for k, v in entries.items() if k.endswith("#")).split("|")[1])
            assert int(await store.redis.get(f"{store.prefix}{{u{user.id}}}:quota")) < 1_000_000  # still taken
        assert await close_orphans(store, 500_000) == []  # not expired yet: a live process may still renew
        closed = await close_orphans(store, 500_000, now_ms=int(time.time() * 1000) + 61_000)
        assert len(closed) == 3
        assert await close_orphans(store, 500_000, now_ms=int(time.time() * 1000) + 61_000) == []  # once
        await books_balance(store, users, tokens)
        prompt = count_chat_request({"model": "gpt-4", "messages": MESSAGES})
        for user in users:
            log = await Log.get(user_id=user.id, type=LogType.CONSUME)
            quota = pricing.settle_quota(pricing.resolve_price("gpt-4"), prompt, produced[user.id])
            assert (log.prompt_tokens, log.completion_tokens, log.quota) == (prompt, produced[user.id], quota)
            assert orjson.loads(log.other)["incomplete"] == ORPHAN
            assert (await User.get(id=user.id)).quota == 1_000_000 - quota


@pytest.fixture
async def outage_gateway(aiohttp_client, settings, own_redis):
    return await aiohttp_client(create_app(replace(settings, redis_url=own_redis.url)))


async def test_streams_finishing_while_redis_is_down_are_billed_once_it_is_back(
        outage_gateway, own_redis, upstreams) -> None:
    gateway = outage_gateway
    feed: asyncio.Queue = asyncio.Queue()
    fake = await upstreams(feed=feed)  # reports its usage at the end: (13, 7)
    await add_channel(gateway, fake)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=300_000, unlimited=False)
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    await feed.put("Once ")
    got = b""
    while b"Once" not in got:  # the role chunk, then the first piece
        got += await resp.content.readline()
    own_redis.stop()  # AOF (fsync always): the reservation survives
    await feed.put("upon a time.")
    await feed.put(None)
    text = await resp.read()
    assert text.rstrip().endswith(b"[DONE]")  # the client got its whole answer
    own_redis.start()
    store = gateway.server.app[keys.STORE]

    async def settled() -> bool:
        return not await store.redis.exists(reservations_key(store, user.id))

    await eventually(settled, timeout=30)
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    quota = pricing.settle_quota(pricing.resolve_price("gpt-4"), 13, 7)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (13, 7, quota)  # billed, once
    assert await live_balance(gateway, user.id) == (await User.get(id=user.id)).quota == 1_000_000 - quota
    assert await live_balance(gateway, user.id, token.id) == (await Token.get(id=token.id)).remain_quota
