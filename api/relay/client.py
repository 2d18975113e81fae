"""Upstream HTTP over the application's one shared aiohttp.ClientSession (keep-alive pool).

Non-streamed calls are bounded by Settings.relay_timeout (0 = none); streamed calls by
Settings.streaming_timeout between two reads (an idle upstream times out, a slow but steady one
does not). Every failure becomes a RelayError the retry and auto-disable rules understand:
connection problems are 500 `do_request_failed` (retried on another channel), timeouts 504
(never retried). Closing the response (`close`) drops the upstream connection: that is how a
client that went away cancels the upstream request.
"""
from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping

import aiohttp

from api.relay.errors import RelayError

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


async def send(session: aiohttp.ClientSession, url: str, headers: Mapping[str, str], data: bytes | aiohttp.FormData,
               timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
    """POST to the upstream; the response is open (read it, stream it, or close it)."""
    try:
        return await session.post(url, data=data, headers=dict(headers), timeout=timeout, allow_redirects=False)
    except TimeoutError as exc:
        raise RelayError(504, "the upstream did not answer in time", "upstream_error", "upstream_timeout") from exc
    except aiohttp.InvalidURL as exc:
        raise RelayError(500, f"invalid upstream URL: {exc}", "upstream_error", "do_request_failed") from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise RelayError(500, f"do request failed: {type(exc).__name__}: {exc}", "upstream_error",
                         "do_request_failed") from exc


async def read_body(resp: aiohttp.ClientResponse, limit: int = MAX_BODY) -> bytes:
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
        raise RelayError(502, f"reading the upstream answer failed: {exc}", "upstream_error",
                         "bad_response_body") from exc
    finally:
        resp.release()


async def read_error(resp: aiohttp.ClientResponse) -> bytes:
    try:
        return await read_body(resp, MAX_ERROR_BODY)
    except RelayError:
        return b""


async def iter_stream(resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """Raw chunks as they arrive; StreamInterrupted on an idle timeout or a cut connection."""
    content = resp.content
    while True:
        try:
            chunk = await content.readany()
        except TimeoutError as exc:
            raise StreamInterrupted("idle timeout: the upstream sent nothing for too long") from exc
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, OSError) as exc:
            raise StreamInterrupted(f"the upstream connection was cut ({type(exc).__name__})") from exc
        if not chunk:
            return
        yield chunk
