"""MCP tool calls are billed like tokens: the server's price reserved with the rate limits, charged
to user and key exactly when the server answered, refunded when it did not, one log row each; the
real worker writes them, on SQLite and PostgreSQL."""
from __future__ import annotations

import orjson
import pytest
from mcp.shared.exceptions import MCPError

from api.services.budgets.limits import normalise
from models import BudgetUsage, Log, Settlement, Token, User
from models.enums import LogType
from tests.helpers import both_databases, eventually
from tests.mcp.conftest import allow_private, funded_user, gateway_url, make_key, mcp_client, register

PRICE = 1234


@both_databases
async def test_a_priced_call_charges_the_price_once_and_a_failed_one_is_refunded(client, root, fake, worker) -> None:
    url, _ = fake
    await allow_private(root)
    await register(root, url, price=PRICE)
    user = await funded_user(quota=100_000)
    key = await make_key(user, quota=50_000, unlimited=False)
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        result = await session.call_tool("fake__echo", {"text": "hi"})
        assert result.content[0].text == "hi"
        failed = await session.call_tool("fake__broken", {})  # the tool's own error: refunded
        assert failed.is_error
        assert "upstream-secret-123456" not in failed.content[0].text  # the credential masked

    async def logged() -> list[Log]:
        rows = await Log.filter(user_id=user.id).order_by("id")
        return rows if len(rows) == 2 else []

    rows = await eventually(logged)
    consume = next(r for r in rows if r.type == LogType.CONSUME)
    error = next(r for r in rows if r.type == LogType.ERROR)
    assert (consume.model_name, consume.quota, consume.token_id) == ("fake__echo", PRICE, key.id)
    other = orjson.loads(consume.other)
    assert other["mcp"]["server"] == "fake" and other["mcp"]["tool"] == "echo" and other["mcp"]["status"] == "ok"
    assert other["mcp"]["price"] == PRICE and "arguments" not in other["mcp"]  # bodies off by default
    assert (error.model_name, error.quota) == ("fake__broken", 0)
    assert orjson.loads(error.other)["mcp"]["status"] == "tool_error"
    fresh, token = await User.get(id=user.id), await Token.get(id=key.id)
    assert (fresh.quota, fresh.used_quota) == (100_000 - PRICE, PRICE)
    assert (token.remain_quota, token.used_quota) == (50_000 - PRICE, PRICE)
    assert await Settlement.filter(user_id=user.id).count() == 1


@both_databases
async def test_a_call_the_server_fails_is_refunded_and_bodies_are_logged_masked_when_asked(
        client, root, fake, worker) -> None:
    url, _ = fake
    await allow_private(root)
    assert (await root.put("/api/option/", {"key": "McpLogBodiesEnabled", "value": "true"}))["success"]
    assert (await root.put("/api/option/", {"key": "McpMaxResultBytes", "value": "2048"}))["success"]
    await register(root, url, price=PRICE)
    user = await funded_user(quota=100_000)
    key = await make_key(user)
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        with pytest.raises(MCPError) as too_large:
            await session.call_tool("fake__big", {"size": 10_000})
        assert too_large.value.error.data["reason"] == "too_large"
        await session.call_tool("fake__echo", {"text": "sk-abcdefghijklmnop secret"})

    async def logged() -> list[Log]:
        rows = await Log.filter(user_id=user.id).order_by("id")
        return rows if len(rows) == 2 else []

    rows = await eventually(logged)
    error = next(r for r in rows if r.type == LogType.ERROR)
    consume = next(r for r in rows if r.type == LogType.CONSUME)
    assert orjson.loads(error.other)["mcp"]["status"] == "too_large"
    mcp = orjson.loads(consume.other)["mcp"]
    assert "sk-abcdefghijklmnop" not in mcp["arguments"] and "***" in mcp["arguments"]
    assert "result" in mcp
    assert (await User.get(id=user.id)).quota == 100_000 - PRICE


async def test_mcp_calls_count_against_the_keys_requests_per_minute(client, root, fake) -> None:
    url, _ = fake
    await allow_private(root)
    assert (await root.put("/api/option/", {"key": "RateLimitTokenRPM", "value": "2"}))["success"]
    await register(root, url)
    key = await make_key(await funded_user())
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        await session.call_tool("fake__echo", {"text": "1"})
        await session.call_tool("fake__echo", {"text": "2"})
        with pytest.raises(MCPError) as limited:
            await session.call_tool("fake__echo", {"text": "3"})
    assert limited.value.error.data["reason"] == "rate_limited"
    assert limited.value.error.data["retry_after"] >= 1


async def test_a_call_the_balance_cannot_cover_is_refused_before_it_is_sent(client, root, fake) -> None:
    url, state = fake
    await allow_private(root)
    await register(root, url, price=PRICE)
    key = await make_key(await funded_user(quota=PRICE - 1))
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("fake__echo", {"text": "x"})
    assert refused.value.error.data["reason"] == "user_insufficient"
    assert state.calls == []


@both_databases
async def test_mcp_calls_count_in_the_keys_limits_over_time(client, root, fake, worker) -> None:
    """A key's daily limit on the server's tools (`fake__*`) admits one call and refuses the next with
    budget_exceeded, naming the limit, before it is sent; the window's row holds exactly that call."""
    url, state = fake
    await allow_private(root)
    await register(root, url, price=PRICE)
    user = await funded_user(quota=100_000)
    key = await make_key(user, quota=50_000, unlimited=False)
    await Token.filter(id=key.id).update(limits=normalise([{"window": "day", "model": "fake__*", "requests": 1},
                                                           {"window": "day", "quota": 10 * PRICE}]))
    async with mcp_client(gateway_url(client), key.key) as session:
        await session.initialize()
        assert (await session.call_tool("fake__echo", {"text": "one"})).content[0].text == "one"
        with pytest.raises(MCPError) as refused:
            await session.call_tool("fake__echo", {"text": "two"})
    assert refused.value.error.data["reason"] == "budget_exceeded"
    assert refused.value.error.data["retry_after"] >= 1
    assert "requests" in refused.value.error.message and "fake__*" in refused.value.error.message
    assert len(state.calls) == 1  # the refused call never reached the server

    async def usage() -> list[BudgetUsage]:
        rows = await BudgetUsage.filter(user_id=user.id, owner_kind="key").order_by("identity")
        return rows if len(rows) == 2 else []

    rows = await eventually(usage)
    assert [(r.identity, r.quota, r.requests) for r in rows] == [("day", PRICE, 1), ("day@fake__*", PRICE, 1)]
    assert (await Token.get(id=key.id)).remain_quota == 50_000 - PRICE
