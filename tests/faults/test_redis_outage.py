# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Redis stopped, restarted, emptied under a running gateway (a Redis of the test's own): requests
are refused at once with 503 and Retry-After while it is down, and served again as soon as it is
back, without a restart and without a failed command on the pool's dead connections."""
from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from api.app import create_app
from api.services.store import Store
from tests.relay.fakes import add_channel, headers_for, make_key, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


async def test_a_redis_restart_fails_no_command_on_the_pools_dead_connections(own_redis) -> None:
    store = Store.from_url(own_redis.url, "t:")
    try:
        await asyncio.gather(*(store.redis.set(f"k{i}", i) for i in range(64)))  # 64 pooled connections
        own_redis.restart()
        for _ in range(50):
            values = await asyncio.gather(*(store.redis.get(f"k{i}") for i in range(32)))
            assert values == [str(i) for i in range(32)]  # AOF kept them; every dead connection replaced
    finally:
        await store.close()


@pytest.fixture
async def outage_gateway(aiohttp_client, settings, own_redis):
    return await aiohttp_client(create_app(replace(settings, redis_url=own_redis.url, streaming_timeout=1.0)))


async def test_redis_down_is_503_with_retry_after_then_served_again(outage_gateway, own_redis, upstreams) -> None:
    gateway = outage_gateway
    await add_channel(gateway, await upstreams())
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200
    own_redis.stop()
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    body = await resp.json()
    assert resp.status == 503 and resp.headers["Retry-After"] == "5", body
    assert body["error"]["code"] == "service_unavailable"
    resp = await gateway.post("/v1/messages", headers={"x-api-key": f"sk-{token.key}"},
                              json={"model": "gpt-4", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]})
    assert resp.status == 503 and (await resp.json())["type"] == "error"  # in the client's own shape
    resp = await gateway.get("/api/user/self")
    assert resp.status in (401, 503)  # the session store is Redis: refused, not a 500
    assert resp.status == 503 or (await resp.json())["success"] is False
    own_redis.start()
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200, await resp.text()
