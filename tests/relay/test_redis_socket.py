# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A Redis reached by its Unix socket (REDIS_URL=unix:///path?db=N, as the quick start's local Redis
is): the relay, its admission and settlement scripts and a worker process that applies the records,
all over the socket; and where api.launch puts the socket (a path too long for a socket's address
keeps the port)."""
from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from api import keys
from api.app import create_app
from api.launch import SOCKET_PATH_MAX, local_redis_url, redis_ready, redis_socket
from api.services.billing.settlement import pending_key
from api.services.store import FastPack
from models import Settlement, User
from tests.conftest import start_worker
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    headers_for,
    live_balance,
    make_key,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "Say hello."}]}


def test_the_socket_sits_in_the_redis_directory_when_its_path_fits() -> None:
    short = Path("/var/lib/gateway/redis")
    assert redis_socket(short) == short / "redis.sock"
    assert local_redis_url(6379, short / "redis.sock") == "unix:///var/lib/gateway/redis/redis.sock?db=0"
    deep = Path("/" + "d" * (SOCKET_PATH_MAX - len("/redis.sock")))
    assert len(str(deep / "redis.sock")) == SOCKET_PATH_MAX + 1
    assert redis_socket(deep) is None  # too long for a socket's address: the port, then
    assert local_redis_url(6379, None) == "redis://127.0.0.1:6379/0"


@pytest.mark.parametrize("own_redis", ["unix"], indirect=True)
async def test_a_request_is_admitted_settled_and_applied_over_the_socket(
        aiohttp_client, settings, own_redis, upstreams, spawn) -> None:
    """The API's store and a worker's on the socket (the workers' queues stay on the shared Redis,
    BROKER_URL: the test process's broker is that one)."""
    assert own_redis.url.startswith("unix://") and own_redis.socket.is_socket()
    assert redis_ready(own_redis.port, own_redis.socket)
    on_socket = replace(settings, redis_url=own_redis.url)
    gateway = await aiohttp_client(create_app(on_socket))
    store = gateway.server.app[keys.STORE]
    await add_channel(gateway, await upstreams())
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=1_000_000, unlimited=False)
    for _ in range(3):
        resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
        assert resp.status == 200, await resp.text()
    pool = store.redis.connection_pool
    assert pool._available_connections and all(isinstance(c, FastPack) for c in pool._available_connections)
    assert await store.redis.hlen(pending_key(store, user.id)) == 3  # settled into the socket's Redis

    await start_worker(spawn, on_socket)
    await asyncio.to_thread(_send, "billing.apply", [user.id])

    async def applied() -> bool:
        return await Settlement.filter(user_id=user.id).count() == 3 and not await store.redis.exists(
            pending_key(store, user.id))

    await eventually(applied, timeout=60)
    spent = sum(s.quota for s in await Settlement.filter(user_id=user.id))
    assert spent > 0
    row = await User.get(id=user.id)
    assert row.used_quota == spent and row.quota == 1_000_000 - spent
    assert await live_balance(gateway, user.id) == 1_000_000 - spent
    assert await live_balance(gateway, user.id, token.id) == 1_000_000 - spent


def _send(actor_name: str, *args: object) -> None:
    from workers.broker import send

    send(actor_name, *args)
