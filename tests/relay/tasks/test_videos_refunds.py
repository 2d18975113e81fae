# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Failed videos refunded once, to user and key: two pollers at the same time, and a real worker
killed (SIGKILL) in the middle of its poll, whose lease then expires."""
from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from api import keys
from api.relay.tasks.poll import VIDEO, poll
from api.upstream.catalogue import ChannelType
from models import Log, Task, Token, User
from models.enums import LogType
from tests.helpers import both_databases
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.upstream.providers.fake_videos import OPENAI_KEY, FakeOpenAIVideos
from tests.upstream.providers.kit import sdk
from tests.upstream.providers.openai.test_videos import MODEL, priced

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")


@pytest.fixture
async def upstream(aiohttp_server) -> FakeOpenAIVideos:
    fake = FakeOpenAIVideos()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def submitted(gateway, upstream: FakeOpenAIVideos, n: int) -> list:
    await priced(gateway)
    await add_channel(gateway, upstream, models=MODEL, type=int(ChannelType.OPENAI), key=OPENAI_KEY)
    pairs = []
    for i in range(n):
        user = await rich_user(f"user{i}", quota=1_000_000)
        key = await make_key(user, remain_quota=300_000, unlimited=False)
        async with sdk(gateway, key) as client:
            await client.videos.create(prompt="a fox", model=MODEL, seconds="8")
        pairs.append((user, key))
    return pairs


async def books_are_back(gateway, user, key) -> None:
    assert await live_balance(gateway, user.id) == 1_000_000
    assert await live_balance(gateway, user.id, key.id) == 300_000
    await drain(gateway)
    fresh, token = await User.get(id=user.id), await Token.get(id=key.id)
    assert (fresh.quota, fresh.used_quota) == (1_000_000, 0)
    assert (token.remain_quota, token.used_quota) == (300_000, 0)


@both_databases
async def test_two_pollers_refund_each_failed_video_once(gateway, upstream) -> None:
    pairs = await submitted(gateway, upstream, 4)
    for video_id in upstream.videos:
        upstream.fail(video_id)
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    first, second = await asyncio.gather(poll(VIDEO, store, http, limit=3), poll(VIDEO, store, http, limit=3))
    assert first.claimed + second.claimed == 4
    assert sorted(first.refunded + second.refunded) == [r.id for r in await Task.all().order_by("id")]
    assert (await poll(VIDEO, store, http)).claimed == 0
    for user, key in pairs:
        await books_are_back(gateway, user, key)
    assert await Log.filter(type=LogType.SYSTEM).count() == 4


async def test_a_worker_killed_mid_poll_leaves_a_lease_that_expires(gateway, upstream, worker) -> None:
    [(user, key)] = await submitted(gateway, upstream, 1)
    [video_id] = upstream.videos
    upstream.fail(video_id)
    upstream.fetch_gate = asyncio.Event()  # the worker's fetch is held until it has been killed
    from workers.broker import send

    await asyncio.to_thread(send, "tasks.poll_video", time.time(), "test")
    await asyncio.wait_for(upstream.fetch_started.wait(), 30)
    os.killpg(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait()
    upstream.fetch_gate.set()
    row = await Task.get(platform="video")
    assert row.lease_owner and row.progress == "0%"  # claimed, never released
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    assert (await poll(VIDEO, store, http)).claimed == 0
    result = await poll(VIDEO, store, http, now=row.lease_until + 1)
    assert result.refunded == [row.id]
    assert (await poll(VIDEO, store, http, now=row.lease_until + 2)).claimed == 0
    await books_are_back(gateway, user, key)
