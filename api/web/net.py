"""Client addresses behind trusted proxies."""
from __future__ import annotations

import ipaddress

from aiohttp import web

from api import keys


def client_ip(request: web.Request) -> str:
    """The peer address, or the last untrusted hop of X-Forwarded-For when the peer is a trusted proxy.
    A hop that is not an IP address (a proxy passing on what the client wrote: a word, bytes that are
    not UTF-8) ends the walk: the last address seen stands, so garbage never becomes the address that
    keys, limits and messages use."""
    cached = request.get(keys.CLIENT_IP)  # Request.get is not typed per RequestKey (aiohttp 3.14)
    if isinstance(cached, str):
        return cached
    remote = request.remote or ""
    trusted = request.config_dict[keys.SETTINGS].trusted_proxies
    ip = remote
    if trusted and _in_any(remote, trusted):
        hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
        for hop in reversed(hops):
            if not _is_address(hop):
                break
            ip = hop
            if not _in_any(hop, trusted):
                break
    request[keys.CLIENT_IP] = ip
    return ip


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _in_any(ip: str, networks: tuple[str, ...]) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    for net in networks:
        try:
            if addr in ipaddress.ip_network(net, strict=False):
                return True
        except ValueError:
            continue
    return False
