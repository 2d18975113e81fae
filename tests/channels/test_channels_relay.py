"""A channel created, edited, disabled or deleted through the console API is used, or no longer
used, by the relay of every API process (pub/sub invalidation, no timed sync).

The second process is waited for, generously (a loaded machine may take seconds to pass a message
on): how fast is not the property, that the change reaches it at all is. No timed path could bring
an edit, a disabling or a deletion there instead: its channel index is rebuilt on `channel` events
only (a request that finds no channel may reload it, which is how a created channel would still be
found if an event were lost)."""
from __future__ import annotations

import aiohttp
import pytest

from models import Token, User
from tests.fakes.upstreams import REQUESTS, upstream_app
from tests.helpers import ApiClient, eventually, start_api_process

TOKEN_KEY = "a" * 24 + "b" * 24
MODEL = "gpt-4o-mini"
SEEN_WITHIN = 30.0  # seconds: a hang guard, not a speed


@pytest.fixture
async def upstream(aiohttp_server):
    return await aiohttp_server(upstream_app())


async def relay(http: aiohttp.ClientSession, base: str) -> int:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    async with http.post(base + "/v1/chat/completions", json=body,
                         headers={"Authorization": f"Bearer sk-{TOKEN_KEY}"}) as resp:
        await resp.read()
        return resp.status


async def reaches_the_other_process(check, what: str) -> None:
    """Until the second process shows the change; a limit that only bounds a hang (a lost event)."""
    try:
        await eventually(check, timeout=SEEN_WITHIN, interval=0.05)
    except AssertionError:
        raise AssertionError(f"{what}: never seen by the second process") from None


async def test_channel_changes_reach_the_relay_of_every_process(root: ApiClient, settings, spawn, upstream) -> None:
    root_user = await User.get(username="root")
    await User.filter(id=root_user.id).update(quota=100_000_000)
    await Token.create(user_id=root_user.id, key=TOKEN_KEY, name="relay", unlimited_quota=True)
    base = await start_api_process(spawn, settings)
    seen = upstream.app[REQUESTS]

    def last_key() -> str | None:
        chats = [r for r in seen if r[1] == "v1/chat/completions"]
        return chats[-1][2].get("Authorization") if chats else None

    async with aiohttp.ClientSession() as http:
        assert await relay(http, base) == 503  # no channel yet
        # Created: used at once.
        created = await root.post("/api/channel/", {"name": "c", "type": 1, "key": "sk-first", "models": MODEL,
                                                    "group": "default", "base_url": str(upstream.make_url("/healthy"))})
        channel_id = created["data"][0]["id"]
        await reaches_the_other_process(lambda: _ok(http, base), "a created channel")
        assert last_key() == "Bearer sk-first"
        # Edited (a new key): the next request carries it.
        await root.put("/api/channel/", {"id": channel_id, "key": "sk-second"})

        async def new_key() -> bool:
            return await relay(http, base) == 200 and last_key() == "Bearer sk-second"

        await reaches_the_other_process(new_key, "an edited channel")
        # Disabled: no longer used.
        await root.put("/api/channel/", {"id": channel_id, "status": 2})
        await reaches_the_other_process(lambda: _unavailable(http, base), "a disabled channel")
        # Enabled again, then deleted: no longer used.
        await root.put("/api/channel/", {"id": channel_id, "status": 1})
        await reaches_the_other_process(lambda: _ok(http, base), "a re-enabled channel")
        await root.delete(f"/api/channel/{channel_id}/")
        await reaches_the_other_process(lambda: _unavailable(http, base), "a deleted channel")


async def _ok(http: aiohttp.ClientSession, base: str) -> bool:
    return await relay(http, base) == 200


async def _unavailable(http: aiohttp.ClientSession, base: str) -> bool:
    return await relay(http, base) == 503
