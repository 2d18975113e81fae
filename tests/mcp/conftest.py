"""Fixtures of the MCP gateway's tests: the strict fake MCP servers, a server registered through the
admin API, keys, and the official SDK's client pointed at the gateway's /mcp."""
from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from models import Token, User
from tests.helpers import ApiClient, make_user
from tests.mcp.fake_server import CREDENTIAL, serve


@pytest.fixture
async def fake() -> AsyncIterator[tuple[str, Any]]:
    async with serve("streamable_http") as running:
        yield running


@pytest.fixture
async def fake_sse() -> AsyncIterator[tuple[str, Any]]:
    async with serve("sse") as running:
        yield running


async def allow_private(root: ApiClient) -> None:
    """The fakes listen on loopback: the URL policy must allow it (MediaFetchPrivateEnabled)."""
    body = await root.put("/api/option/", {"key": "MediaFetchPrivateEnabled", "value": "true"})
    assert body["success"], body


async def register(root: ApiClient, url: str, name: str = "fake", **fields: Any) -> dict[str, Any]:
    payload = {"name": name, "url": url, "headers": {CREDENTIAL[0]: CREDENTIAL[1]}, "groups": ["default"],
               "tools": [], "price": 0, **fields}
    body = await root.post("/api/mcp/", payload)
    assert body["success"], body
    return body["data"]  # type: ignore[no-any-return]


async def make_key(user: User, *, quota: int = 0, unlimited: bool = True, mcp_tools: str = "",
                   group: str = "") -> Token:
    return await Token.create(user_id=user.id, key=f"mcpkey{user.id:04d}{len(mcp_tools):04d}{group or 'x'}"
                              .ljust(48, "k")[:48], remain_quota=quota, unlimited_quota=unlimited,
                              mcp_tools=mcp_tools, group=group, name="mcp-key")


async def funded_user(name: str = "alice", quota: int = 1_000_000) -> User:
    return await make_user(name, quota=quota)


def gateway_url(client: Any, path: str = "/mcp") -> str:
    return str(client.make_url(path))


@contextlib.asynccontextmanager
async def mcp_client(url: str, key: str, **headers: str) -> AsyncIterator[ClientSession]:
    """The official SDK's client (Streamable HTTP) with `key`, initialized."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer sk-{key}", **headers}) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        yield session
