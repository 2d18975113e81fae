# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""PostgreSQL restarted under a running gateway (a server of the test's own): the relay keeps
serving from Redis, settlement records wait in Redis while the database is away and are applied
once it is back, and the console answers again, without a restart."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from api import keys
from api.app import create_app
from models.db import close_database, init_database
from models.settings import Settings
from tests.faults.ledger import Books, check_books, report
from tests.helpers import eventually
from tests.own_postgres import OwnPostgres
from tests.relay.fakes import add_channel, drain, headers_for, make_key, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
async def own_postgres() -> AsyncIterator[OwnPostgres]:
    directory = Path(tempfile.mkdtemp(prefix="gw-pg-"))  # outside pytest's private tmp: postgres reads it
    server = OwnPostgres(directory)
    server.init()
    yield server
    try:
        server.stop("immediate", check=False)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def test_postgres_restart_under_traffic(aiohttp_client, settings: Settings, own_postgres, upstreams) -> None:
    url = own_postgres.create_database("gateway")
    await init_database(url, generate_schemas=True)
    await close_database()
    gateway = await aiohttp_client(create_app(replace(settings, database_url=url)))
    store = gateway.server.app[keys.STORE]
    await add_channel(gateway, await upstreams())
    users = [await rich_user(f"user{i}", quota=1_000_000) for i in range(3)]
    tokens = [await make_key(u, remain_quota=400_000, unlimited=False) for u in users]
    books = Books(users, tokens)
    for token in tokens:  # keys and balances are in Redis from here on
        assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200
    await drain(gateway)
    unseen = await make_key(users[0])  # never used: not in any cache

    own_postgres.stop("immediate")  # a crash, not a clean stop
    statuses = []
    for token in tokens * 3:
        statuses.append((await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status)
    assert statuses == [200] * 9  # the relay serves from Redis while the database is away
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(unseen))
    assert resp.status == 503 and resp.headers["Retry-After"]  # a key it must look up: 503, not 500
    assert (await resp.json())["error"]["code"] == "service_unavailable"
    with pytest.raises(Exception):  # noqa: B017 - the worker's attempt fails: the records stay in Redis
        await drain(gateway)
    login = await gateway.post("/api/user/login", json={"username": "root", "password": "123456"})
    assert login.status == 503 and login.headers.get("Retry-After"), await login.text()  # never a 500

    own_postgres.start()

    async def logged_in() -> bool:  # once the breaker's probe (every second) has seen it back
        login = await gateway.post("/api/user/login", json={"username": "root", "password": "123456"})
        return login.status == 200 and (await login.json())["success"]

    await eventually(logged_in, timeout=20, interval=0.2)
    summary = await check_books(store, books)  # the records applied now, once
    assert summary.logs == 12
    report("PostgreSQL crashed (immediate stop) and restarted under traffic",
           "relay requests answered throughout (Redis); the console 503 while the database was away",
           "every request, once: the records waited in Redis and were applied when it came back", summary)
