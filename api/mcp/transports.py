"""The two ways an MCP server is reached, both carrying JSON-RPC messages:

- Streamable HTTP (protocol 2025-03-26 and later): each message is a POST; the answer is one JSON
  message or an SSE stream that carries the server's notifications (progress) and requests before
  the response; the session is the `Mcp-Session-Id` the server gave at initialize, sent back with
  `MCP-Protocol-Version` on every later request; a 404 means the server forgot it.
- HTTP+SSE (protocol 2024-11-05, for servers that only speak it): one long GET stream whose first
  event (`endpoint`) names where to POST; every answer comes back on that stream, matched by id.

Both bound what they read (`max_bytes` per message: a result past it fails as too_large, nothing
more is buffered), never follow a redirect, and answer a server's own requests (sampling,
elicitation, roots) with "method not found": the gateway offers none of those to servers.
`headers()` gives the credential headers at each request (an OAuth token may have been renewed).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import orjson

from api.mcp import wire
from api.mcp.wire import McpError
from api.upstream.sse import SSEError, SSEParser

log = logging.getLogger(__name__)
OnMessage = Callable[[dict[str, Any]], Awaitable[None]]  # a notification that came with the answer
Headers = Callable[[], Awaitable[dict[str, str]]]
ERROR_BODY = 2048  # bytes of an HTTP error's body kept for its message
SLACK = 64 * 1024  # bytes an SSE answer may hold beyond its message (notifications, framing)
CONNECT_TIMEOUT = 10.0


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise McpError("protocol", "the server sent a message that is not JSON") from None


async def _error_text(resp: aiohttp.ClientResponse) -> str:
    raw = await resp.content.read(ERROR_BODY)
    return raw.decode("utf-8", "replace").strip()


def _server_request_answer(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("method") == "ping":
        return wire.result(message.get("id"), {})
    return wire.error(message.get("id"), wire.METHOD_NOT_FOUND, "the gateway offers no client features to servers")


class StreamableHttp:
    """One session with a Streamable HTTP server."""

    def __init__(self, http: aiohttp.ClientSession, url: str, headers: Headers) -> None:
        self.http = http
        self.url = url
        self.headers = headers
        self.session_id: str | None = None
        self.protocol_version: str | None = None

    async def _request_headers(self) -> dict[str, str]:
        headers = {"Accept": wire.ACCEPT, "Content-Type": "application/json", **await self.headers()}
        if self.session_id:
            headers[wire.SESSION_HEADER] = self.session_id
        if self.protocol_version:
            headers[wire.VERSION_HEADER] = self.protocol_version
        return headers

    async def send(self, message: dict[str, Any], *, timeout: float, max_bytes: int,
                   on_message: OnMessage | None = None) -> dict[str, Any] | None:
        """POST one message; its response (a request's), or None (a notification's 202)."""
        try:
            async with self.http.post(self.url, data=wire.dumps(message), headers=await self._request_headers(),
                                      allow_redirects=False, timeout=aiohttp.ClientTimeout(
                                          total=timeout, sock_connect=CONNECT_TIMEOUT)) as resp:
                if message.get("method") == "initialize":
                    self.session_id = resp.headers.get(wire.SESSION_HEADER) or None
                return await self._answer(resp, message, max_bytes, on_message, timeout)
        except TimeoutError:
            raise McpError("timeout", f"the server did not answer within {timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise McpError("unreachable", f"the server cannot be reached ({type(exc).__name__})") from None
        except OSError as exc:  # the URL policy's resolver
            raise McpError("refused", str(exc)) from None

    async def _answer(self, resp: aiohttp.ClientResponse, message: dict[str, Any], max_bytes: int,
                      on_message: OnMessage | None, timeout: float) -> dict[str, Any] | None:
        if resp.status == 202 or ("id" not in message and 200 <= resp.status < 300):
            return None
        if resp.status == 404 and self.session_id and message.get("method") != "initialize":
            raise McpError("expired", "the server ended the session")
        if resp.status in (401, 403):
            raise McpError("auth", f"the server refused the gateway's credential ({resp.status})")
        if resp.status >= 300:
            raise McpError("http", f"the server answered {resp.status}: {await _error_text(resp)}")
        if resp.content_type == "text/event-stream":
            return await self._stream(resp, message, max_bytes, on_message, timeout)
        if resp.content_type != "application/json":
            raise McpError("protocol", f"the server answered {resp.content_type or 'no content type'}")
        if (resp.content_length or 0) > max_bytes:
            raise McpError("too_large", f"the answer is larger than {max_bytes} bytes")
        raw = await resp.content.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise McpError("too_large", f"the answer is larger than {max_bytes} bytes")
        answer = _decode(raw)
        if not wire.is_response(answer):
            raise McpError("protocol", "the server answered something other than a JSON-RPC response")
        return answer  # type: ignore[no-any-return]

    async def _stream(self, resp: aiohttp.ClientResponse, message: dict[str, Any], max_bytes: int,
                      on_message: OnMessage | None, timeout: float) -> dict[str, Any]:
        parser = SSEParser(max_line_bytes=max_bytes)
        total = 0
        try:
            async for chunk in resp.content.iter_any():
                total += len(chunk)
                if total > max_bytes + SLACK:
                    raise McpError("too_large", f"the answer is larger than {max_bytes} bytes")
                for event in parser.feed(chunk):
                    if event.event not in (None, "message") or not event.data.strip():
                        continue
                    found = _decode(event.data)
                    if not isinstance(found, dict):
                        continue
                    if wire.is_response(found) and found.get("id") == message.get("id"):
                        return found
                    if "method" in found and "id" in found:
                        asyncio.ensure_future(self._reply(found, timeout))
                    elif "method" in found and on_message is not None:
                        await on_message(found)
        except SSEError:
            raise McpError("too_large", f"the answer is larger than {max_bytes} bytes") from None
        raise McpError("protocol", "the server's stream ended without the response")

    async def _reply(self, request: dict[str, Any], timeout: float) -> None:
        with contextlib.suppress(McpError):
            await self.send(_server_request_answer(request), timeout=timeout, max_bytes=ERROR_BODY)

    async def close(self) -> None:
        """End the session on the server (DELETE), when it has one; a failure is the server's loss."""
        if not self.session_id:
            return
        with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
            async with self.http.delete(self.url, headers=await self._request_headers(), allow_redirects=False,
                                        timeout=aiohttp.ClientTimeout(total=5)):
                pass
        self.session_id = None


class LegacySse:
    """One HTTP+SSE connection: the GET stream read by one task, answers matched to their requests."""

    def __init__(self, http: aiohttp.ClientSession, url: str, headers: Headers, max_bytes: int) -> None:
        self.http = http
        self.url = url
        self.headers = headers
        self.max_bytes = max_bytes
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self._endpoint: asyncio.Future[str] | None = None
        self._pending: dict[Any, tuple[asyncio.Future[dict[str, Any]], OnMessage | None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.closed = False

    async def _open(self, timeout: float) -> str:
        if self._endpoint is None:
            loop = asyncio.get_running_loop()
            self._endpoint = loop.create_future()
            self._reader = loop.create_task(self._read(), name="mcp-sse")
        try:
            return await asyncio.wait_for(asyncio.shield(self._endpoint), timeout)
        except TimeoutError:
            raise McpError("timeout", f"the server sent no endpoint within {timeout:g} s") from None

    async def _read(self) -> None:
        assert self._endpoint is not None
        failure: McpError = McpError("unreachable", "the server's event stream ended")
        try:
            async with self.http.get(self.url, headers={"Accept": "text/event-stream", **await self.headers()},
                                     allow_redirects=False, timeout=aiohttp.ClientTimeout(
                                         total=None, sock_connect=CONNECT_TIMEOUT)) as resp:
                if resp.status in (401, 403):
                    raise McpError("auth", f"the server refused the gateway's credential ({resp.status})")
                if resp.status != 200 or resp.content_type != "text/event-stream":
                    raise McpError("http", f"the server answered {resp.status} {resp.content_type}")
                parser = SSEParser(max_line_bytes=self.max_bytes + SLACK)
                async for chunk in resp.content.iter_any():
                    for event in parser.feed(chunk):
                        await self._event(event.event, event.data)
        except McpError as exc:
            failure = exc
        except SSEError:
            failure = McpError("too_large", f"a message is larger than {self.max_bytes} bytes")
        except (aiohttp.ClientError, OSError) as exc:
            failure = McpError("unreachable", f"the server cannot be reached ({type(exc).__name__})")
        finally:
            self.closed = True
            if not self._endpoint.done():
                self._endpoint.set_exception(failure)
                self._endpoint.exception()  # retrieved: each waiter gets it from wait_for
            for future, _ in self._pending.values():
                if not future.done():
                    future.set_exception(failure)
            self._pending.clear()

    async def _event(self, name: str | None, data: bytes) -> None:
        assert self._endpoint is not None
        if name == "endpoint":
            target = urljoin(self.url, data.decode("utf-8", "replace").strip())
            same = urlsplit(target)[:2] == urlsplit(self.url)[:2]
            if not self._endpoint.done():
                if same:
                    self._endpoint.set_result(target)
                else:
                    self._endpoint.set_exception(McpError("protocol", "the server's endpoint is on another origin"))
            return
        if name not in (None, "message") or not data.strip():
            return
        message = _decode(data)
        if not isinstance(message, dict):
            return
        if wire.is_response(message):
            waiting = self._pending.pop(message.get("id"), None)
            if waiting is not None and not waiting[0].done():
                if len(data) > self.max_bytes:
                    waiting[0].set_exception(McpError("too_large", f"the answer is larger than {self.max_bytes} bytes"))
                else:
                    waiting[0].set_result(message)
        elif "method" in message and "id" in message:
            asyncio.ensure_future(self._post(_server_request_answer(message), 10.0))
        elif "method" in message:
            for _, on_message in list(self._pending.values()):
                if on_message is not None:
                    await on_message(message)

    async def _post(self, message: dict[str, Any], timeout: float) -> None:
        endpoint = await self._open(timeout)
        try:
            async with self.http.post(endpoint, data=wire.dumps(message), allow_redirects=False,
                                      headers={"Content-Type": "application/json", **await self.headers()},
                                      timeout=aiohttp.ClientTimeout(total=timeout,
                                                                    sock_connect=CONNECT_TIMEOUT)) as resp:
                if resp.status in (401, 403):
                    raise McpError("auth", f"the server refused the gateway's credential ({resp.status})")
                if resp.status >= 300:
                    raise McpError("http", f"the server answered {resp.status}: {await _error_text(resp)}")
        except TimeoutError:
            raise McpError("timeout", f"the server did not answer within {timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise McpError("unreachable", f"the server cannot be reached ({type(exc).__name__})") from None
        except OSError as exc:
            raise McpError("refused", str(exc)) from None

    async def send(self, message: dict[str, Any], *, timeout: float, max_bytes: int,
                   on_message: OnMessage | None = None) -> dict[str, Any] | None:
        if self.closed:
            raise McpError("expired", "the server's event stream ended")
        if "id" not in message:
            await self._post(message, timeout)
            return None
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message["id"]] = (future, on_message)
        try:
            await self._post(message, timeout)
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise McpError("timeout", f"the server did not answer within {timeout:g} s") from None
        finally:
            self._pending.pop(message["id"], None)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        self.closed = True


Transport = StreamableHttp | LegacySse
