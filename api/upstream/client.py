"""Upstream HTTP over the application's one shared aiohttp.ClientSession (keep-alive pool).

Non-streamed calls are bounded by Settings.relay_timeout (0 = none); streamed calls by
Settings.streaming_timeout between two reads (an idle upstream times out, a slow but steady one
does not). Every failure becomes a RelayError the retry and auto-disable rules understand:
connection problems are the gateway's 502 `do_request_failed` (retried on another channel), timeouts
504 (never retried). What a client (and its error log) reads of a connection failure never names the
upstream's host or port; the operator's words, address included, are the error's `detail` (the
channel test shows them). Closing the response (`close`) drops the upstream connection: that is how a
client that went away cancels the upstream request.

`send` takes an adaptor's `UpstreamRequest`: any method over HTTP, or a WebSocket (the body is the
first text message; every text message received is then one line of the answer, so the adaptor
reads it as newline-delimited JSON, streamed or whole).
"""
from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from api.upstream.base import UpstreamRequest
from api.upstream.errors import RelayError

MAX_ERROR_BODY = 64 * 1024
MAX_BODY = 256 * 1024 * 1024  # images in base64 and audio can be large


class StreamInterrupted(Exception):
    """The upstream stream ended without its end marker: idle timeout or a cut connection."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@functools.lru_cache(maxsize=64)
def timeouts(stream: bool, relay_timeout: float, streaming_timeout: float) -> aiohttp.ClientTimeout:
    """(ClientTimeout is immutable: one per setting is shared by every request.)"""
    if stream:
        return aiohttp.ClientTimeout(total=None, sock_read=streaming_timeout or None)
    return aiohttp.ClientTimeout(total=relay_timeout or None)


async def send(session: aiohttp.ClientSession, req: UpstreamRequest,
               timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse | WebSocketAnswer:
    """Send the request; the response is open (read it, stream it, or close it)."""
    try:
        if req.transport == "websocket":
            return await _open_websocket(session, req, timeout)
        url = URL(req.url, encoded=True) if req.encoded else req.url
        return await session.request(req.method, url, data=req.body, headers=req.headers, timeout=timeout,
                                     allow_redirects=False)
    except TimeoutError as exc:
        raise RelayError(504, "the upstream did not answer in time", "upstream_error", "upstream_timeout") from exc
    except aiohttp.InvalidURL as exc:
        raise RelayError(500, "the channel's upstream URL is not valid", "upstream_error", "do_request_failed",
                         detail=f"invalid upstream URL: {exc}") from exc
    except aiohttp.WSServerHandshakeError as exc:
        raise RelayError(exc.status or 502, f"the upstream refused the WebSocket: {exc.message}", "upstream_error",
                         "do_request_failed") from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise RelayError(502, f"do request failed: {what_failed(exc, where=False)}", "upstream_error",
                         "do_request_failed", detail=f"do request failed: {what_failed(exc)}") from exc


def what_failed(exc: BaseException, *, where: bool = True) -> str:
    """A connection failure in words. `where`: with the upstream's host and port and the TLS library's
    reason, for an operator (the channel test, the server log); without, for a client and its log."""
    def at(host: object, port: object = None) -> str:
        return (f" ({host}:{port})" if port is not None else f" ({host})") if where else ""

    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"the upstream's host name{at(exc.host)} could not be resolved"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        reason = f": {exc.certificate_error}" if where else ""
        return f"the upstream's TLS certificate was not accepted{at(exc.host)}{reason}"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        reason = f": {exc.os_error}" if where else ""
        return f"the TLS handshake with the upstream failed{at(exc.host)}{reason}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        if isinstance(exc.os_error, ConnectionRefusedError):
            return f"the upstream refused the connection{at(exc.host, exc.port)}: nothing listens there"
        reason = exc.os_error.strerror or (str(exc.os_error) if where else "") or "unreachable"
        return f"could not connect to the upstream{at(exc.host, exc.port)}: {reason}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the upstream closed the connection without answering"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the upstream's answer was cut or malformed"
    if isinstance(exc, ConnectionResetError):
        return "the upstream reset the connection"
    if isinstance(exc, OSError) and exc.strerror:
        return f"the connection to the upstream failed: {exc.strerror}"
    return f"the request to the upstream failed ({type(exc).__name__})"  # its text may quote the URL and its key


class _Lines:
    """The `content` of a WebSocketAnswer: each text (or binary) message is one line."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, read_timeout: float | None) -> None:
        self._ws = ws
        self._timeout = read_timeout

    async def readany(self) -> bytes:
        msg = await self._ws.receive(timeout=self._timeout)
        if msg.type == aiohttp.WSMsgType.TEXT:
            text: str = msg.data  # WSMessage.data is typed Any; a TEXT message's is the decoded str
            return text.encode() + b"\n"
        if msg.type == aiohttp.WSMsgType.BINARY:
            return bytes(msg.data) + b"\n"
        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
            return b""
        if msg.type == aiohttp.WSMsgType.ERROR:
            raise aiohttp.ClientConnectionError(f"WebSocket error: {msg.data}")
        return await self.readany()  # ping/pong are answered by aiohttp

    async def iter_any(self) -> AsyncIterator[bytes]:
        while chunk := await self.readany():
            yield chunk


class WebSocketAnswer:
    """A WebSocket conversation seen as an HTTP answer: status 200, newline-delimited JSON body."""

    status = 200
    content_type = "application/x-ndjson"

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, read_timeout: float | None) -> None:
        self._ws = ws
        self.content = _Lines(ws, read_timeout)
        self.headers: CIMultiDictProxy[str] = CIMultiDictProxy(CIMultiDict({"Content-Type": self.content_type}))

    def release(self) -> None:
        self.close()

    def close(self) -> None:
        if not self._ws.closed:
            task = asyncio.get_running_loop().create_task(self._ws.close())
            _closing.add(task)
            task.add_done_callback(_closing.discard)


_closing: set[asyncio.Task[Any]] = set()

Answer = aiohttp.ClientResponse | WebSocketAnswer


async def _open_websocket(session: aiohttp.ClientSession, req: UpstreamRequest,
                          timeout: aiohttp.ClientTimeout) -> WebSocketAnswer:
    ws = await session.ws_connect(req.url, headers=req.headers, timeout=aiohttp.ClientWSTimeout(ws_close=5),
                                  autoping=True, max_msg_size=MAX_ERROR_BODY * 256)
    body = req.body
    if isinstance(body, bytes):
        await ws.send_str(body.decode())
    return WebSocketAnswer(ws, timeout.sock_read or timeout.total)


async def read_body(resp: Answer, limit: int = MAX_BODY) -> bytes:
    """The whole body of a non-streamed answer (bounded)."""
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_any():
            size += len(chunk)
            if size > limit:
                raise RelayError(502, "the upstream answer is too large", "upstream_error", "bad_response_body")
            chunks.append(chunk)
        return b"".join(chunks)
    except TimeoutError as exc:
        raise RelayError(504, "the upstream did not answer in time", "upstream_error", "upstream_timeout") from exc
    except aiohttp.ClientError as exc:
        raise RelayError(502, f"reading the upstream answer failed: {what_failed(exc, where=False)}",
                         "upstream_error", "bad_response_body",
                         detail=f"reading the upstream answer failed: {exc}") from exc
    finally:
        resp.release()


async def read_error(resp: Answer) -> bytes:
    try:
        return await read_body(resp, MAX_ERROR_BODY)
    except RelayError:
        return b""


async def iter_stream(resp: Answer) -> AsyncIterator[bytes]:
    """Raw chunks as they arrive; StreamInterrupted on an idle timeout or a cut connection."""
    content = resp.content
    while True:
        try:
            chunk = await content.readany()
        except TimeoutError as exc:
            raise StreamInterrupted("idle timeout: the upstream sent nothing for too long") from exc
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, OSError) as exc:
            raise StreamInterrupted(f"the upstream connection was cut: {what_failed(exc, where=False)}") from exc
        if not chunk:
            return
        yield chunk
