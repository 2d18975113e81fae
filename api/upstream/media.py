"""Fetching a URL a user supplied (an image in a prompt that a provider needs inlined), under a policy:

- http and https only; at most MAX_REDIRECTS redirects, each hop checked like the first;
- every address the host resolves to must be public (no loopback, private, link-local, multicast,
  reserved or unspecified address, IPv4-mapped ones included) unless the option
  MediaFetchPrivateEnabled allows them, or the caller's `private_ok` allows that hop's URL (a
  Midjourney channel's own host and port: a redirect elsewhere is checked like any URL);
- the connection goes to the addresses that were checked (a resolver pinned to them), so a DNS
  answer that changes between the check and the connection cannot reach an internal address;
- bounded time (total) and size (the body is read up to the limit, then refused);
- the answer must be an image (`Content-Type: image/*`);
- one request has a budget (`fetch_images`): at most MAX_IMAGES images and MAX_MEDIA_BYTES bytes
  together, checked before anything is fetched (the count) and as the bytes arrive (the total),
  fetched FETCH_CONCURRENCY at a time.

Every refusal is a local 400 `invalid_image_url` that says why; nothing is sent upstream.
"""
from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from api.upstream.errors import RelayError

MIB = 1024 * 1024
MAX_IMAGE_BYTES = 20 * MIB
FETCH_TIMEOUT = 15.0
MAX_REDIRECTS = 3
MAX_IMAGES = 16  # images fetched for one request
MAX_MEDIA_BYTES = 40 * MIB  # their bytes together
FETCH_CONCURRENCY = 4  # fetches of one request at a time


def refuse(message: str) -> RelayError:
    return RelayError.local_error(400, f"image URL refused: {message}", "invalid_image_url", "invalid_request_error")


def is_public(address: str) -> bool:
    """Whether an address is a public one. An IPv6 address that carries an IPv4 one (mapped,
    6to4 `2002::/16`) is judged by that IPv4 address; site-local `fec0::/10` (deprecated, still
    routed inside some networks) is not public."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.is_site_local:
            return False
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is not None:
            ip = carried
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified or not ip.is_global)


class PinnedResolver(AbstractResolver):
    """Answers with the addresses already checked, never asking DNS again."""

    def __init__(self, results: list[ResolveResult]) -> None:
        self.results = results

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        return [{**r, "port": port} for r in self.results]

    async def close(self) -> None:
        return None


async def _checked(host: str, port: int, allow_private: bool) -> list[ResolveResult]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise refuse(f"the host {host} cannot be resolved") from None
    results: list[ResolveResult] = []
    for family, _, proto, _, sockaddr in infos:
        address = str(sockaddr[0])
        if not allow_private and not is_public(address):
            raise refuse(f"the host {host} resolves to a non-public address")
        results.append({"hostname": host, "host": address, "port": port, "family": family, "proto": proto,
                        "flags": socket.AI_NUMERICHOST})
    if not results:
        raise refuse(f"the host {host} cannot be resolved")
    return results


class MediaBudget:
    """The bytes the images of one request may hold together."""

    __slots__ = ("left", "total")

    def __init__(self, total: int = MAX_MEDIA_BYTES) -> None:
        self.total = total
        self.left = total

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise refuse(f"the images of this request are larger than {_size(self.total)} together")


def _size(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"


async def fetch_images(urls: Sequence[str], *, allow_private: bool, max_images: int | None = None,
                       max_bytes: int | None = None) -> list[tuple[str, bytes]]:
    """(mime type, bytes) of each image, in order: the images of one request, under its budget
    (MAX_IMAGES, MAX_MEDIA_BYTES unless given) and FETCH_CONCURRENCY at a time; the first refusal
    cancels the fetches still running."""
    max_images = MAX_IMAGES if max_images is None else max_images
    if len(urls) > max_images:
        raise refuse(f"at most {max_images} images can be fetched for one request ({len(urls)} given)")
    budget = MediaBudget(MAX_MEDIA_BYTES if max_bytes is None else max_bytes)
    slots = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def one(url: str) -> tuple[str, bytes]:
        async with slots:
            return await fetch_image(url, allow_private=allow_private, budget=budget)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(url)) for url in urls]
    except* RelayError as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


async def fetch_image(url: str, *, allow_private: bool, max_bytes: int = MAX_IMAGE_BYTES,
                      timeout: float = FETCH_TIMEOUT, budget: MediaBudget | None = None,
                      private_ok: Callable[[str], bool] | None = None) -> tuple[str, bytes]:
    """(mime type, bytes) of the image at `url`, fetched under the policy above (and counted in the
    request's `budget`, when given)."""
    try:
        async with asyncio.timeout(timeout):
            return await _fetch(url, allow_private, max_bytes, budget, private_ok)
    except TimeoutError:
        raise refuse(f"no answer within {timeout:g} s") from None


async def _fetch(url: str, allow_private: bool, max_bytes: int, budget: MediaBudget | None,
                 private_ok: Callable[[str], bool] | None) -> tuple[str, bytes]:
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise refuse("only http and https URLs can be fetched")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        results = await _checked(parts.hostname, port, allow_private or (private_ok is not None and private_ok(url)))
        connector = aiohttp.TCPConnector(resolver=PinnedResolver(results), use_dns_cache=False, force_close=True)
        async with aiohttp.ClientSession(connector=connector, auto_decompress=True) as http:
            try:
                async with http.get(url, allow_redirects=False) as resp:
                    if resp.status in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
                        url = urljoin(url, resp.headers["Location"])
                        continue
                    if resp.status != 200:
                        raise refuse(f"the server answered {resp.status}")
                    mime = resp.content_type or ""
                    if not mime.startswith("image/"):
                        raise refuse(f"not an image ({mime or 'no content type'})")
                    if (resp.content_length or 0) > max_bytes:
                        raise refuse(f"larger than {max_bytes} bytes")
                    return mime, await _read(resp, max_bytes, budget)
            except aiohttp.ClientError as exc:
                raise refuse(f"the fetch failed ({type(exc).__name__})") from None
    raise refuse(f"more than {MAX_REDIRECTS} redirects")


async def _read(resp: Any, max_bytes: int, budget: MediaBudget | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > max_bytes:
            raise refuse(f"larger than {max_bytes} bytes")
        if budget is not None:
            budget.take(len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


async def checked_addresses(host: str, port: int, allow_private: bool) -> list[ResolveResult]:
    """The host's addresses, each checked as above (refused unless public or allowed): what a
    PinnedResolver then connects to, for other fetches of user-supplied URLs under this policy."""
    return await _checked(host, port, allow_private)


async def check_host(host: str, port: int, allow_private: bool) -> None:
    """Refuse (400 invalid_image_url) a host that resolves to a non-public address, unless allowed."""
    await _checked(host, port, allow_private)
