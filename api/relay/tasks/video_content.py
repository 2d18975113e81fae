"""`GET /v1/videos/{id}/content`: a finished video's bytes, asked of the channel that made it.

Proxied (the default, option VideoContentMode = proxy): the bytes stream through the gateway, at most
MAX_VIDEO_BYTES within CONTENT_TIMEOUT. With VideoContentMode = redirect, an upstream that answers
the content with a redirect to a signed URL (Gemini's file downloads do) has the client sent there,
but only when that URL carries none of the channel's secrets and passes the media policy (http or
https, to a public address: api/upstream/media.py; MediaFetchPrivateEnabled allows private ones), as
a URL the gateway fetches itself must: a client is never sent to loopback, link-local (cloud metadata)
or private addresses, nor to another scheme, on an upstream's word (such a redirect is answered 502).
Every other answer is proxied. A URL that needs the channel's key (Gemini's file URIs, OpenAI-format
content routes) is never handed out, and is only ever asked of the channel's own origin. A redirect
the gateway follows itself goes under the same policy, without the key.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin

import aiohttp
from aiohttp import web
from yarl import URL

from api import keys
from api.relay.state import relay_state
from api.relay.tasks.relay import call, task_error, task_key
from api.relay.tasks.video_shape import properties, result
from api.upstream import call as upstream
from api.upstream import media
from api.upstream.base import UpstreamRequest
from api.upstream.errors import RelayError
from api.upstream.providers.gemini.veo import VeoGeminiAdaptor
from api.upstream.providers.jimeng import JimengAdaptor
from api.upstream.providers.kling import KlingAdaptor
from api.upstream.providers.openai_videos import OpenAIVideoAdaptor
from api.upstream.providers.seedance import SeedanceAdaptor
from api.upstream.providers.vertex.veo import VeoVertexAdaptor, inline_video
from api.upstream.providers.vidu import ViduAdaptor
from api.upstream.registry import VIDEO_ADAPTORS
from api.upstream.task_base import TaskAdaptor, upstream_request
from api.web.header_values import header_value

log = logging.getLogger("api.relay")
MAX_VIDEO_BYTES = 512 * 1024 * 1024
CONTENT_TIMEOUT = 300.0
DELETE_TIMEOUT = 30.0
CHUNK = 256 * 1024
VARIANTS = ("video", "thumbnail", "spritesheet")


async def delete_upstream(request: web.Request, row: Any) -> None:
    """A deleted video's copy deleted upstream too where the protocol can (OpenAI's video API); best effort:
    a failure is logged, the gateway's deletion stands (the upstream copy expires on its own)."""
    channel = relay_state(request).index.get(row.channel_id)
    upstream_id = str(properties(row).get("upstream_id") or "")
    if channel is None or not upstream_id or VIDEO_ADAPTORS.get(channel.type) is not OpenAIVideoAdaptor:
        return
    channel = task_key(channel)
    adaptor = OpenAIVideoAdaptor(channel.base_url, channel.key, channel.other)
    http = relay_state(request).http or request.config_dict[keys.HTTP]
    try:
        status, raw = await call(http, adaptor.delete(upstream_id), DELETE_TIMEOUT, channel.type, adaptor.answer_limit,
                                 adaptor)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        log.warning("video %s: its upstream copy was not deleted (%s)", row.task_id, type(exc).__name__)
        return
    if status not in (200, 404):
        log.warning("video %s: its upstream copy was not deleted (HTTP %s: %s)", row.task_id, status,
                    adaptor.mask(raw[:200].decode("utf-8", "replace")))


def _unavailable(request: web.Request) -> RelayError:
    return task_error(request, 502, "relay_task_unreachable", "upstream_unreachable")


async def video_content(request: web.Request, row: Any, variant: str) -> web.StreamResponse:
    """The content of the caller's finished video `row`."""
    channel = relay_state(request).index.get(row.channel_id)
    if channel is None:
        raise task_error(request, 503, "relay_task_channel_gone", "channel_unavailable", id=row.task_id)
    channel = task_key(channel)
    adaptor: TaskAdaptor = VIDEO_ADAPTORS[channel.type](channel.base_url, channel.key, channel.other)
    http = relay_state(request).http or request.config_dict[keys.HTTP]
    secrets = [s for s in (channel.key, *(k for _, k, _ in channel.keys)) if s]
    if variant != "video" and not isinstance(adaptor, OpenAIVideoAdaptor):
        raise task_error(request, 400, "relay_task_invalid", "invalid_request",
                         reason=f"variant {variant} is not available for this video")
    upstream_id = str(properties(row).get("upstream_id") or "")
    if isinstance(adaptor, VeoVertexAdaptor):  # the video is inline in the finished operation
        try:
            status, raw = await call(http, adaptor.fetch([upstream_id]), CONTENT_TIMEOUT, channel.type,
                                     adaptor.answer_limit, adaptor)
        except (aiohttp.ClientError, TimeoutError, ValueError):
            raise _unavailable(request) from None
        video = inline_video(raw) if status == 200 else None
        if video is None:
            raise _unavailable(request)
        return web.Response(body=video[1], headers={"Content-Type": header_value(video[0])})
    if isinstance(adaptor, ViduAdaptor | KlingAdaptor | JimengAdaptor):  # a signed or CDN URL needing no credential
        url = adaptor.content_url(result(row))
        if url is None or any(s in url for s in secrets):  # never a URL that carries the channel's secrets
            raise _unavailable(request)
        return await _signed(request, http, url, channel.type, secrets)
    if isinstance(adaptor, SeedanceAdaptor):  # a signed URL that needs no key (and lives 24 hours)
        return await _signed(request, http, str(result(row).get("url") or ""), channel.type, secrets)
    if isinstance(adaptor, VeoGeminiAdaptor):
        found = adaptor.content(result(row))
        if found is None:  # a URI off the channel's origin is never sent the key
            raise _unavailable(request)
        up = found
    else:
        assert isinstance(adaptor, OpenAIVideoAdaptor)
        up = adaptor.content(upstream_id, variant)
    return await _relay(request, http, up, channel.type, secrets, adaptor)


async def _open(http: aiohttp.ClientSession, up: UpstreamRequest, channel_type: int,
                adaptor: TaskAdaptor | None = None) -> Any:
    return await upstream.call(http, up, aiohttp.ClientTimeout(total=CONTENT_TIMEOUT), caller=upstream.TASK,
                               channel_type=channel_type, adaptor=adaptor)


async def _relay(request: web.Request, http: aiohttp.ClientSession, up: UpstreamRequest, channel_type: int,
                 secrets: list[str], adaptor: TaskAdaptor) -> web.StreamResponse:
    try:
        resp = await _open(http, up, channel_type, adaptor)
    except RelayError:
        raise _unavailable(request) from None
    if resp.status in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
        location = urljoin(up.url, resp.headers["Location"])
        resp.release()
        options = relay_state(request).options or request.config_dict[keys.OPTIONS]
        carries_secret = any(s in location for s in secrets)
        if options.get("VideoContentMode") == "redirect" and not carries_secret:
            await _hand_out(request, location)
        resp = await _follow(request, http, location, channel_type)
    if resp.status != 200:
        log.info("video content: the upstream answered HTTP %s", resp.status)
        resp.release()
        raise _unavailable(request)
    return await _stream(request, resp)


async def _signed(request: web.Request, http: aiohttp.ClientSession, url: str, channel_type: int,
                  secrets: list[str]) -> web.StreamResponse:
    """A result URL that needs no key: handed to the client (redirect mode) or fetched under the media policy."""
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    if options.get("VideoContentMode") == "redirect" and url and not any(s in url for s in secrets):
        await _hand_out(request, url)
    resp = await _follow(request, http, url, channel_type)
    if resp.status != 200:
        log.info("video content: the result URL answered HTTP %s", resp.status)
        resp.release()
        raise _unavailable(request)
    return await _stream(request, resp)


async def _hand_out(request: web.Request, url: str) -> None:
    """Redirect mode: the client sent to `url` when the media policy allows it; else 502, as the gateway
    itself would refuse to fetch it."""
    raise web.HTTPFound(await _check_policy(request, url))


async def _check_policy(request: web.Request, url: str) -> URL:
    """`url` is http or https, to a host that resolves to public addresses only (private ones too with
    MediaFetchPrivateEnabled): else 502. Parsed once, by the parser that writes a Location and opens a
    connection (yarl), and that parse is what is handed out or fetched: a URL another parser would read
    another host from (a backslash before `@`) or a port out of range is refused, never a 500."""
    try:
        parsed = URL(url)
        port = parsed.port
    except ValueError:  # a backslash in the authority, a port out of range or not a number, a bad IDNA host
        raise _unavailable(request) from None
    if parsed.scheme not in ("http", "https") or not parsed.host or port is None:
        raise _unavailable(request)
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    try:
        await media.check_host(parsed.host, port, options.get_bool("MediaFetchPrivateEnabled"))
    except RelayError:
        raise _unavailable(request) from None
    return parsed


async def _follow(request: web.Request, http: aiohttp.ClientSession, url: str, channel_type: int) -> Any:
    """One redirect, followed without the key, under the media policy."""
    checked = await _check_policy(request, url)
    try:
        return await _open(http, upstream_request("GET", str(checked), {}), channel_type)
    except RelayError:
        raise _unavailable(request) from None


async def _stream(request: web.Request, resp: Any) -> web.StreamResponse:
    length = resp.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > MAX_VIDEO_BYTES:
        resp.release()
        raise task_error(request, 502, "relay_task_invalid", "upstream_error", reason="the video is too large")
    out = web.StreamResponse(headers={"Content-Type": header_value(resp.headers.get("Content-Type", "video/mp4"))})
    if length.isdigit():
        out.content_length = int(length)
    await out.prepare(request)
    sent = 0
    try:
        async for chunk in resp.content.iter_chunked(CHUNK):
            sent += len(chunk)
            if sent > MAX_VIDEO_BYTES:
                break  # cut: the client sees a short body
            await out.write(chunk)
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.info("video content cut: %s", type(exc).__name__)
    finally:
        resp.release()
    await out.write_eof()
    return out
