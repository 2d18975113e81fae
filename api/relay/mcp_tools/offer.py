"""What the model is offered of the servers a request declared: the key's grants on them (the one
rule of api.mcp.access, fail closed: a server the key may not use refuses the whole request, by
name, before anything is reserved), and their tools as function tools.

A tool is offered when the server's allow-list, the key's `mcp_tools` and the client's own
narrowing (allowed_tools, tool_configuration, mcp_toolset) all let it through. Its function name is
`<label>__<tool>` made safe for every provider (api.relay.inbound.responses_tools.flat_name); a name
one of the client's own tools already has is left to the client's tool.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from api.i18n import language, translate
from api.mcp import access
from api.mcp.access import AccessRefused, Grant
from api.mcp.hub import McpHub
from api.mcp.wire import McpError
from api.relay.inbound.responses_tools import flat_name
from api.relay.mcp_tools.declared import Declared, Hosted
from api.services.mcp_names import prefixed
from api.upstream.chat import ChatTool
from api.upstream.errors import RelayError


@dataclass(frozen=True, slots=True)
class Offered:
    """One tool offered to the model."""

    declared: Declared
    grant: Grant
    tool: str  # the server's own name for it
    listed: str  # the name the client sees: the tool's, or `<server>__<tool>` for the gateway's /mcp
    function: str  # the name the model calls it by


@dataclass(slots=True)
class Offer:
    functions: dict[str, Offered] = field(default_factory=dict)
    tools: list[ChatTool] = field(default_factory=list)
    # Per declaration, the tools listed (an `mcp_list_tools` item's `tools`)
    listings: list[tuple[Declared, list[dict[str, Any]]]] = field(default_factory=list)


def refused(request: web.Request, exc: AccessRefused) -> RelayError:
    """A server or the tools the key may not use: 403, naming it."""
    return RelayError.local_error(403, translate(exc.message_key, language(request), **exc.params),
                                  f"mcp_{exc.code}", "permission_error")


def _grants(declared: Declared, servers: Any, group: str, key_tools: tuple[str, ...]) -> list[Grant]:
    if declared.url_server:  # label and URL name two servers (the URL's left unnamed: maybe not the key's)
        raise AccessRefused("server_mismatch", label=declared.label[:64])
    if declared.server:
        return [access.check_server(servers, group, key_tools, declared.server)]
    found = access.grants(servers, group, key_tools)
    if not found:
        raise AccessRefused("no_access", group=group)
    return list(found.values())


async def offer(request: web.Request, hub: McpHub, hosted: Hosted, group: str, key_tools: tuple[str, ...],
                taken: Collection[str]) -> Offer:
    """The tools of every declared server the key may use (`taken`: the client's own function names).
    RelayError: a server refused (403) or whose tools could not be listed (424, as OpenAI answers it)."""
    servers = hub.registry.all()
    plan: list[tuple[Declared, list[Grant]]] = []
    for declared in hosted.declared:
        try:
            plan.append((declared, _grants(declared, servers, group, key_tools)))
        except AccessRefused as exc:
            raise refused(request, exc) from None
    found = Offer()
    for declared, grants in plan:
        listed: list[dict[str, Any]] = []
        for grant in grants:
            try:
                tools = await hub.tools(grant.server)
            except McpError as exc:
                message = translate("mcp_upstream_failed", language(request), server=grant.server.name,
                                    reason=exc.message)
                raise RelayError.local_error(424, message, "mcp_list_tools_failed", "invalid_request_error") from None
            for tool in tools:
                name = tool.get("name")
                if not isinstance(name, str) or not grant.allows(name) \
                        or not declared.permits(name, tool.get("annotations")):
                    continue
                shown = name if declared.server else prefixed(grant.server.name, name)
                function = flat_name(shown, declared.label)
                if function in taken or function in found.functions:
                    continue
                found.functions[function] = Offered(declared, grant, name, shown, function)
                schema = tool.get("inputSchema")
                found.tools.append({"type": "function", "function": {
                    "name": function, "description": str(tool.get("description") or ""),
                    "parameters": schema if isinstance(schema, dict) else {"type": "object", "properties": {}}}})
                item: dict[str, Any] = {"name": shown, "description": tool.get("description"),
                                        "input_schema": schema if isinstance(schema, dict) else {}}
                if tool.get("annotations") is not None:
                    item["annotations"] = tool["annotations"]
                listed.append(item)
        found.listings.append((declared, listed))
    return found
