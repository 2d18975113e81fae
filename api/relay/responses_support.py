"""Which channels serve a client format's own endpoint (OpenAI's Responses API at `/v1/responses`,
its `/v1/responses/compact`), learnt from the channels themselves.

A channel of a native type whose upstream answers that path with 404 or 405 (an OpenAI-compatible
server without the Responses API, a proxy that only relays chat completions) is remembered as not
serving it, and the request is served at once on the same channel by conversion; the 404/405 is
not a failure of the channel (no health sample, no retry used). The mark is kept in this process
and in Redis (a hash under the deployment's prefix, field `<channel id>:<path>`, value the base URL
and the time), so every process skips the native attempt; it holds only while the channel keeps
that base URL, and for a day, after which the endpoint is tried again (an upstream may gain it).
A 404 that names the model is the model's (the upstream does not serve it), not the endpoint's.
The same answer to another endpoint than chat completions (an upstream serving chat only, asked for
embeddings) is not held against the channel either: another channel is tried (`check_route`).
"""
from __future__ import annotations

import logging
import time

import orjson

from api import keys
from api.channels.index import ChannelInfo
from api.relay.job import Job
from api.relay.state import NativeRouteMarks
from api.services import redis_keys
from api.upstream.base import RelayMode
from api.upstream.blame import names_the_request
from api.upstream.errors import ChannelCannotServe

log = logging.getLogger("api.relay")

RECHECK_AFTER = 86400.0  # seconds a mark holds before the endpoint is tried again
CACHE_FOR = 60.0  # seconds this process trusts what it read from Redis (or its absence)


class NativeRouteMissing(Exception):
    """The channel's upstream has no such endpoint: serve the request by conversion instead."""


def _marks(job: Job) -> NativeRouteMarks:
    return job.state.native_routes


def _field(channel: ChannelInfo, path: str) -> str:
    return f"{channel.id}:{path}"


def _holds(mark: tuple[str, float] | None, channel: ChannelInfo, now: float) -> bool:
    return mark is not None and mark[0] == channel.base_url and now - mark[1] < RECHECK_AFTER


async def serves(job: Job, channel: ChannelInfo, path: str) -> bool:
    """Whether to try `path` natively on this channel (False once it answered 404/405 there)."""
    marks, name, now = _marks(job), _field(channel, path), time.time()
    if now - marks.read_at.get(name, -CACHE_FOR) >= CACHE_FOR:
        store = job.request.config_dict[keys.STORE]
        raw = await store.redis.hget(redis_keys.native_missing(store), name)
        marks.read_at[name] = now
        if raw:
            value = orjson.loads(raw)
            marks.missing[name] = (str(value.get("base")), float(value.get("at") or 0))
        else:
            marks.missing.pop(name, None)
    return not _holds(marks.missing.get(name), channel, now)


async def native_attempt(job: Job, channel: ChannelInfo) -> bool:
    """Whether this attempt sends the client's own format: the channel's type speaks it, and its
    upstream has not been found without the endpoint."""
    inbound = job.inbound
    if inbound is None or inbound.on_answer is not None \
            or not inbound.native(channel.type, channel.upstream_model(job.model)):
        return False
    return inbound.native_path is None or await serves(job, channel, inbound.native_path)


def route_missing(status: int, body: bytes) -> bool:
    """An answer saying the endpoint does not exist: not that the model (an Azure deployment) does not,
    nor that something the request named is unknown (OpenAI's 404 "Item with id '…' not found." for an
    item it does not keep: the client's, api/upstream/blame.py)."""
    if status == 405:
        return True
    lowered = body.lower()
    if status != 404 or b"model" in lowered or b"deploymentnotfound" in lowered:
        return False  # the model (an Azure deployment) is missing, not the endpoint
    text = body[:2000].decode("utf-8", "replace")
    return not names_the_request(status, None, None, _message_of(text))


def _message_of(text: str) -> str:
    """The error message of a JSON error answer (OpenAI's shape), else the text itself."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or "")
    return str(err or text)


async def check_route(job: Job, channel: ChannelInfo, status: int, body: bytes, native: bool) -> None:
    """After an attempt failed, when the upstream lacks the endpoint asked for: natively, raise
    NativeRouteMissing (remembered). On another endpoint than chat completions (embeddings, images,
    audio… on an upstream that serves chat only), raise ChannelCannotServe: the request chose that
    endpoint, another channel may have it, and it must not count against a channel that serves chat
    (a missing chat endpoint is the channel's own fault: a wrong base URL). Any other failure is the
    channel's as usual."""
    if not route_missing(status, body):
        return
    if native:
        path = job.inbound.native_path if job.inbound is not None else None
        if path:
            await remember_missing(job, channel, path)
            raise NativeRouteMissing(path)
    elif job.mode != RelayMode.CHAT:
        raise ChannelCannotServe(status, job.mask(_message_of(body[:2000].decode("utf-8", "replace"))),
                                 "invalid_request_error", "endpoint_not_served", local=True)


async def remember_missing(job: Job, channel: ChannelInfo, path: str) -> None:
    marks, name, now = _marks(job), _field(channel, path), time.time()
    marks.missing[name] = (channel.base_url, now)
    marks.read_at[name] = now
    store = job.request.config_dict[keys.STORE]
    await store.redis.hset(redis_keys.native_missing(store), name,
                           orjson.dumps({"base": channel.base_url, "at": now}))
    log.info("channel %s answers no %s: its requests are converted from now on", channel.id, path)
