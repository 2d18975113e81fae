"""A Midjourney task's media through the gateway: its image (GET /mj/image/{id}, no key: image tags
cannot send one) and its image seed (asked of the channel that ran it).

The image route is open to anyone who knows a task id, so it is rate-limited per client address
(the console's per-IP limit, its own bucket) and the fetched image is kept in Redis (IMAGE_TTL for a
finished task's image, PREVIEW_TTL for a progress image; at most IMAGE_CACHE_MAX bytes, larger ones
are fetched each time) under the task and its image URL: repeated views do not refetch upstream.
The upstream's URL is fetched under the media policy; an address inside the network is allowed only
when it is the task's own channel (same host AND port as its base URL: a proxy next to the
gateway, not any other service on that host) or MediaFetchPrivateEnabled is on.
"""
from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

import orjson
from aiohttp import web
from redis.client import NEVER_DECODE

from api import keys
from api.relay.caller import key_caller
from api.relay.state import relay_state
from api.relay.tasks.relay import call, origin_channel, path_id, task_error
from api.services import redis_keys
from api.services.store import Store
from api.upstream.media import fetch_image
from api.upstream.providers.midjourney import MidjourneyAdaptor
from api.upstream.task_base import SUCCESS
from api.web.header_values import header_value
from api.web.net import client_ip
from models import Midjourney

IMAGE_TTL = 3600  # seconds a finished task's image is kept
PREVIEW_TTL = 30  # seconds a progress image is kept (it changes as the task goes)
IMAGE_CACHE_MAX = 8 * 1024 * 1024
_PORTS = {"http": 80, "https": 443}


def host_and_port(url: str) -> tuple[str, int] | None:
    """(host, port) of a URL or a scheme-less address ("proxy:8080"); None when it has none."""
    parts = urlsplit(url if "://" in url else f"//{url}")
    try:
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower().rstrip(".")
    return (host, port or _PORTS.get(parts.scheme.lower(), 80)) if host else None


def is_channel_address(base_url: str, url: str) -> bool:
    """Whether `url` is served by the channel itself: the same host and port as its base URL."""
    own = host_and_port(base_url)
    return own is not None and own == host_and_port(url)


def _cache_key(store: Store, row: Midjourney) -> str:
    return redis_keys.mj_image(store, row.id, hashlib.sha256(row.image_url.encode()).hexdigest()[:24])


async def _kept(store: Store, key: str) -> tuple[str, bytes] | None:
    """(mime type, bytes) of a kept image (stored as `<mime>\n<bytes>`, read without decoding)."""
    raw = await store.redis.execute_command("GET", key, **{NEVER_DECODE: True})
    if not raw:
        return None
    mime, _, data = bytes(raw).partition(b"\n")
    return mime.decode(errors="replace"), data


async def _limited(request: web.Request) -> None:
    settings = request.config_dict[keys.SETTINGS]
    if not await request.config_dict[keys.LIMITER].hit(
            "mj-image", client_ip(request), settings.rate_limit_api, settings.rate_limit_window):
        raise task_error(request, 429, "too_many_requests", "rate_limit_exceeded")


async def mj_image(request: web.Request) -> web.Response:
    """GET /mj/image/{id}: the task's image (see the module's text)."""
    await _limited(request)
    task_id = path_id(request)
    row = await Midjourney.filter(mj_id=task_id).first() if task_id else None
    if row is None or not row.image_url:
        raise task_error(request, 404, "relay_task_no_image", "image_not_found", id=task_id)
    cache = "public, max-age=86400" if row.status == SUCCESS else "no-store"
    store: Store = request.config_dict[keys.STORE]
    key = _cache_key(store, row)
    kept = await _kept(store, key)
    if kept is not None:
        return web.Response(body=kept[1], content_type=header_value(kept[0]), headers={"Cache-Control": cache})
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    channel = relay_state(request).index.get(row.channel_id)
    # The proxy's own host and port may be private; each redirect hop is judged again.
    own = (lambda url: is_channel_address(channel.base_url, url)) if channel is not None else None
    mime, data = await fetch_image(row.image_url, allow_private=options.get_bool("MediaFetchPrivateEnabled"),
                                   private_ok=own)
    if len(data) <= IMAGE_CACHE_MAX and "\n" not in mime:
        await store.redis.set(key, mime.encode() + b"\n" + data, ex=IMAGE_TTL if row.status == SUCCESS else PREVIEW_TTL)
    return web.Response(body=data, content_type=header_value(mime), headers={"Cache-Control": cache})


async def mj_image_seed(request: web.Request) -> web.Response:
    """GET /mj/task/{id}/image-seed: asked of the channel that ran the caller's task; its answer with
    the channel's secrets masked."""
    caller = await key_caller(request, relay_state(request))
    task_id = path_id(request)
    row = await Midjourney.filter(mj_id=task_id, user_id=caller.user.id).first() if task_id else None
    if row is None:
        raise task_error(request, 404, "relay_task_not_found", "task_not_found", id=task_id)
    channel = await origin_channel(request, row, task_id)
    adaptor = MidjourneyAdaptor(channel.base_url, channel.key)
    http = relay_state(request).http or request.config_dict[keys.HTTP]
    try:
        status, raw = await call(http, adaptor.image_seed(task_id), 30.0, channel.type, adaptor=adaptor)
    except Exception:
        raise task_error(request, 502, "relay_task_unreachable", "upstream_unreachable") from None
    try:
        body: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = adaptor.mask(raw.decode(errors="replace"))
        return web.Response(text=body, status=status, content_type="text/plain")
    body = adaptor.public(body) if isinstance(body, dict) else adaptor.mask(body)
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")
