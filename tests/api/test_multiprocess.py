"""Consistency across API processes: changes are pushed by pub/sub, not picked up by a timed sync."""
from __future__ import annotations

import time

import aiohttp

from tests.helpers import ApiClient, start_api_process


async def test_option_change_reaches_a_second_process_within_a_second(root: ApiClient, settings, spawn) -> None:
    base = await start_api_process(spawn, settings)
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/api/status") as resp:
            assert (await resp.json())["data"]["system_name"] == "AI Gateway"
        assert (await root.put("/api/option/", {"key": "SystemName", "value": "Pushed"}))["success"]
        changed_at = time.monotonic()
        while True:
            async with http.get(base + "/api/status") as resp:
                name = (await resp.json())["data"]["system_name"]
            elapsed = time.monotonic() - changed_at
            if name == "Pushed":
                break
            assert elapsed < 1.0, "the second process did not see the option within a second"
    assert elapsed < 1.0
