"""The MCP Inspector's CLI (`mcp-inspector --cli`, pinned in package-lock.json) on the gateway's /mcp
with a key as its bearer token, the strict fake MCP server of tests/mcp behind the gateway: it lists
the tools with their server prefix, calls one and prints its result, and prints the gateway's
refusal of a tool the key's allow-list leaves out; the priced call is charged to the unit."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from models import Token, User
from tests.clients import clis
from tests.helpers import ApiClient
from tests.mcp.conftest import allow_private, register
from tests.mcp.fake_server import CREDENTIAL, serve
from tests.relay.fakes import drain, live_balance, make_key, rich_user
from tests.upstream.providers.kit import consume_logs

PRICE = 1500


@pytest.fixture
async def fake_mcp(gateway: Any) -> Any:
    """The fake MCP server, registered through the admin API at PRICE a call."""
    async with serve() as (url, state):
        root = ApiClient(gateway)
        await root.login("root", "123456")
        await allow_private(root)
        await register(root, url, price=PRICE)
        yield state


def _json(run: clis.CliRun) -> Any:
    assert run.returncode == 0, run.explain()
    return json.loads(run.stdout[run.stdout.find("{"):])


async def test_lists_and_calls_prefixed_tools_and_is_charged(gateway, fake_mcp, tmp_path: Path) -> None:
    user = await rich_user()
    key = await make_key(user, remain_quota=100_000, unlimited=False)
    url = str(gateway.make_url("/mcp"))
    listed = _json(await clis.mcp_inspector(url, f"sk-{key.key}", tmp_path, "--method", "tools/list"))
    assert sorted(tool["name"] for tool in listed["tools"]) == ["fake__add", "fake__big", "fake__broken", "fake__echo",
                                                                "fake__slow"]
    called = await clis.mcp_inspector(url, f"sk-{key.key}", tmp_path, "--method", "tools/call", "--tool-name",
                                      "fake__echo", "--tool-arg", "text=hello from the inspector")
    result = _json(called)
    assert result["content"] == [{"type": "text", "text": "hello from the inspector"}], called.explain()
    assert fake_mcp.calls == [("echo", {"text": "hello from the inspector"})]
    assert not any(key.key in value for headers in fake_mcp.seen for value in headers.values())
    assert all(headers.get(CREDENTIAL[0]) == CREDENTIAL[1] for headers in fake_mcp.seen)

    await drain(gateway)
    [log] = await consume_logs(user)
    assert (log.model_name, log.quota) == ("fake__echo", PRICE)
    assert (await User.get(id=user.id)).quota == user.quota - PRICE
    assert await live_balance(gateway, user.id) == user.quota - PRICE
    assert (await Token.get(id=key.id)).remain_quota == 100_000 - PRICE
    assert await live_balance(gateway, user.id, key.id) == 100_000 - PRICE


async def test_a_tool_outside_the_keys_allow_list_is_refused(gateway, fake_mcp, tmp_path: Path) -> None:
    """The key's allow-list names one tool: the others are not listed, and the Inspector (which looks
    a tool up in the list before calling it) refuses one of them without a call reaching the server;
    a key whose allow-list names no registered server is refused by the gateway at initialize."""
    user = await rich_user()
    url = str(gateway.make_url("/mcp"))
    narrowed = await make_key(user, mcp_tools='["fake__echo"]')
    listed = _json(await clis.mcp_inspector(url, f"sk-{narrowed.key}", tmp_path, "--method", "tools/list"))
    assert [tool["name"] for tool in listed["tools"]] == ["fake__echo"]
    refused = await clis.mcp_inspector(url, f"sk-{narrowed.key}", tmp_path, "--method", "tools/call", "--tool-name",
                                       "fake__add", "--tool-arg", "a=1", "b=2")
    assert refused.returncode != 0, refused.explain()
    assert "Tool 'fake__add' not found on server" in refused.stderr, refused.explain()

    elsewhere = await make_key(user, mcp_tools='["docs"]')
    refused = await clis.mcp_inspector(url, f"sk-{elsewhere.key}", tmp_path, "--method", "tools/list")
    assert refused.returncode != 0, refused.explain()
    assert "This API key may use no MCP server" in refused.stdout + refused.stderr, refused.explain()
    assert fake_mcp.calls == []
    await drain(gateway)
    assert await consume_logs(user) == []
    assert (await User.get(id=user.id)).quota == user.quota
