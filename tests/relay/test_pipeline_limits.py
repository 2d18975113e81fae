# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Limits beyond new-api (RPM, TPM, concurrency per key, user and group), automatic
disabling, and the steady-state budget: no SQL, at most two Redis round trips per request."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars

import orjson
import pytest
from tortoise import Tortoise

from api import keys
from api.services import store as store_module
from models import Channel
from models.enums import ChannelStatus
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    gateway,
    headers_for,
    live_balance,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


async def status_of(gateway, token, body=BODY) -> tuple[int, dict]:
    resp = await gateway.post("/v1/chat/completions", json=body, headers=headers_for(token))
    raw = await resp.read()
    return resp.status, (orjson.loads(raw) if raw.startswith(b"{") else {}) | {"_headers": dict(resp.headers)}


async def test_user_rpm_answers_429_with_retry_after_and_charges_nothing(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams())
    await set_option(gateway, "RateLimitUserRPM", "2")
    user = await rich_user()
    first, second = await make_key(user), await make_key(user)
    assert (await status_of(gateway, first))[0] == 200
    assert (await status_of(gateway, second))[0] == 200
    balance = await live_balance(gateway, user.id)
    status, body = await status_of(gateway, first)
    assert status == 429 and body["error"]["code"] == "rate_limit_exceeded"
    assert body["error"]["type"] == "rate_limit_error" and "user_rpm" in body["error"]["message"]
    assert 1 <= int(body["_headers"]["Retry-After"]) <= 60
    assert await live_balance(gateway, user.id) == balance


async def test_key_concurrency_and_tpm(gateway, upstreams) -> None:
    gate = asyncio.Event()
    fake = await upstreams(gate=gate, usage=(30, 30))
    await add_channel(gateway, fake)
    await set_option(gateway, "RateLimitTokenConcurrency", "1")
    await set_option(gateway, "RateLimitTokenTPM", "50")
    user = await rich_user()
    token, other = await make_key(user), await make_key(user)
    held = asyncio.ensure_future(status_of(gateway, token))
    await eventually(lambda: asyncio.sleep(0, fake.waiting == 1))
    status, body = await status_of(gateway, token)
    assert status == 429 and "key_concurrency" in body["error"]["message"] and body["_headers"]["Retry-After"] == "1"
    gate.set()
    assert (await held)[0] == 200
    # The slot is free again, but the key used 60 tokens this minute (limit 50); another key is fine.
    status, body = await status_of(gateway, token)
    assert status == 429 and "key_tpm" in body["error"]["message"]
    assert (await status_of(gateway, other))[0] == 200


async def test_group_rpm_is_shared_by_the_users_of_a_group(gateway, upstreams) -> None:
    await add_channel(gateway, await upstreams())
    await set_option(gateway, "RateLimitGroupRPM", "2")
    a, b = await rich_user("a"), await rich_user("b")
    vip = await rich_user("c", group="vip")
    assert (await status_of(gateway, await make_key(a)))[0] == 200
    assert (await status_of(gateway, await make_key(b)))[0] == 200
    status, body = await status_of(gateway, await make_key(a))
    assert status == 429 and "group_rpm" in body["error"]["message"]
    await add_channel(gateway, await upstreams(), group="vip")
    assert (await status_of(gateway, await make_key(vip)))[0] == 200


async def test_credential_error_disables_at_once_and_the_worker_records_it(gateway, upstreams, worker) -> None:
    bad = await upstreams(fail_status=401, fail_body={"error": {"message": "Incorrect API key provided",
                                                                "type": "invalid_request_error",
                                                                "code": "invalid_api_key"}})
    good = await upstreams()
    broken = await add_channel(gateway, bad, priority=1)
    await add_channel(gateway, good, priority=0)
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    await set_option(gateway, "RetryTimes", "1")
    token = await make_key(await rich_user())
    assert (await status_of(gateway, token))[0] == 200
    assert relay_of(gateway).index.get(broken.id) is None  # this process stopped using it at once

    async def disabled() -> Channel | None:
        channel = await Channel.get(id=broken.id)
        return channel if channel.status == ChannelStatus.AUTO_DISABLED else None

    channel = await eventually(disabled, timeout=30)
    info = orjson.loads(channel.other_info)
    assert "Incorrect API key" in info["status_reason"] and info["status_time"] > 0
    assert (await status_of(gateway, token))[0] == 200 and len(bad.seen) == 1


async def test_error_rate_window_never_one_timeout(gateway, upstreams) -> None:
    slow = await upstreams(fail_status=504)
    channel = await add_channel(gateway, slow)
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    await set_option(gateway, "AutomaticDisableMinRequests", "4")
    await set_option(gateway, "AutomaticDisableErrorRate", "0.75")
    token = await make_key(await rich_user())
    index = relay_of(gateway).index
    for _ in range(3):
        assert (await status_of(gateway, token))[0] == 504
        assert index.get(channel.id) is not None  # one timeout (or three) never disables
    assert (await status_of(gateway, token))[0] == 504
    assert index.get(channel.id) is None  # 4 of 4 attempts failed in the window
    store = gateway.server.app[keys.STORE]
    queued = f"{store.prefix}dramatiq:relay"

    async def disable_queued() -> bool:  # relay.disable_channel, sent off the request path
        return await store.redis.llen(queued) == 1

    await eventually(disable_queued, timeout=10)
    status, body = await status_of(gateway, token)
    assert status == 503 and body["error"]["code"] == "no_available_channel"


LEAN = contextvars.ContextVar("lean", default=False)  # inside store.call_on


class Counter:
    """Counts SQL statements on the default connection and Redis round trips of the app's client."""

    def __init__(self, monkeypatch, store) -> None:
        self.sql = 0
        self.redis = 0
        conn = Tortoise.get_connection("default")
        for name in ("execute_insert", "execute_many", "execute_query", "execute_query_dict", "execute_script"):
            original = getattr(conn, name)
            monkeypatch.setattr(conn, name, self._wrap_sql(original))
        monkeypatch.setattr(store.redis, "execute_command", self._wrap_redis(store.redis.execute_command))
        # Scripts and lean commands go through store.call_on on a pooled connection (its fallback to
        # execute_command is the same round trip, counted once).
        lean = store_module.call_on

        async def counted_call_on(redis, args):
            self.redis += 1
            inside = LEAN.set(True)
            try:
                return await lean(redis, args)
            finally:
                LEAN.reset(inside)

        monkeypatch.setattr(store_module, "call_on", counted_call_on)
        pipeline = store.redis.pipeline

        def counted_pipeline(*args, **kwargs):
            pipe = pipeline(*args, **kwargs)
            monkeypatch.setattr(pipe, "execute", self._wrap_redis(pipe.execute))
            return pipe

        monkeypatch.setattr(store.redis, "pipeline", counted_pipeline)

    def _wrap_sql(self, original):
        async def wrapper(*args, **kwargs):
            self.sql += 1
            return await original(*args, **kwargs)
        return wrapper

    def _wrap_redis(self, original):
        async def wrapper(*args, **kwargs):
            self.redis += 0 if LEAN.get() else 1
            return await original(*args, **kwargs)
        return wrapper


@pytest.mark.parametrize("stream", [False, True])
async def test_steady_state_makes_no_sql_and_two_redis_round_trips(gateway, upstreams, monkeypatch, stream) -> None:
    await add_channel(gateway, await upstreams())
    await set_option(gateway, "RateLimitUserRPM", "1000")
    await set_option(gateway, "RateLimitTokenConcurrency", "100")
    token = await make_key(await rich_user(), remain_quota=10_000_000, unlimited=False)
    body = {**BODY, "stream": stream}
    assert (await status_of(gateway, token, body))[0] == 200  # warm-up: key, user and balances loaded
    # The in-flight sync (api/relay/load.py) calls Redis once a second whatever the traffic: not counted.
    await relay_of(gateway).load.close()
    counter = Counter(monkeypatch, gateway.server.app[keys.STORE])
    for _ in range(5):
        assert (await status_of(gateway, token, body))[0] == 200
    assert counter.sql == 0
    assert counter.redis == 2 * 5
    with contextlib.suppress(AttributeError):
        monkeypatch.undo()
