# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Once a process has seen its database gone, it answers at once (models.breaker).

PostgreSQL behind the suite's blackhole (connections accepted, nothing answered). The first request
that needs the database finds the outage out within the timeouts (DB_CONNECT_TIMEOUT to get a
connection, DB_STATEMENT_TIMEOUT + 1 s for an answer; 2 s each here, so a request that waited for
either could not pass for a fast one); every later one — console calls, relay requests whose key or
balance is not cached, /readyz — answers 503 with Retry-After without sending anything, well within
a second on any machine, while known keys are served from Redis. Once the blackhole lets
connections through again, a probe sees it within about a second and everything is served again.
"""
from __future__ import annotations

import time
from dataclasses import replace

import pytest

from api import keys
from api.app import create_app
from api.services.billing.balances import user_quota_key
from models.settings import CLIENT_GRACE, Settings
from tests.faults.blackhole import Blackhole
from tests.faults.test_database_blackhole import BODY, MARGIN, timed
from tests.helpers import ApiClient, eventually, make_user
from tests.relay.fakes import add_channel, headers_for, make_key, rich_user, upstreams  # noqa: F401

TIMEOUTS = {"DB_CONNECT_TIMEOUT": "2", "DB_STATEMENT_TIMEOUT": "2", "DB_TRANSACTION_TIMEOUT": "4"}
FIRST_BOUND = 2 + 2 + CLIENT_GRACE  # a connection, then a statement (the client's limit)
FAST = 1.0  # seconds: a request answered without a database call


@pytest.fixture
def settings(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name, value in TIMEOUTS.items():
        monkeypatch.setenv(name, value)
    return replace(settings, db_connect_timeout=2.0, db_statement_timeout=2.0, db_transaction_timeout=4.0)


@pytest.fixture
def proxy(postgres_database: str):
    hole = Blackhole.before(postgres_database)
    yield hole
    hole.stop()


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_blackholed_database_is_answered_at_once_once_seen_and_served_again_when_back(
        aiohttp_client, settings: Settings, proxy: Blackhole, upstreams) -> None:
    settings = replace(settings, database_url=proxy.url(settings.database_url))
    gateway = await aiohttp_client(create_app(settings))
    store = gateway.server.app[keys.STORE]
    await add_channel(gateway, await upstreams())
    alice = ApiClient(gateway)
    await make_user("alice")
    await alice.login("alice", "password123")
    as_alice = {"New-Api-User": str(alice.user_id)}
    users = [await rich_user(f"user{i}", quota=1_000_000) for i in range(2)]
    known = [await make_key(u) for u in users]
    unseen = [await make_key(users[0]) for _ in range(3)]  # never used: in no cache
    for token in known:
        assert (await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))).status == 200

    proxy.swallow()
    first = await timed(gateway.get("/api/user/self", headers=as_alice))
    assert first[1] == 503 and first[3].get("Retry-After"), first
    assert first[0] <= FIRST_BOUND + MARGIN, first

    await store.redis.delete(user_quota_key(store, users[1].id))  # a known key whose balance must be reloaded
    calls = [
        ("GET /api/user/self", lambda: gateway.get("/api/user/self", headers=as_alice)),
        ("GET /api/token/", lambda: gateway.get("/api/token/?p=0", headers=as_alice)),
        ("PUT /api/user/self", lambda: gateway.put("/api/user/self", json={"display_name": "A"}, headers=as_alice)),
        ("POST /api/user/login", lambda: gateway.post("/api/user/login", json={"username": "alice",
                                                                              "password": "password123"})),
        *((f"relay, uncached key #{i}", lambda t=t: gateway.post("/v1/chat/completions", json=BODY,
                                                                  headers=headers_for(t)))
          for i, t in enumerate(unseen)),
        ("relay, balance not cached", lambda: gateway.post("/v1/chat/completions", json=BODY,
                                                           headers=headers_for(known[1]))),
    ]
    figures = []
    for name, call in calls:  # one at a time: each is measured alone
        seconds, status, body, headers = await timed(call())
        figures.append(f"{name} {seconds * 1000:.0f} ms")
        assert status == 503 and headers.get("Retry-After") == "5", (name, status, body)
        if name.startswith("relay"):
            assert body["error"]["code"] == "service_unavailable", body
        else:
            assert body["success"] is False and body["data"] is None, body
        assert seconds < FAST, (name, seconds)
    seconds, status, body, _ = await timed(gateway.get("/readyz"))
    figures.append(f"/readyz {seconds * 1000:.0f} ms")
    assert status == 503 and body["checks"]["database"].startswith("error") and seconds < FAST, (seconds, body)
    served = await timed(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(known[0])))
    assert served[1] == 200, served  # its key and balance are in Redis: no database needed

    proxy.open()
    lifted = time.monotonic()

    async def back() -> bool:
        return (await gateway.get("/api/user/self", headers=as_alice)).status == 200

    await eventually(back, timeout=20, interval=0.1)
    recovered = time.monotonic() - lifted
    relayed = await timed(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(unseen[0])))
    assert relayed[1] == 200, relayed
    print(f"\nblackholed database: first request 503 after {first[0]:.2f} s (timeouts {TIMEOUTS}); then "
          + ", ".join(figures) + f"; served again {recovered:.2f} s after the blackhole was lifted")
