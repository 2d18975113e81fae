"""The gateway as an MCP client of the registered servers: the one module that speaks to them, for
the `/mcp` endpoint, the console's test, the health monitor and MCP tools inside model requests.

    client = McpClient(options)                      # one per process; close() at the end
    tools = await client.list_tools(server)          # every page, as the server describes them
    result = await client.call_tool(server, "search", {"q": "x"}, on_progress=forward)
    text = await client.read_resource(server, "memo://notes")
    prompt = await client.get_prompt(server, "review", {"code": "…"})

`server` is an api.mcp.registry.ServerInfo. One session per server and process is opened on first
use (initialize, then notifications/initialized) and shared by every caller: the credential is the
gateway's, never a client's. A session the server forgot (404) is opened again once; an OAuth
token the server refuses (401) is fetched again once. Cancelling the task that awaits a request
cancels it on the server too (notifications/cancelled). Every failure is an McpError whose text is
masked like an upstream's (api.upstream.masking: no credential, no server address).

Limits: each request is bounded by the server's timeout; each answer by McpMaxResultBytes (default
1 MiB): past it the call fails as too_large and nothing more is read.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp

from api.mcp import wire
from api.mcp.credentials import OAuthTokens
from api.mcp.policy import PolicyResolver, check_literal
from api.mcp.registry import ServerInfo
from api.mcp.transports import LegacySse, StreamableHttp, Transport
from api.mcp.wire import McpError
from api.services.configuration.options import OptionsService
from api.upstream.masking import mask_secrets

log = logging.getLogger(__name__)
OnProgress = Callable[[dict[str, Any]], Awaitable[None]]  # the params of a notifications/progress
DEFAULT_MAX_RESULT = 1024 * 1024
MAX_PAGES = 50  # pages of a list read for one listing
POOL_SIZE = 100


class _Session:
    """An initialized session with one server, as registered when it was opened."""

    def __init__(self, server: ServerInfo, transport: Transport, capabilities: dict[str, Any]) -> None:
        self.server = server
        self.transport = transport
        self.capabilities = capabilities


class McpClient:
    def __init__(self, options: OptionsService, http: aiohttp.ClientSession | None = None) -> None:
        self.options = options
        self._own_http = http is None
        self.http = http or aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            resolver=PolicyResolver(self.allow_private), limit=POOL_SIZE, ttl_dns_cache=60), auto_decompress=True)
        self.oauth = OAuthTokens(self.http, self.allow_private)
        self._sessions: dict[int, _Session] = {}
        self._opening: dict[int, asyncio.Lock] = {}
        self._ids = itertools.count(1)

    def allow_private(self) -> bool:
        return self.options.get_bool("MediaFetchPrivateEnabled")

    def max_result_bytes(self) -> int:
        value = self.options.get_int("McpMaxResultBytes")
        return value if value > 0 else DEFAULT_MAX_RESULT

    # -- sessions ---------------------------------------------------------------------------------

    def forget(self, servers: Mapping[str, ServerInfo], generation: int = 0) -> None:
        """The registry reloaded: sessions of servers removed or changed are closed."""
        current = {s.id: s for s in servers.values()}
        for server_id, session in list(self._sessions.items()):
            if current.get(server_id) != session.server:
                self._drop(server_id)

    def _drop(self, server_id: int) -> None:
        session = self._sessions.pop(server_id, None)
        if session is not None:
            asyncio.ensure_future(session.transport.close())

    async def _headers_of(self, server: ServerInfo) -> dict[str, str]:
        headers = dict(server.headers)
        if server.oauth is not None:
            headers["Authorization"] = f"Bearer {await self.oauth.token(server.oauth)}"
        return headers

    async def _session(self, server: ServerInfo) -> _Session:
        session = self._sessions.get(server.id)
        if session is not None and session.server == server and not getattr(session.transport, "closed", False):
            return session
        lock = self._opening.setdefault(server.id, asyncio.Lock())
        async with lock:
            session = self._sessions.get(server.id)
            if session is not None and session.server == server and not getattr(session.transport, "closed", False):
                return session
            if session is not None:
                self._drop(server.id)
            session = await self._open(server)
            self._sessions[server.id] = session
            return session

    async def _open(self, server: ServerInfo) -> _Session:
        check_literal(server.url, self.allow_private())

        async def headers() -> dict[str, str]:
            return await self._headers_of(server)

        transport: Transport = (LegacySse(self.http, server.url, headers, self.max_result_bytes())
                                if server.transport == "sse" else StreamableHttp(self.http, server.url, headers))
        params = {"protocolVersion": wire.PROTOCOL_VERSION, "capabilities": {}, "clientInfo": wire.GATEWAY_INFO}
        answer = await transport.send(wire.request(next(self._ids), "initialize", params),
                                      timeout=server.timeout, max_bytes=self.max_result_bytes())
        result = self._result(server, answer)
        version = result.get("protocolVersion")
        if version not in wire.SUPPORTED_VERSIONS:
            await transport.close()
            raise McpError("protocol", f"the server speaks protocol {str(version)[:32]!r}, which the gateway does not")
        transport.protocol_version = str(version)
        await transport.send(wire.notification("notifications/initialized"), timeout=server.timeout,
                             max_bytes=wire_small())
        capabilities = result.get("capabilities")
        return _Session(server, transport, capabilities if isinstance(capabilities, dict) else {})

    # -- requests ---------------------------------------------------------------------------------

    def _mask(self, server: ServerInfo, text: str) -> str:
        return mask_secrets(text, server.secrets, server.url)

    def _result(self, server: ServerInfo, answer: dict[str, Any] | None) -> dict[str, Any]:
        if answer is None:
            raise McpError("protocol", "the server answered a request with no response")
        if "error" in answer:
            err = answer["error"] if isinstance(answer["error"], dict) else {}
            code = err.get("code") if isinstance(err.get("code"), int) else wire.INTERNAL_ERROR
            raise McpError("rpc", self._mask(server, str(err.get("message") or "error")[:2000]), code,
                           err.get("data"))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise McpError("protocol", "the server's result is not an object")
        return result

    async def request(self, server: ServerInfo, method: str, params: dict[str, Any] | None = None, *,
                      on_progress: OnProgress | None = None) -> dict[str, Any]:
        """Send one request to `server` and return its result (McpError otherwise). With
        `on_progress`, the request carries a progress token and each notifications/progress the
        server sends for it is handed over (its params, the token the gateway's own)."""
        try:
            return await self._request(server, method, params, on_progress)
        except McpError as exc:
            if exc.kind in ("expired", "auth"):
                if server.oauth is not None:
                    self.oauth.drop(server.oauth)
                self._drop(server.id)
                return await self._request(server, method, params, on_progress)
            raise

    async def _request(self, server: ServerInfo, method: str, params: dict[str, Any] | None,
                       on_progress: OnProgress | None) -> dict[str, Any]:
        try:
            session = await self._session(server)
            request_id = next(self._ids)
            sent = dict(params or {})
            on_message = None
            if on_progress is not None:
                token = f"gw-{request_id}"
                sent["_meta"] = {**(sent.get("_meta") or {}), "progressToken": token}

                async def on_message(message: dict[str, Any]) -> None:
                    body = message.get("params")
                    if message.get("method") == "notifications/progress" and isinstance(body, dict) \
                            and body.get("progressToken") == token:
                        await on_progress(body)
            try:
                answer = await session.transport.send(wire.request(request_id, method, sent), timeout=server.timeout,
                                                      max_bytes=self.max_result_bytes(), on_message=on_message)
            except asyncio.CancelledError:
                await self._cancel(session, request_id)
                raise
            return self._result(server, answer)
        except McpError as exc:
            exc.message = self._mask(server, exc.message)
            raise

    async def _cancel(self, session: _Session, request_id: int) -> None:
        """Tell the server a request was cancelled (shielded, bounded: the caller is going away)."""
        note = wire.notification("notifications/cancelled",
                                 {"requestId": request_id, "reason": "cancelled by the client"})
        task = asyncio.ensure_future(session.transport.send(note, timeout=5.0, max_bytes=wire_small()))
        with contextlib.suppress(McpError, asyncio.CancelledError, TimeoutError):
            await asyncio.shield(task)

    async def capabilities(self, server: ServerInfo) -> dict[str, Any]:
        """What the server said it offers at initialize (tools, resources, prompts…)."""
        return (await self._session(server)).capabilities

    async def _pages(self, server: ServerInfo, method: str, field: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = await self.request(server, method, {"cursor": cursor} if cursor else None)
            page = result.get(field)
            if isinstance(page, list):
                items.extend(i for i in page if isinstance(i, dict))
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                break
            cursor = next_cursor
        return items

    async def list_tools(self, server: ServerInfo) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as it describes them (its allow-list not applied)."""
        return await self._pages(server, "tools/list", "tools")

    async def call_tool(self, server: ServerInfo, tool: str, arguments: dict[str, Any] | None = None, *,
                        on_progress: OnProgress | None = None) -> dict[str, Any]:
        """Call one tool; its CallToolResult (`content`, `structuredContent`, `isError`) as the server sent it."""
        return await self.request(server, "tools/call", {"name": tool, "arguments": arguments or {}},
                                  on_progress=on_progress)

    async def list_resources(self, server: ServerInfo) -> list[dict[str, Any]]:
        return await self._pages(server, "resources/list", "resources")

    async def list_resource_templates(self, server: ServerInfo) -> list[dict[str, Any]]:
        return await self._pages(server, "resources/templates/list", "resourceTemplates")

    async def read_resource(self, server: ServerInfo, uri: str) -> dict[str, Any]:
        """A ReadResourceResult: `contents`, each with its `uri` and `text` or `blob`."""
        return await self.request(server, "resources/read", {"uri": uri})

    async def list_prompts(self, server: ServerInfo) -> list[dict[str, Any]]:
        return await self._pages(server, "prompts/list", "prompts")

    async def get_prompt(self, server: ServerInfo, name: str, arguments: dict[str, str] | None = None
                         ) -> dict[str, Any]:
        """A GetPromptResult: `messages` (and `description`)."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request(server, "prompts/get", params)

    async def close(self) -> None:
        for server_id in list(self._sessions):
            session = self._sessions.pop(server_id)
            with contextlib.suppress(Exception):
                await session.transport.close()
        if self._own_http:
            await self.http.close()


def wire_small() -> int:
    """The bound on an answer to a notification (there is none: a 202)."""
    return 64 * 1024
