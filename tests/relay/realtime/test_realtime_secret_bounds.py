# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""What POST /v1/realtime/client_secrets may leave in Redis: a `session` of at most 16 KiB serialized and 64
levels deep (400 naming `session` past either, nothing stored), each creation counted against the key's rate
limit, and the live secrets per key and per user bounded — so the bytes a user's secrets hold are bounded
whatever number of keys they make and attempts they send; a secret's place is free again once it expires."""
from __future__ import annotations

import time
from typing import Any

import pytest

from api import keys
from api.relay.realtime import limits
from tests.relay.fakes import add_channel, gateway, make_key, rich_user  # noqa: F401
from tests.relay.realtime.realtime_kit import MODEL, realtime_fakes  # noqa: F401

ROUTE = "/v1/realtime/client_secrets"


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


async def create(gateway, token, session: dict[str, Any], **fields: Any) -> tuple[int, dict[str, Any]]:
    resp = await gateway.post(ROUTE, json={"session": {"type": "realtime", "model": MODEL, **session}, **fields},
                              headers={"Authorization": f"Bearer sk-{token.key}"})
    return resp.status, await resp.json()


async def redis_bytes(gateway) -> int:
    """The memory Redis gives every key of the test's prefix."""
    store = gateway.server.app[keys.STORE]
    total = 0
    async for key in store.redis.scan_iter(match=store.prefix + "*", count=1000):
        total += await store.redis.memory_usage(key) or 0
    return total


@pytest.mark.parametrize(("session", "problem"), [
    ({"instructions": "x" * 17_000}, "at most 16 KiB once serialized"),
    ({"tools": [nested(300)]}, "nested at most 64 levels deep"),  # past orjson's own depth limit: was a 500
    ({"tools": [nested(100)]}, "nested at most 64 levels deep"),
])
async def test_a_session_past_its_bounds_is_refused_naming_it(gateway, realtime_fakes, session, problem) -> None:
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    token = await make_key(await rich_user())
    before = await redis_bytes(gateway)
    status, body = await create(gateway, token, session)
    assert status == 400, body
    assert body["error"]["param"] == "session" and problem in body["error"]["message"], body
    store = gateway.server.app[keys.STORE]
    assert [k async for k in store.redis.scan_iter(match=store.prefix + "rtsecret:*")] == []
    assert await redis_bytes(gateway) - before < 2048  # nothing stored (the balance loaded: a few keys)
    big = await gateway.post(ROUTE, data=b'{"session": {"instructions": "' + b"x" * 70_000 + b'"}}',
                             headers={"Authorization": f"Bearer sk-{token.key}", "Content-Type": "application/json"})
    assert big.status == 413  # a body past 64 KiB is not read whole


async def test_redis_growth_is_bounded_per_key_and_per_user(gateway, realtime_fakes, monkeypatch) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("RealtimeMaxSecretsPerKey", "3")
    await options.update("RealtimeMaxSecretsPerUser", "5")
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    tokens = [await make_key(user) for _ in range(4)]
    other = await make_key(await rich_user("bob"))
    session = {"instructions": "y" * 15_000}  # just under the bound
    await create(gateway, other, session)  # the balances and windows of both users loaded first
    before = await redis_bytes(gateway)
    made, codes = 0, set()
    for token in tokens:  # 40 attempts of ~15 KB on four keys of one user
        for _ in range(8):
            status, body = await create(gateway, token, session, expires_after={"seconds": 7200})
            if status == 200:
                made += 1
            else:
                assert status == 429, body
                codes.add((body["error"]["code"], body["error"]["type"]))
                assert "live Realtime client secrets" in body["error"]["message"]
        for _ in range(4):  # and oversized ones, refused before anything is stored
            assert (await create(gateway, token, {"instructions": "z" * 20_000}))[0] == 400
    grown = await redis_bytes(gateway) - before
    print(f"Redis grew by {grown:,} bytes for {made} secrets after {len(tokens) * 12} attempts")
    assert made == 5 and codes == {("too_many_client_secrets", "rate_limit_error")}
    assert grown <= 5 * (16 * 1024 + 1024) + 8192
    assert (await create(gateway, other, session))[0] == 200  # another user has their own places
    # once the secrets have expired, their places are free again
    later = time.time() + 7201

    class Later:
        @staticmethod
        def time() -> float:
            return later

    monkeypatch.setattr(limits, "time", Later)
    assert (await create(gateway, tokens[0], session))[0] == 200


async def test_each_creation_counts_against_the_key_rate_limit(gateway, realtime_fakes) -> None:
    await gateway.server.app[keys.OPTIONS].update("RateLimitTokenRPM", "2")
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    assert [(await create(gateway, token, {}))[0] for _ in range(2)] == [200, 200]
    status, body = await create(gateway, token, {})
    assert status == 429 and body["error"]["code"] == "rate_limit_exceeded", body
    assert (await create(gateway, await make_key(user), {}))[0] == 200  # the limit is the key's
    spent = await rich_user("carol", quota=0)
    status, body = await create(gateway, await make_key(spent), {})
    assert status == 403 and body["error"]["code"] == "insufficient_user_quota"  # as a session would be
