"""Consistency across API processes: changes are pushed by pub/sub, not picked up by a timed sync.

The second process is waited for generously (a loaded machine may take seconds to pass a message
on): that the change reaches it is the property, not how fast. Nothing but the `option` event could
bring it there: a process reads the options once at start and then only on events."""
from __future__ import annotations

import aiohttp

from tests.helpers import ApiClient, eventually, start_api_process


async def test_an_option_change_reaches_a_second_process(root: ApiClient, settings, spawn) -> None:
    base = await start_api_process(spawn, settings)
    async with aiohttp.ClientSession() as http:
        async def system_name() -> str:
            async with http.get(base + "/api/status") as resp:
                return str((await resp.json())["data"]["system_name"])

        assert await system_name() == "AI Gateway"
        assert (await root.put("/api/option/", {"key": "SystemName", "value": "Pushed"}))["success"]

        async def pushed() -> bool:
            return await system_name() == "Pushed"

        await eventually(pushed, timeout=30, interval=0.05)  # bounds a lost event, not a speed
