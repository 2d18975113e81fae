"""The registered MCP servers as every API process and worker knows them: all rows in memory (there
are few), reloaded at once when an `mcp_server` event says one changed (api.services.events), and
at most RELOAD_EVERY seconds after the last load otherwise (a lost event costs that long at worst)."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.services.events import EventBus
from models import McpServer
from models.enums import ChannelStatus
from models.mcp_server import json_list, json_object

log = logging.getLogger(__name__)
RELOAD_EVERY = 60.0
EVENT = "mcp_server"


@dataclass(frozen=True, slots=True)
class OAuthClient:
    """OAuth 2.0 client credentials the gateway exchanges for an access token (RFC 6749 §4.4)."""

    token_url: str
    client_id: str
    client_secret: str
    scope: str


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One registered server, credentials included: never put one in an answer or a log line."""

    id: int
    name: str
    url: str
    transport: str
    headers: Mapping[str, str]
    oauth: OAuthClient | None
    groups: frozenset[str]
    tools: frozenset[str] | None  # None: every tool the server offers
    price: int
    timeout: float
    status: int

    @property
    def enabled(self) -> bool:
        return self.status == ChannelStatus.ENABLED

    @property
    def secrets(self) -> str:
        """Every secret the server's credential holds, one a line: what masking removes from its texts."""
        parts = [*self.headers.values()]
        if self.oauth is not None:
            parts.append(self.oauth.client_secret)
        return "\n".join(p for p in parts if p)

    def offers(self, tool: str) -> bool:
        """Whether the administrator's allow-list of the server lets its tool through."""
        return self.tools is None or tool in self.tools


def server_info(row: McpServer) -> ServerInfo:
    oauth = (OAuthClient(row.oauth_token_url, row.oauth_client_id, row.oauth_client_secret, row.oauth_scope)
             if row.oauth_token_url else None)
    tools = json_list(row.tools)
    return ServerInfo(row.id, row.name, row.url, row.transport, json_object(row.headers), oauth,
                      frozenset(json_list(row.groups)), frozenset(tools) if tools else None, int(row.price),
                      float(row.timeout_seconds), int(row.status))


class McpRegistry:
    """Every registered server by name, kept current by events."""

    def __init__(self) -> None:
        self._servers: dict[str, ServerInfo] = {}
        self._loaded_at = -RELOAD_EVERY
        self._generation = 0
        self._lock = asyncio.Lock()
        self.listeners: list[Any] = []  # callables told of each reload (the client drops what it cached)

    def subscribe(self, events: EventBus) -> None:
        events.subscribe(EVENT, self._on_event)
        events.subscribe("*reset", self._on_event)

    async def _on_event(self, message: Mapping[str, Any]) -> None:
        self._generation += 1
        await self.load()

    async def load(self) -> None:
        """Read every row (a load that raced a newer event is done again by that event's own load)."""
        async with self._lock:
            generation = self._generation
            rows = await McpServer.all()
            servers = {row.name: server_info(row) for row in rows}
            self._servers = servers
            self._loaded_at = time.monotonic()
        for listener in self.listeners:
            listener(servers, generation)

    async def fresh(self) -> dict[str, ServerInfo]:
        """The servers, reloaded first when the last load is older than RELOAD_EVERY."""
        if time.monotonic() - self._loaded_at > RELOAD_EVERY:
            try:
                await self.load()
            except Exception as exc:  # the database away: what is known serves meanwhile
                log.warning("MCP servers not reloaded: %r", exc)
        return self._servers

    def get(self, name: str) -> ServerInfo | None:
        return self._servers.get(name)

    def all(self) -> dict[str, ServerInfo]:
        return self._servers
