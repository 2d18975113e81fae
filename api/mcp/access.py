"""Which MCP servers and tools a key may use — the one rule, for the `/mcp` endpoint and for MCP
tools inside model requests alike.

A key may use a server when the server is enabled (not disabled by hand, not down) and lists the
key's group (the key's own group, else its user's: the group it is billed in). The server's
allow-list of tools (empty: all) says which of its tools are offered at all. The key's `mcp_tools`
(empty: no narrowing) then narrows that: `"<server>"` lets every offered tool of that server
through, `"<server>__<tool>"` that one tool; a server or tool it does not name is not the key's.

    grants = access.grants(registry.all(), group, token.mcp_tools)   # what tools/list shows
    grant = access.check_tool(registry.all(), group, token.mcp_tools, "docs", "search")  # or raises

Nothing here does I/O: the registry (api.mcp.registry) is in memory.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from api.mcp.registry import ServerInfo
from api.services import mcp_names as names


class AccessRefused(Exception):
    """Why a key may not use a server or a tool. `code` is stable (a JSON-RPC error's `data.reason`);
    `message_key` an api.i18n message, formatted with `params`."""

    def __init__(self, code: str, **params: str) -> None:
        super().__init__(code)
        self.code = code
        self.params = params

    @property
    def message_key(self) -> str:
        return f"mcp_refused_{self.code}"


@dataclass(frozen=True, slots=True)
class Grant:
    """One server a key may use, and which of its tools (None: every tool the server offers)."""

    server: ServerInfo
    tools: frozenset[str] | None

    def allows(self, tool: str) -> bool:
        """Whether this key may call `tool` of the server (the server's allow-list and the key's)."""
        return self.server.offers(tool) and (self.tools is None or tool in self.tools)


@dataclass(frozen=True, slots=True)
class KeyRule:
    """A key's `mcp_tools`, read: whole servers, and single tools by server. None: no narrowing."""

    servers: frozenset[str]
    tools: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, mcp_tools: Sequence[str]) -> KeyRule | None:
        if not mcp_tools:
            return None
        servers: set[str] = set()
        tools: dict[str, set[str]] = {}
        for entry in mcp_tools:
            split = names.split(entry)
            if split is None:
                servers.add(entry)
            else:
                tools.setdefault(split[0], set()).add(split[1])
        return cls(frozenset(servers), {s: frozenset(t) for s, t in tools.items()})

    def names_server(self, server: str) -> bool:
        return server in self.servers or server in self.tools

    def tools_of(self, server: str) -> frozenset[str] | None:
        """The tools the key names of `server` (None: all of them)."""
        return None if server in self.servers else self.tools.get(server, frozenset())


def usable(server: ServerInfo, group: str) -> bool:
    """Whether keys of `group` may use the server at all (enabled and listing the group)."""
    return server.enabled and group in server.groups


def grants(servers: Mapping[str, ServerInfo], group: str, mcp_tools: Sequence[str]) -> dict[str, Grant]:
    """Every server a key of `group` with `mcp_tools` may use, by name (empty: no MCP access)."""
    rule = KeyRule.of(mcp_tools)
    found: dict[str, Grant] = {}
    for name, server in servers.items():
        if not usable(server, group) or (rule is not None and not rule.names_server(name)):
            continue
        found[name] = Grant(server, rule.tools_of(name) if rule is not None else None)
    return found


def check_server(servers: Mapping[str, ServerInfo], group: str, mcp_tools: Sequence[str], name: str) -> Grant:
    """The key's grant on server `name`, or AccessRefused saying why not."""
    server = servers.get(name)
    if server is None:
        raise AccessRefused("server_unknown", server=name[:64])
    if group not in server.groups:
        raise AccessRefused("server_not_in_group", server=name, group=group)
    if not server.enabled:
        raise AccessRefused("server_unavailable", server=name)
    rule = KeyRule.of(mcp_tools)
    if rule is not None and not rule.names_server(name):
        raise AccessRefused("server_not_in_key", server=name)
    return Grant(server, rule.tools_of(name) if rule is not None else None)


def check_tool(servers: Mapping[str, ServerInfo], group: str, mcp_tools: Sequence[str], server: str,
               tool: str) -> Grant:
    """The key's grant for calling `tool` of `server`, or AccessRefused saying why not."""
    grant = check_server(servers, group, mcp_tools, server)
    if not grant.server.offers(tool):
        raise AccessRefused("tool_not_offered", server=server, tool=tool[:128])
    if grant.tools is not None and tool not in grant.tools:
        raise AccessRefused("tool_not_in_key", server=server, tool=tool[:128])
    return grant
