# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Once a process has seen its database gone, it answers at once (models.breaker).

PostgreSQL behind the suite's blackhole (connections accepted, nothing answered). The first request
that needs the database finds the outage out through the configured timeouts (DB_CONNECT_TIMEOUT to
get a connection, DB_STATEMENT_TIMEOUT + 1 s for an answer; 2 s each here): the process says a
TimeoutError ended its wait, and the breaker opens on it, once. Every later one — console calls,
relay requests whose key or balance is not cached, /readyz — answers 503 with Retry-After because
the breaker is open (DatabaseDown, raised before anything is sent: no wait on the database at all),
while known keys are served from Redis. Once the blackhole lets connections through again, a probe
sees it, the breaker closes and everything is served again.

Asserted by what the process says ended each wait, not by how long the requests took: a loaded
machine stretches every wait; the times are printed as figures.
"""
from __future__ import annotations

import time
from dataclasses import replace

import pytest
from tortoise import Tortoise

from api import keys
from api.app import create_app
from api.services.billing.balances import user_quota_key
from models.backends.postgres import breaker_of
from models.settings import CLIENT_GRACE, Settings
from tests.faults.blackhole import Blackhole
from tests.faults.causes import timed, watching
from tests.faults.test_database_blackhole import BODY
from tests.helpers import ApiClient, eventually, make_user
from tests.relay.fakes import add_channel, headers_for, make_key, rich_user, upstreams  # noqa: F401

TIMEOUTS = {"DB_CONNECT_TIMEOUT": "2", "DB_STATEMENT_TIMEOUT": "2", "DB_TRANSACTION_TIMEOUT": "4"}
SHORTEST = 2.0  # seconds: the shortest of the waits the first request can end on (connect, statement + grace)


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
    client = Tortoise.get_connection("default")
    breaker = breaker_of(client)
    # The waits the process applies are the configured ones (the pool's, and each statement's).
    assert client.acquire_timeout == 2.0 and client._template["timeout"] == 2.0
    assert client._template["command_timeout"] == 2.0 + CLIENT_GRACE

    with watching() as causes:
        proxy.swallow()
        first = await timed(gateway.get("/api/user/self", headers=as_alice))
        assert first.status == 503 and first.headers.get("Retry-After"), first
        # A timeout ended its wait (not a refusal, not the breaker): the database was never asked to refuse.
        assert "TimeoutError" in causes.of(first), (causes.of(first), first)
        assert first.seconds >= SHORTEST - 0.05, first  # it did wait for it (a slower machine only waits longer)
        assert causes.opened == ["TimeoutError"] and breaker.is_open, causes.opened

        await store.redis.delete(user_quota_key(store, users[1].id))  # a known key whose balance must be reloaded
        calls = [
            ("GET /api/user/self", lambda: gateway.get("/api/user/self", headers=as_alice)),
            ("GET /api/token/", lambda: gateway.get("/api/token/?p=0", headers=as_alice)),
            ("PUT /api/user/self", lambda: gateway.put("/api/user/self", json={"display_name": "A"},
                                                       headers=as_alice)),
            ("POST /api/user/login", lambda: gateway.post("/api/user/login", json={"username": "alice",
                                                                                  "password": "password123"})),
            *((f"relay, uncached key #{i}", lambda t=t: gateway.post("/v1/chat/completions", json=BODY,
                                                                      headers=headers_for(t)))
              for i, t in enumerate(unseen)),
            ("relay, balance not cached", lambda: gateway.post("/v1/chat/completions", json=BODY,
                                                               headers=headers_for(known[1]))),
        ]
        figures = []
        for name, call in calls:  # one at a time: each is measured alone (a figure, not a bound)
            answer = await timed(call())
            figures.append(f"{name} {answer.seconds * 1000:.0f} ms")
            assert answer.status == 503 and answer.headers.get("Retry-After") == "5", (name, answer)
            if name.startswith("relay"):
                assert answer.body["error"]["code"] == "service_unavailable", answer.body
            else:
                assert answer.body["success"] is False and answer.body["data"] is None, answer.body
            # Refused by the open breaker before anything was sent: no timeout of its own was waited for.
            assert causes.of(answer)[:1] == ["DatabaseDown"], (name, causes.of(answer))
        ready = await timed(gateway.get("/readyz"))
        figures.append(f"/readyz {ready.seconds * 1000:.0f} ms")
        assert ready.status == 503 and ready.body["checks"]["database"] == "error: DatabaseDown", ready.body
        assert causes.opened == ["TimeoutError"] and causes.closed == 0  # open the whole time, opened once
        served = await timed(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(known[0])))
        assert served.status == 200, served  # its key and balance are in Redis: no database needed

        proxy.open()
        lifted = time.monotonic()

        async def back() -> bool:
            return (await gateway.get("/api/user/self", headers=as_alice)).status == 200

        await eventually(back, timeout=60, interval=0.1)  # bounds a hang only: a probe closes the breaker
        recovered = time.monotonic() - lifted
        assert causes.closed == 1 and not breaker.is_open, (causes.opened, causes.closed)
        relayed = await timed(gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(unseen[0])))
        assert relayed.status == 200, relayed
        assert causes.opened == ["TimeoutError"]  # not opened again by anything the recovery did
    print(f"\nblackholed database: first request 503 after {first.seconds:.2f} s (timeouts {TIMEOUTS}); then "
          + ", ".join(figures) + f"; served again {recovered:.2f} s after the blackhole was lifted")
