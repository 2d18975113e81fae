"""The MCP methods `/mcp` answers for a key, over the servers it may use (api.mcp.access):

- on `/mcp` every such server at once, tools and prompts named `<server>__<name>`, resources by
  their own URIs (a read goes to the server that lists the URI);
- on `/mcp/<server>` that one server, with its own names (cursors and templates passed through).

A server, tool or prompt the key may not use is absent from the lists, and refused by name when
asked for (an RpcError whose data.reason is api.mcp.access's code); a list that would be empty
because the key may use nothing is refused too (reason no_access), never answered empty. A server
that fails while others answer is left out of a combined list (logged); when all fail, the list
fails. tools/call is in api.relay.mcp.tool_call.
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from api.i18n import language, translate
from api.mcp import access, wire
from api.mcp.access import AccessRefused, Grant
from api.mcp.hub import McpHub
from api.mcp.wire import McpError
from api.relay.caller import Caller
from api.relay.state import RelayState
from api.services.mcp_names import prefixed, split

log = logging.getLogger("api.relay.mcp")
ORIGINS_CAP = 200  # resources of one combined listing's servers looked through for a read


class RpcError(Exception):
    """A JSON-RPC error answer (`message` already in the client's language)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(slots=True)
class Context:
    """One message's context: the request, the relay state, who asks, in which group, where."""

    request: web.Request
    state: RelayState
    caller: Caller
    group: str
    scope: str  # the server of /mcp/<server>, "" for /mcp
    session_id: str = ""

    @property
    def hub(self) -> McpHub:
        assert self.state.mcp is not None
        return self.state.mcp

    @property
    def key_tools(self) -> tuple[str, ...]:
        return self.caller.token.mcp_tools if self.caller.token is not None else ()

    def text(self, key: str, **params: object) -> str:
        return translate(key, language(self.request), **params)

    def refused(self, exc: AccessRefused) -> RpcError:
        return RpcError(wire.REFUSED, self.text(exc.message_key, **exc.params), {"reason": exc.code, **exc.params})

    def invalid(self, problem: str) -> RpcError:
        return RpcError(wire.INVALID_PARAMS, self.text("mcp_params_invalid", problem=problem))

    def upstream(self, server: str, exc: McpError) -> RpcError:
        if exc.kind == "rpc" and exc.code is not None and exc.code != wire.INTERNAL_ERROR:
            return RpcError(exc.code, exc.message, {"server": server})  # the server's own (masked) error
        return RpcError(wire.UPSTREAM_ERROR, self.text("mcp_upstream_failed", server=server, reason=exc.message),
                        {"reason": exc.kind, "server": server})

    def grants(self) -> dict[str, Grant]:
        """The servers this message may reach; RpcError when none (no_access, or the scope's refusal)."""
        servers = self.hub.registry.all()
        if self.scope:
            try:
                return {self.scope: access.check_server(servers, self.group, self.key_tools, self.scope)}
            except AccessRefused as exc:
                raise self.refused(exc) from None
        found = access.grants(servers, self.group, self.key_tools)
        if not found:
            raise self.refused(AccessRefused("no_access", group=self.group))
        return found

    def name(self, server: str, name: str) -> str:
        return name if self.scope else prefixed(server, name)

    def target(self, name: str, kind: str) -> tuple[str, str]:
        """(server, its own name) of a tool or prompt the client named."""
        if self.scope:
            return self.scope, name
        found = split(name)
        if found is None:
            raise self.refused(AccessRefused(f"{kind}_unknown", **{kind: name[:128]}))
        return found


def _param(params: dict[str, Any], name: str, kind: type, ctx: Context, required: bool = True) -> Any:
    value = params.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind):
        raise ctx.invalid(f"{name} must be a {kind.__name__}")
    return value


async def _combined(ctx: Context, kind: str) -> list[tuple[Grant, list[dict[str, Any]]]]:
    """Each reachable server's listing of `kind`; the failures left out unless all fail."""
    grants = list(ctx.grants().values())
    found = await asyncio.gather(*(ctx.hub.listing(g.server, kind) for g in grants), return_exceptions=True)
    listed: list[tuple[Grant, list[dict[str, Any]]]] = []
    failures: list[tuple[str, McpError]] = []
    for grant, items in zip(grants, found, strict=True):
        if isinstance(items, McpError):
            failures.append((grant.server.name, items))
            log.warning("MCP server %s left out of %s: %s: %s", grant.server.name, kind, items.kind, items.message)
        elif isinstance(items, BaseException):
            raise items
        else:
            listed.append((grant, items))
    if failures and not listed:
        raise ctx.upstream(*failures[0])
    return listed


async def initialize(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    ctx.grants()  # a key that may use nothing is told so now
    asked = params.get("protocolVersion")
    version = asked if asked in wire.SUPPORTED_VERSIONS else wire.PROTOCOL_VERSION
    server_info = dict(wire.GATEWAY_INFO)
    if ctx.scope:
        server_info["name"] = ctx.scope
    return {"protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {"listChanged": False,
                                                                              "subscribe": False},
                             "prompts": {"listChanged": False}},
            "serverInfo": server_info,
            "instructions": "Tools of the MCP servers this API key may use"
                            + ("" if ctx.scope else ", named <server>__<tool>") + "."}


async def tools_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    for grant, items in await _combined(ctx, "tools"):
        for tool in items:
            name = tool.get("name")
            if isinstance(name, str) and grant.allows(name):
                tools.append({**tool, "name": ctx.name(grant.server.name, name)})
    return {"tools": tools}


async def prompts_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    prompts = [{**prompt, "name": ctx.name(grant.server.name, prompt["name"])}
               for grant, items in await _combined(ctx, "prompts") for prompt in items
               if isinstance(prompt.get("name"), str)]
    return {"prompts": prompts}


async def prompts_get(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = _param(params, "name", str, ctx)
    arguments = _param(params, "arguments", dict, ctx, required=False)
    server, prompt = ctx.target(name, "prompt")
    grant = _grant(ctx, server)
    try:
        return await ctx.hub.client.get_prompt(grant.server, prompt, arguments)
    except McpError as exc:
        raise ctx.upstream(server, exc) from None


async def resources_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {"resources": [r for _, items in await _combined(ctx, "resources") for r in items]}


async def resource_templates_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {"resourceTemplates": [t for _, items in await _combined(ctx, "resource_templates") for t in items]}


async def resources_read(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    uri = _param(params, "uri", str, ctx)
    grants = ctx.grants()
    if ctx.scope:
        grant = grants[ctx.scope]
    else:
        owner = next((g for g, items in await _combined(ctx, "resources")
                      if any(r.get("uri") == uri for r in items[:ORIGINS_CAP * 50])), None)
        if owner is None:
            raise ctx.refused(AccessRefused("resource_unknown", uri=uri[:200]))
        grant = owner
    try:
        return await ctx.hub.client.read_resource(grant.server, uri)
    except McpError as exc:
        raise ctx.upstream(grant.server.name, exc) from None


async def ping(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def set_level(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {}  # the gateway sends no log messages


def _grant(ctx: Context, server: str) -> Grant:
    try:
        return access.check_server(ctx.hub.registry.all(), ctx.group, ctx.key_tools, server)
    except AccessRefused as exc:
        raise ctx.refused(exc) from None


METHODS = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": tools_list,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": resources_read,
    "logging/setLevel": set_level,
}
