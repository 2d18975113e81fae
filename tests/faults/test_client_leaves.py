# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A client that leaves a non-streamed request (a real API process: production does not cancel
handlers of clients that left): the upstream request is cancelled and the reservation returned."""
from __future__ import annotations

import asyncio
import contextlib

import aiohttp

from api.services.billing.balances import user_quota_key
from api.services.store import Store
from api.upstream.catalogue import ChannelType
from models import Channel, Log, User
from models.enums import LogType
from tests.helpers import eventually
from tests.relay.fakes import make_key, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


async def test_a_client_leaving_a_non_streamed_request_cancels_upstream_and_is_refunded(
        client, settings, api_process, upstreams) -> None:
    fake = await upstreams(gate=asyncio.Event())
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=100_000, unlimited=False)
    _, url = await api_process()
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    try:
        async with aiohttp.ClientSession() as http:
            call = asyncio.ensure_future(http.post(f"{url}/v1/chat/completions", json=BODY,
                                                   headers={"Authorization": f"Bearer sk-{token.key}"}))
            await eventually(lambda: asyncio.sleep(0, fake.waiting == 1), timeout=20)
            assert int(await store.redis.get(user_quota_key(store, user.id))) < 1_000_000  # reserved
            call.cancel()  # the client goes away: its connection closes
            with contextlib.suppress(asyncio.CancelledError):
                await call

        async def upstream_cancelled() -> bool:
            request = fake.last_request
            return request is not None and (request.transport is None or request.transport.is_closing())

        await eventually(upstream_cancelled, timeout=10)

        async def refunded() -> bool:
            return int(await store.redis.get(user_quota_key(store, user.id))) == 1_000_000

        await eventually(refunded, timeout=10)
        assert fake.gate is not None
        fake.gate.set()
        assert not await Log.filter(user_id=user.id, type=LogType.CONSUME).exists()
        assert (await User.get(id=user.id)).quota == 1_000_000
    finally:
        await store.close()
