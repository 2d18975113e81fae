"""One process's MCP side: the registry of servers, the client that speaks to them, and the tool
lists they gave (kept TOOLS_TTL seconds, dropped when the registry reloads) — what the `/mcp`
endpoint and MCP tools inside model requests share."""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from api.mcp.client import McpClient
from api.mcp.registry import McpRegistry, ServerInfo
from api.mcp.wire import METHOD_NOT_FOUND, McpError
from api.services.configuration.options import OptionsService
from api.services.events import EventBus

TOOLS_TTL = 30.0
LISTINGS: dict[str, Callable[[McpClient, ServerInfo], Awaitable[list[dict[str, Any]]]]] = {
    "tools": McpClient.list_tools, "resources": McpClient.list_resources,
    "resource_templates": McpClient.list_resource_templates, "prompts": McpClient.list_prompts,
}


class McpHub:
    def __init__(self, options: OptionsService, client: McpClient | None = None) -> None:
        self.registry = McpRegistry()
        self.client = client or McpClient(options)
        self._tools: dict[tuple[int, str], tuple[float, ServerInfo, list[dict[str, Any]]]] = {}
        self.registry.listeners.append(self._reloaded)

    async def start(self, events: EventBus) -> None:
        self.registry.subscribe(events)
        await self.registry.load()

    def _reloaded(self, servers: Mapping[str, ServerInfo], generation: int) -> None:
        self._tools.clear()
        self.client.forget(servers, generation)

    async def tools(self, server: ServerInfo) -> list[dict[str, Any]]:
        """The tools `server` lists (cached TOOLS_TTL seconds), its allow-list not applied."""
        return await self.listing(server, "tools")

    async def listing(self, server: ServerInfo, kind: str) -> list[dict[str, Any]]:
        """What `server` lists of `kind` (one of LISTINGS), cached TOOLS_TTL seconds. A server that
        does not offer that kind at all (method not found) lists nothing."""
        hit = self._tools.get((server.id, kind))
        if hit is not None and hit[0] > time.monotonic() and hit[1] == server:
            return hit[2]
        try:
            items = await LISTINGS[kind](self.client, server)
        except McpError as exc:
            if exc.kind != "rpc" or exc.code != METHOD_NOT_FOUND:
                raise
            items = []
        self._tools[(server.id, kind)] = (time.monotonic() + TOOLS_TTL, server, items)
        return items

    async def close(self) -> None:
        await self.client.close()
