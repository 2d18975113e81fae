"""Where the gateway may connect for an MCP server: the URL policy of user-supplied media URLs
(api.upstream.media): http or https only, and every address the host resolves to public (no
loopback, private, link-local, multicast or reserved address) unless MediaFetchPrivateEnabled says
otherwise. Checked when a server is saved (with a DNS lookup) and at every connection: the client's
connector resolves through `PolicyResolver`, so a name that resolves elsewhere later is refused
then, and a literal address is checked before the request (aiohttp does not resolve those)."""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from api.mcp.wire import McpError
from api.upstream import media


def url_problem(url: str) -> str:
    """What is wrong with a server URL's shape ("" when nothing)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "only http and https URLs are allowed"
    if parts.username or parts.password:
        return "credentials go in the headers, not in the URL"
    if parts.fragment:
        return "a URL with a fragment (#) is not allowed"
    return ""


def literal_allowed(host: str, allow_private: bool) -> bool:
    """A host that is a literal address: whether it may be reached (a name: True, the resolver decides)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return True
    return allow_private or media.is_public(host.strip("[]"))


def check_literal(url: str, allow_private: bool) -> None:
    """Refuse (McpError refused) a URL of another scheme, or whose literal address is not public."""
    problem = url_problem(url)
    if problem:
        raise McpError("refused", problem)
    host = urlsplit(url).hostname or ""
    if not literal_allowed(host, allow_private):
        raise McpError("refused", f"the address {host} is not public (MediaFetchPrivateEnabled is off)")


async def check_url(url: str, allow_private: bool) -> None:
    """The whole policy with a DNS lookup now (an administrator saving a server): McpError refused."""
    check_literal(url, allow_private)
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await media.check_host(parts.hostname or "", port, allow_private)
    except Exception as exc:  # api.upstream.errors.RelayError: its message says why
        message = str(getattr(exc, "message", "") or exc).removeprefix("image URL refused: ")
        raise McpError("refused", message) from None


class PolicyResolver(AbstractResolver):
    """The system resolver, refusing any non-public address unless `allow_private()` says otherwise."""

    def __init__(self, allow_private: Callable[[], bool]) -> None:
        self.allow_private = allow_private
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        if not self.allow_private():
            for result in results:
                if not media.is_public(result["host"]):
                    raise OSError(f"{host} resolves to a non-public address (MediaFetchPrivateEnabled is off)")
        return results

    async def close(self) -> None:
        await self._inner.close()
