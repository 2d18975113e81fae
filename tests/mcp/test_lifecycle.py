"""A call cancelled by its client is cancelled on the server and refunded; servers that stop
answering are marked down and come back; a second API process sees a server removed at once."""
from __future__ import annotations

import asyncio

import pytest
from mcp.shared.exceptions import MCPError

from api import keys
from api.mcp import health
from api.relay.state import RELAY
from api.services.billing.balances import user_quota_key
from models import McpServer
from models.enums import ChannelStatus
from tests.helpers import eventually, free_port, start_api_process
from tests.mcp.conftest import allow_private, funded_user, gateway_url, make_key, mcp_client, register

PRICE = 500


async def test_a_cancelled_call_is_cancelled_on_the_server_and_refunded(client, root, fake) -> None:
    url, state = fake
    await allow_private(root)
    await register(root, url, price=PRICE)
    user = await funded_user(quota=10_000)
    key = await make_key(user)
    app = client.server.app
    store = app[keys.STORE]
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        call = asyncio.ensure_future(session.call_tool("fake__slow", {}))
        await state.slow_started.wait()
        assert int(await store.redis.get(user_quota_key(store, user.id))) == 10_000 - PRICE  # reserved
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(state.slow_cancelled.wait(), 30)

        async def refunded() -> bool:
            return int(await store.redis.get(user_quota_key(store, user.id))) == 10_000

        await eventually(refunded)
        assert (await session.call_tool("fake__echo", {"text": "after"})).content[0].text == "after"
    metrics = app[RELAY].metrics.mcp_calls
    assert metrics[(("server", "fake"), ("status", "cancelled"))] == 1
    assert metrics[(("server", "fake"), ("status", "ok"))] == 1


async def test_a_server_that_stops_answering_is_marked_down_then_up(client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    for option in ("AutomaticDisableChannelEnabled", "AutomaticEnableChannelEnabled"):
        assert (await root.put("/api/option/", {"key": option, "value": "true"}))["success"]
    created = await register(root, url)
    app = client.server.app
    options, events = app[keys.OPTIONS], app[keys.EVENTS]
    await McpServer.filter(id=created["id"]).update(url=f"http://127.0.0.1:{free_port()}/mcp")
    summary = await health.check_all(options, events)
    assert summary.disabled == ["fake"]
    row = await McpServer.get(id=created["id"])
    assert row.status == ChannelStatus.AUTO_DISABLED and "unreachable" in row.status_reason
    key = await make_key(await funded_user())

    async def registry_knows(status: int) -> bool:
        server = app[RELAY].mcp.registry.get("fake")
        return server is not None and server.status == status

    await eventually(lambda: registry_knows(int(ChannelStatus.AUTO_DISABLED)))
    async with mcp_client(gateway_url(client, "/mcp/fake"), key.key) as session:
        with pytest.raises(MCPError) as down:
            await session.initialize()
    assert down.value.error.data["reason"] == "server_unavailable"
    await McpServer.filter(id=created["id"]).update(url=url)
    summary = await health.check_all(options, events)
    assert summary.enabled == ["fake"]
    row = await McpServer.get(id=created["id"])
    assert (row.status, row.status_reason, row.tool_count) == (ChannelStatus.ENABLED, "", 5)


async def test_a_second_api_process_drops_a_deleted_server_at_once(client, root, fake, settings, spawn) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url)
    other = await register(root, url, name="other")
    key = await make_key(await funded_user())
    base = await start_api_process(spawn, settings)
    async with mcp_client(base + "/mcp", key.key) as session:
        await session.initialize()

        async def names() -> set[str]:
            return {t.name for t in (await session.list_tools()).tools}

        assert "other__echo" in await names()
        assert (await root.delete(f"/api/mcp/{other['id']}"))["success"]

        async def dropped() -> bool:
            return "other__echo" not in await names()

        await eventually(dropped, timeout=5)
        assert "fake__echo" in await names()
