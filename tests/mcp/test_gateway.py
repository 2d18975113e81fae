"""The MCP gateway end to end: the official SDK's client on /mcp, a strict fake server behind it."""
from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import allow_private, funded_user, gateway_url, make_key, mcp_client, register
from tests.mcp.fake_server import CREDENTIAL


async def test_tools_through_the_gateway_with_prefixed_names_and_progress(client, root, fake) -> None:
    url, state = fake
    await allow_private(root)
    await register(root, url)
    user = await funded_user()
    key = await make_key(user)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with mcp_client(gateway_url(client), key.key) as session:
        init = await session.initialize()
        assert init.server_info.name == "ai-gateway"
        tools = await session.list_tools()
        assert sorted(t.name for t in tools.tools) == ["fake__add", "fake__big", "fake__broken", "fake__echo",
                                                       "fake__slow"]
        result = await session.call_tool("fake__add", {"a": 2, "b": 40}, progress_callback=on_progress)
        assert not result.is_error
        assert result.content[0].text == "42"
        assert progress == [(50, 100, "half-way")]
    assert state.calls[0] == ("add", {"a": 2, "b": 40})
    # the gateway sent its credential, never the client's key
    assert all(h.get(CREDENTIAL[0]) == CREDENTIAL[1] for h in state.seen)
    assert not any(key.key in value for h in state.seen for value in h.values())


async def test_a_key_with_no_mcp_access_is_refused_at_initialize(client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url, groups=["vip"])
    key = await make_key(await funded_user())
    async with mcp_client(gateway_url(client), key.key) as session:
        with pytest.raises(MCPError) as refused:
            await session.initialize()
    assert refused.value.error.data["reason"] == "no_access"
    assert "may use no MCP server" in refused.value.error.message
