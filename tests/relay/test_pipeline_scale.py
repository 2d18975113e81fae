# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Concurrency, several API processes, and the billing invariant (docs/billing.md, "Redis and the
database") after a randomized run with a worker killed mid-way."""
from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import sys
import time

import aiohttp
import orjson
import pytest
from tortoise.expressions import F

from api import keys
from api.services.billing import pricing
from api.services.billing.balances import adjust_token, adjust_user, token_quota_key, user_quota_key
from api.services.billing.settlement import users_with_pending
from api.services.passwords import sha256_hex
from api.upstream.tokenizer import count_chat_request
from models import Channel, Log, Token, User
from tests.conftest import process_env
from tests.helpers import both_databases, eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    drain,
    gateway,
    headers_for,
    live_balance,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

pytestmark = pytest.mark.slow


def chat(model: str = "gpt-4", stream: bool = False, max_tokens: int | None = None) -> dict:
    body: dict = {"model": model, "stream": stream, "messages": [{"role": "user", "content": "Count to three."}]}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


async def flat_model(gateway) -> None:
    """A model billed 1 quota per token, prompt and completion alike."""
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelRatio", orjson.dumps({**pricing.DEFAULT_MODEL_RATIO, "flat": 1}).decode())
    await options.update("CompletionRatio", orjson.dumps({**pricing.DEFAULT_COMPLETION_RATIO, "flat": 1}).decode())


@both_databases
async def test_fifty_parallel_requests_on_a_key_with_quota_for_ten(gateway, upstreams) -> None:
    await flat_model(gateway)
    body = chat("flat", max_tokens=50)
    prompt = count_chat_request(body)
    pre = prompt + 50
    gate = asyncio.Event()
    fake = await upstreams(usage=(prompt, 50), gate=gate)  # each answer costs exactly its pre-charge
    await add_channel(gateway, fake, models="flat")
    user = await rich_user(quota=10_000_000)
    token = await make_key(user, remain_quota=10 * pre, unlimited=False)

    async def one() -> int:
        resp = await gateway.post("/v1/chat/completions", json=body, headers=headers_for(token))
        await resp.read()
        return resp.status

    tasks = [asyncio.ensure_future(one()) for _ in range(50)]
    # Ten are admitted and held by the upstream; the forty others are refused meanwhile.
    await eventually(lambda: asyncio.sleep(0, fake.waiting == 10 and sum(t.done() for t in tasks) == 40), timeout=30)
    gate.set()
    statuses = await asyncio.gather(*tasks)
    assert statuses.count(200) == 10 and len(fake.seen) == 10
    assert set(statuses) - {200} <= {401, 403}
    assert await live_balance(gateway, user.id, token.id) == 0
    await drain(gateway)
    token = await Token.get(id=token.id)
    assert (token.remain_quota, token.used_quota) == (0, 10 * pre)
    assert (await User.get(id=user.id)).quota == 10_000_000 - 10 * pre


# -- a second API process -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_api(spawn, settings) -> str:
    port = free_port()
    proc = spawn([sys.executable, "-m", "api"], process_env(settings, PORT=str(port), HOST="127.0.0.1"), name="api2")
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as session:
        async def up() -> bool:
            if proc.proc.poll() is not None:
                raise AssertionError("second API process exited:\n" + proc.output())
            try:
                async with session.get(base + "/healthz") as resp:
                    return resp.status == 200
            except aiohttp.ClientError:
                return False

        await eventually(up, timeout=60, interval=0.2)
    return base


async def test_two_api_processes_share_limits_and_balances(gateway, upstreams, spawn, settings) -> None:
    await flat_model(gateway)
    body = chat("flat", max_tokens=20)
    prompt = count_chat_request(body)
    gate = asyncio.Event()
    fake = await upstreams(usage=(prompt, 20), gate=gate)
    await add_channel(gateway, fake, models="flat")
    await gateway.server.app[keys.OPTIONS].update("RateLimitUserConcurrency", "2")
    user = await rich_user()
    token = await make_key(user, remain_quota=3 * (prompt + 20), unlimited=False)
    other = await start_api(spawn, settings)
    async with aiohttp.ClientSession(headers=headers_for(token)) as session:
        async def call(base: str) -> int:
            async with session.post(base + "/v1/chat/completions", json=body) as resp:
                await resp.read()
                return resp.status

        here = str(gateway.make_url("")).rstrip("/")
        first = asyncio.ensure_future(call(here))
        second = asyncio.ensure_future(call(other))
        await eventually(lambda: asyncio.sleep(0, fake.waiting == 2), timeout=30)
        assert await call(other) == 429 and await call(here) == 429  # one limit for both processes
        gate.set()
        assert [await first, await second] == [200, 200]
        # Quota for one more request in all: whichever process takes it, the other is refused.
        assert sorted([await call(other), await call(here)]) == [200, 401]
    await drain(gateway)
    assert (await Token.get(id=token.id)).remain_quota == 0


async def test_console_changes_reach_another_process(gateway, upstreams, spawn, settings) -> None:
    fake = await upstreams()
    channel = await add_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    spare = await make_key(user)
    other = await start_api(spawn, settings)
    events = gateway.server.app[keys.EVENTS]
    async with aiohttp.ClientSession() as session:
        async def status(t: Token) -> int:
            async with session.post(other + "/v1/chat/completions", json=chat(), headers=headers_for(t)) as resp:
                await resp.read()
                return resp.status

        def becomes(t: Token, expected: int):
            async def check() -> bool:
                return await status(t) == expected
            return check

        assert await status(token) == 200 and await status(spare) == 200  # both cached in the other process
        await User.filter(id=user.id).update(status=2)
        await events.publish("user", id=user.id)
        await eventually(becomes(token, 403), timeout=30)
        await User.filter(id=user.id).update(status=1)
        await events.publish("user", id=user.id)
        await eventually(becomes(token, 200), timeout=30)

        await Token.filter(id=token.id).delete()
        await events.publish("token", id=token.id, key_hash=sha256_hex(token.key))
        await eventually(becomes(token, 401), timeout=30)

        await Channel.filter(id=channel.id).update(status=2)
        await events.publish("channel", id=channel.id)
        await eventually(becomes(spare, 503), timeout=30)


# -- the billing invariant ------------------------------------------------------------------------------


async def start_worker(spawn, settings, redis_sync, name: str):
    from workers.broker import send

    heartbeat = f"{settings.redis_prefix}heartbeat:worker"
    redis_sync.delete(heartbeat)
    proc = spawn([sys.executable, "-m", "dramatiq", "workers.actors", "--processes", "1", "--threads", "4"],
                 process_env(settings), name=name)

    async def beaten() -> bool:
        if proc.proc.poll() is not None:
            raise AssertionError("worker exited:\n" + proc.output())
        await asyncio.to_thread(send, "system.heartbeat", time.time())
        return redis_sync.exists(heartbeat) == 1

    await eventually(beaten, timeout=60, interval=0.3)
    return proc


async def test_billing_invariant_after_a_random_run_with_a_worker_killed(gateway, upstreams, worker, spawn,
                                                                         settings, redis_sync) -> None:
    rng = random.Random(20261122)
    app = gateway.server.app
    store = app[keys.STORE]
    good, silent, failing, cutting = (await upstreams(usage=(17, 23)), await upstreams(usage=None),
                                      await upstreams(fail_status=500), await upstreams(cut_after=4, usage=None))
    await add_channel(gateway, good, models="gpt-4")
    await add_channel(gateway, silent, models="gpt-4o")
    await add_channel(gateway, failing, models="gpt-3.5-turbo")
    await add_channel(gateway, cutting, models="gpt-4-turbo")
    users = [await rich_user(f"user{i}", quota=2_000_000) for i in range(3)]
    tokens = []
    for user in users:
        tokens.append(await make_key(user, remain_quota=600_000, unlimited=False))
        tokens.append(await make_key(user))
    owner = {t.id: next(u for u in users if u.id == t.user_id) for t in tokens}
    statuses: list[int] = []

    async def request() -> None:
        token = rng.choice(tokens)
        model = rng.choice(["gpt-4", "gpt-4", "gpt-4o", "gpt-3.5-turbo", "gpt-4-turbo"])
        body = chat(model, stream=rng.random() < 0.5, max_tokens=rng.choice([None, 64]))
        resp = await gateway.post("/v1/chat/completions", json=body, headers=headers_for(token))
        await resp.read()
        statuses.append(resp.status)

    async def operation(step: int) -> None:
        roll = rng.random()
        if roll < 0.7:
            await asyncio.gather(*(request() for _ in range(rng.randint(1, 4))))
        elif roll < 0.8:
            user = rng.choice(users)
            amount = rng.randint(1, 50_000)
            await User.filter(id=user.id).update(quota=F("quota") + amount)  # a top-up commits...
            await adjust_user(store, user.id, amount)  # ...then the live balance follows
        elif roll < 0.9:
            token = rng.choice([t for t in tokens if not t.unlimited_quota])
            amount = rng.randint(1, 20_000)
            await Token.filter(id=token.id).update(remain_quota=F("remain_quota") + amount)
            await adjust_token(store, token.user_id, token.id, amount)
        else:  # Redis lost a balance: it is reloaded from the database minus what is still pending
            user = rng.choice(users)
            await store.redis.delete(user_quota_key(store, user.id))

    for step in range(30):
        await operation(step)
    os.killpg(worker.proc.pid, signal.SIGKILL)  # mid-way: whatever it was applying is lost or half done
    worker.proc.wait()
    for step in range(30, 60):
        await operation(step)
    assert statuses.count(200) > 10 and 500 in statuses

    await start_worker(spawn, settings, redis_sync, "worker-restarted")
    from workers.broker import send

    async def drained() -> bool:
        if await users_with_pending(store):
            await asyncio.to_thread(send, "billing.sweep", time.time(), "test")
            return False
        return True

    await eventually(drained, timeout=60, interval=0.5)
    for user in users:
        row = await User.get(id=user.id)
        live = await store.redis.get(user_quota_key(store, user.id))
        if live is None:  # dropped by the last operations and not used since: load it as a request would
            await relay_of(gateway).quota.load_balances(user.id, None)
            live = await store.redis.get(user_quota_key(store, user.id))
        assert int(live) == row.quota, user.username
        logs = await Log.filter(user_id=user.id, type=2).all()
        assert row.used_quota == sum(log.quota for log in logs) and row.request_count == len(logs)
    for token in tokens:
        row = await Token.get(id=token.id)
        assert row.used_quota == sum(log.quota for log in await Log.filter(token_id=token.id, type=2).all())
        if not token.unlimited_quota:
            live = await store.redis.get(token_quota_key(store, owner[token.id].id, token.id))
            assert live is not None and int(live) == row.remain_quota
