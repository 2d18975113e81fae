"""Which of a request's MCP declarations the gateway serves itself, read out of the client's body.

A declaration is served when it names a server registered here:
- its URL is the gateway's own `/mcp/<server>` (the host the request came to, or ServerAddress's):
  that server;
- its URL is the gateway's own `/mcp`: the server its label names when one is registered by that
  name, else every server the key may use (their tools named `<server>__<tool>`, as on `/mcp`);
- otherwise, its label (Responses `server_label`, Anthropic `name`) is a registered server's name:
  that server; the URL given is never contacted.
A declaration whose label and URL name two different registered servers (the label one's name, the
URL the gateway's own `/mcp/<other>` or the other's registered URL) is refused (api.relay.mcp_tools.
offer: `mcp_server_mismatch`): which of the two the caller meant cannot be told, and its calls are
sent to neither.
Any other declaration stays in the body as it came (a converted request leaves it out with its
notice, a native one carries it to the provider). A served declaration's credentials (Responses
`headers`, `authorization`; Anthropic `authorization_token`) go nowhere: the gateway's own
credential for the server is used.

Shapes: Responses `{type: "mcp", server_label, server_url, allowed_tools?: [names] | {tool_names,
read_only}, require_approval?, headers?}` (openai-python types/responses/tool_param.py `Mcp`);
Anthropic `mcp_servers: [{type: "url", url, name, authorization_token?, tool_configuration?:
{enabled, allowed_tools}}]` (beta `mcp-client-2025-04-04`) and, from `mcp-client-2025-11-20` on, an
`mcp_toolset` tool `{mcp_server_name, default_config: {enabled}, configs: {<tool>: {enabled}}}`
(anthropic-sdk-python types/beta/beta_request_mcp_server_url_definition_param.py, beta_mcp_toolset_param.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from aiohttp import web

from api.mcp.registry import ServerInfo
from api.services.configuration.options import OptionsService

RESPONSES = "responses"
ANTHROPIC = "anthropic"


@dataclass(frozen=True, slots=True)
class Declared:
    """One served declaration: the client's label, the server, and the client's own narrowing."""

    label: str
    server: str  # the registered server; "" for every server the key may use (the gateway's /mcp)
    url_server: str = ""  # the other registered server its URL names, when its label names `server`: refused
    allowed: frozenset[str] | None = None  # the tools the client lets through (None: all)
    denied: frozenset[str] = frozenset()
    read_only: bool = False  # only tools the server marks readOnlyHint

    def permits(self, tool: str, annotations: Any) -> bool:
        if tool in self.denied or (self.allowed is not None and tool not in self.allowed):
            return False
        return not self.read_only or (isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True)


@dataclass(slots=True)
class Hosted:
    """What a request asks the gateway to serve, and the client's fields to put back once its
    inbound has read the body (a Responses answer echoes the tools as sent)."""

    declared: list[Declared]
    format: str
    restore: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def own_server(url: Any, request: web.Request, options: OptionsService) -> str | None:
    """The server of a URL that is this gateway's `/mcp/<server>` ("" for `/mcp`), else None."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url.strip())
    host = parts.netloc.lower()
    own = {(request.host or "").lower(), urlsplit(options.get("ServerAddress").strip()).netloc.lower()} - {""}
    if not host or host not in own:
        return None
    path = parts.path.rstrip("/")
    if path == "/mcp":
        return ""
    name = unquote(path.removeprefix("/mcp/")) if path.startswith("/mcp/") else ""
    return name if name and "/" not in name else None


def _same_url(a: str, b: str) -> bool:
    """The same address, written with another case of scheme or host, or a trailing slash."""
    x, y = urlsplit(a.strip()), urlsplit(b.strip())
    return ((x.scheme.lower(), x.netloc.lower(), x.path.rstrip("/") or "/", x.query)
            == (y.scheme.lower(), y.netloc.lower(), y.path.rstrip("/") or "/", y.query))


def _served(label: str, url: Any, request: web.Request, options: OptionsService,
            servers: Mapping[str, ServerInfo]) -> tuple[str, str] | None:
    """(the server a declaration stands for ("" every one of the key's), the other registered server
    its URL names when its label names the first: refused), or None: not served here."""
    own = own_server(url, request, options)
    if own is not None:
        if own and label in servers and label != own:
            return label, own
        return own or (label if label in servers else ""), ""
    if not label or label not in servers:
        return None
    at = (next((name for name, info in servers.items() if name != label and _same_url(info.url, url)), "")
          if isinstance(url, str) and url.strip() else "")
    return label, at


def _names(value: Any) -> frozenset[str]:
    return frozenset(v for v in value if isinstance(v, str)) if isinstance(value, list) else frozenset()


def take_responses(body: dict[str, Any], request: web.Request, options: OptionsService,
                   servers: Mapping[str, ServerInfo]) -> Hosted | None:
    """The served `mcp` tools of a Responses body, taken out of its `tools` (None: none)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    declared: list[Declared] = []
    kept: list[Any] = []
    notices: list[str] = []
    for tool in tools:
        if not (isinstance(tool, Mapping) and tool.get("type") == "mcp"):
            kept.append(tool)
            continue
        label = str(tool.get("server_label") or "")
        served = _served(label, tool.get("server_url"), request, options, servers)
        if served is None:
            kept.append(tool)
            continue
        server, url_server = served
        given = tool.get("allowed_tools")
        allowed: frozenset[str] | None = None
        read_only = False
        if isinstance(given, list):
            allowed = _names(given)
        elif isinstance(given, Mapping):
            allowed = _names(given.get("tool_names")) if given.get("tool_names") is not None else None
            read_only = given.get("read_only") is True
        if tool.get("require_approval") not in (None, "never") and "tools.mcp.require_approval" not in notices:
            notices.append("tools.mcp.require_approval")  # the key's grant is the approval: run at once
        declared.append(Declared(label or server or "mcp", server, url_server, allowed, read_only=read_only))
    if not declared:
        return None
    body["tools"] = kept
    return Hosted(declared, RESPONSES, restore={"tools": tools}, notices=notices)


def take_anthropic(body: dict[str, Any], request: web.Request, options: OptionsService,
                   servers: Mapping[str, ServerInfo]) -> Hosted | None:
    """The served `mcp_servers` of a Messages body, taken out with the `mcp_toolset` tools that
    configure them (None: none)."""
    given = body.get("mcp_servers")
    if not isinstance(given, list):
        return None
    toolsets = {str(t.get("mcp_server_name") or ""): t for t in body.get("tools") or ()
                if isinstance(t, Mapping) and t.get("type") == "mcp_toolset"}
    declared: list[Declared] = []
    kept: list[Any] = []
    for entry in given:
        if not isinstance(entry, Mapping):
            kept.append(entry)
            continue
        label = str(entry.get("name") or "")
        served = _served(label, entry.get("url"), request, options, servers)
        if served is None:
            kept.append(entry)
            continue
        server, url_server = served
        config = entry.get("tool_configuration")
        config = config if isinstance(config, Mapping) else {}
        allowed = _names(config["allowed_tools"]) if config.get("allowed_tools") is not None else None
        if config.get("enabled") is False:
            allowed = frozenset()
        denied: frozenset[str] = frozenset()
        toolset = toolsets.get(label)
        if toolset is not None:
            allowed, denied = _toolset(toolset, allowed)
        declared.append(Declared(label or server or "mcp", server, url_server, allowed, denied))
    if not declared:
        return None
    labels = {d.label for d in declared}
    if kept:
        body["mcp_servers"] = kept
    else:
        del body["mcp_servers"]
    if toolsets and isinstance(body.get("tools"), list):
        body["tools"] = [t for t in body["tools"] if not (isinstance(t, Mapping) and t.get("type") == "mcp_toolset"
                                                          and t.get("mcp_server_name") in labels)]
        if not body["tools"]:
            del body["tools"]
    return Hosted(declared, ANTHROPIC)


def _toolset(toolset: Mapping[str, Any], allowed: frozenset[str] | None
             ) -> tuple[frozenset[str] | None, frozenset[str]]:
    """An `mcp_toolset`'s default and per-tool `enabled`, over the server's own allow-list."""
    default = toolset.get("default_config")
    enabled_by_default = not (isinstance(default, Mapping) and default.get("enabled") is False)
    configs = toolset.get("configs")
    configs = configs if isinstance(configs, Mapping) else {}
    on = frozenset(str(n) for n, c in configs.items() if isinstance(c, Mapping) and c.get("enabled") is True)
    off = frozenset(str(n) for n, c in configs.items() if isinstance(c, Mapping) and c.get("enabled") is False)
    if enabled_by_default:
        return allowed, off
    return (on if allowed is None else on & allowed), off
