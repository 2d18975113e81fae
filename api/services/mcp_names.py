"""How servers and their tools are named: a server's name is the prefix of its tools' names on the
gateway's `/mcp` (`<server>__<tool>`), as Codex and Claude Code spell namespaced tools."""
from __future__ import annotations

import re

SEPARATOR = "__"
SERVER_NAME = re.compile(r"^[a-z0-9_-]{1,64}$")
MAX_TOOL_NAME = 128  # the MCP spec's bound on a tool's name


def valid_server_name(name: str) -> bool:
    """`[a-z0-9_-]`, 1 to 64 characters, and no `__` (the separator must split a prefixed name once)."""
    return bool(SERVER_NAME.match(name)) and SEPARATOR not in name


def prefixed(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{tool}"


def split(name: str) -> tuple[str, str] | None:
    """`<server>__<tool>` → (server, tool); None when the name has no server prefix."""
    server, sep, tool = name.partition(SEPARATOR)
    if not sep or not server or not tool:
        return None
    return server, tool
