# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Routing that keeps prompt caches warm: sessions pinned to their channel and key, multi-key
channels, least-busy choice (api/relay/affinity.py, api/relay/load.py, api/channels/index.py)."""
from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from api import keys
from api.channels.admin import set_status
from api.relay import affinity
from api.upstream.base import RelayMode
from models import Channel, Log
from models.enums import ChannelStatus, LogType
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    add_channel,
    announce_channel,
    drain,
    gateway,
    headers_for,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "system", "content": "You are terse."},
                                       {"role": "user", "content": "hi"}]}


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


async def ask(gateway, token, session: str | None = None, body: dict | None = None) -> tuple[int, dict]:
    headers = headers_for(token) | ({"X-Session-Id": session} if session else {})
    resp = await gateway.post("/v1/chat/completions", json=body or BODY, headers=headers)
    raw = await resp.read()
    return resp.status, orjson.loads(raw) if raw.startswith(b"{") else {}


def served(*fakes: FakeUpstream) -> list[int]:
    return [len(f.seen) for f in fakes]


# -- finding a session --------------------------------------------------------------------------------


def request_with(headers: dict[str, str] | None = None) -> web.Request:
    return make_mocked_request("POST", "/v1/chat/completions", headers=headers or {})


@pytest.mark.parametrize(("headers", "native", "expected"), [
    ({"X-Session-Id": "abc"}, {}, ("header", "abc")),
    ({}, {"metadata": {"user_id": orjson.dumps({"device_id": "d", "session_id": "s-1"}).decode()}},
     ("claude-code", "s-1")),
    ({}, {"metadata": {"user_id": "user_ab12_account_x_session_5f0c-11"}}, ("claude-code", "5f0c-11")),
    ({"X-Claude-Code-Session-Id": "cc-9"}, {"metadata": {"user_id": "user_x"}}, ("claude-code", "cc-9")),
    ({"session_id": "codex-1"}, {"prompt_cache_key": "codex-1"}, ("codex", "codex-1")),
    ({}, {"prompt_cache_key": "pck"}, ("prompt_cache_key", "pck")),
    ({}, {"cachedContent": "cachedContents/77"}, ("cached_content", "cachedContents/77")),
    ({}, {"user": "u-5"}, ("user", "u-5")),
    ({}, {"metadata": {"user_id": "not a claude id"}}, ("", "")),
])
def test_the_session_is_found_in_what_clients_send(headers, native, expected) -> None:
    assert affinity.identify(request_with(headers), native, {}) == expected


def test_a_conversation_without_an_id_is_known_by_its_stable_prefix() -> None:
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    system = {"role": "system", "content": "You are a coding agent. " * 3000}  # a long prompt is sketched
    first = {"model": "m", "tools": tools, "messages": [system, {"role": "user", "content": "fix the bug"}]}
    later = {**first, "messages": [*first["messages"], {"role": "assistant", "content": "done"},
                                   {"role": "user", "content": "thanks"}]}
    other_task = {**first, "messages": [system, {"role": "user", "content": "write docs"}]}
    other_tools = {**first, "tools": []}
    same_length = {**first, "messages": [system, {"role": "user", "content": "fix the bag"}]}
    digests = [affinity.prefix_digest(b) for b in (first, later, other_task, other_tools, same_length)]
    assert digests[0] == digests[1]
    assert len(set(digests)) == 4  # a first message as long as another's, between long shared parts, counts
    session = affinity.session_of(request_with(), RelayMode.CHAT, first, first, 300)
    assert session is not None and session.source == "prefix" and session.digest == digests[0]
    assert affinity.session_of(request_with(), RelayMode.EMBEDDINGS, first, first, 300) is None


def test_the_pin_lives_as_long_as_the_cache_the_request_asks_for() -> None:
    hour = {"system": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    last_turn = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]}
    assert affinity.lifetime({}, 300) == 300
    assert affinity.lifetime(hour, 300) == 3600
    assert affinity.lifetime(last_turn, 300) == 3600
    assert affinity.lifetime({"prompt_cache_retention": "24h"}, 300) == 86400
    assert affinity.lifetime({"system": [{"type": "text", "cache_control": {"type": "ephemeral"}}]}, 300) == 300


# -- pins ------------------------------------------------------------------------------------------


async def three_channels(gateway, upstreams, **fields: Any) -> tuple[list[FakeUpstream], list[Channel]]:
    fakes = [await upstreams() for _ in range(3)]
    channels = [await add_channel(gateway, f, name=f"c{i}", **fields) for i, f in enumerate(fakes)]
    return fakes, channels


async def test_a_session_stays_on_one_channel_and_the_log_says_so(gateway, upstreams) -> None:
    fakes, _ = await three_channels(gateway, upstreams)
    token = await make_key(await rich_user())
    for session in ("s1", "s2", "s3", "s4", "s5", "s6"):
        before = served(*fakes)
        for _ in range(4):
            assert (await ask(gateway, token, session))[0] == 200
        after = served(*fakes)
        assert sorted(a - b for a, b in zip(after, before, strict=True)) == [0, 0, 4], session
    await drain(gateway)
    others = [orjson.loads(log.other) for log in await Log.filter(type=LogType.CONSUME).order_by("id")]
    assert [o["affinity"] for o in others[:4]] == ["new", "hit", "hit", "hit"]
    assert {o["session_source"] for o in others} == {"header"}
    metrics = await (await gateway.get("/metrics")).text()
    assert 'gateway_affinity_total{outcome="hit",source="header"} 18' in metrics
    assert 'gateway_affinity_total{outcome="new",source="header"} 6' in metrics


async def test_without_affinity_a_session_spreads_over_the_channels(gateway, upstreams) -> None:
    fakes, _ = await three_channels(gateway, upstreams)
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    relay_of(gateway).index._rng = random.Random(7)
    token = await make_key(await rich_user())
    for _ in range(30):
        assert (await ask(gateway, token, "one-session"))[0] == 200
    assert all(n > 0 for n in served(*fakes))
    await drain(gateway)
    assert all("affinity" not in log.other for log in await Log.filter(type=LogType.CONSUME))


def pinned_fake(fakes: list[FakeUpstream], channels: list[Channel]) -> tuple[FakeUpstream, Channel]:
    i = next(i for i, f in enumerate(fakes) if f.seen)
    return fakes[i], channels[i]


async def test_a_disabled_pin_moves_and_the_move_is_counted(gateway, upstreams) -> None:
    fakes, channels = await three_channels(gateway, upstreams)
    token = await make_key(await rich_user())
    assert (await ask(gateway, token, "s"))[0] == 200
    fake, channel = pinned_fake(fakes, channels)
    await set_status(channel.id, ChannelStatus.MANUALLY_DISABLED, only_from=(ChannelStatus.ENABLED,), events=None)
    await announce_channel(gateway, channel.id)
    before = served(*fakes)
    for _ in range(3):
        assert (await ask(gateway, token, "s"))[0] == 200
    moved = [a - b for a, b in zip(served(*fakes), before, strict=True)]
    assert moved[fakes.index(fake)] == 0 and sorted(moved) == [0, 0, 3]  # moved once, then stays
    await drain(gateway)
    others = [orjson.loads(log.other)["affinity"] for log in await Log.filter(type=LogType.CONSUME).order_by("id")]
    assert others == ["new", "moved", "hit", "hit"]


async def test_a_failing_pin_moves_within_the_request(gateway, upstreams) -> None:
    fakes, channels = await three_channels(gateway, upstreams)
    await set_option(gateway, "RetryTimes", "1")
    token = await make_key(await rich_user())
    assert (await ask(gateway, token, "s"))[0] == 200
    fake, _ = pinned_fake(fakes, channels)
    fake.fail_status = 500
    before = served(*fakes)
    assert (await ask(gateway, token, "s"))[0] == 200  # retried on another channel
    assert (await ask(gateway, token, "s"))[0] == 200  # and the session went with it
    after = [a - b for a, b in zip(served(*fakes), before, strict=True)]
    assert after[fakes.index(fake)] == 1 and sorted(after) == [0, 1, 2]


async def test_a_saturated_pin_yields_while_another_channel_can_serve(gateway, upstreams) -> None:
    gate = asyncio.Event()
    fakes, channels = await three_channels(gateway, upstreams, max_inflight=1)
    token = await make_key(await rich_user())
    assert (await ask(gateway, token, "s"))[0] == 200
    fake, _ = pinned_fake(fakes, channels)
    fake.gate = gate
    held = asyncio.ensure_future(ask(gateway, token, "s"))  # the pinned channel's one request at a time
    await eventually(lambda: asyncio.sleep(0, fake.waiting == 1))
    before = served(*fakes)
    assert (await ask(gateway, token, "s"))[0] == 200
    after = [a - b for a, b in zip(served(*fakes), before, strict=True)]
    assert after[fakes.index(fake)] == 0 and sum(after) == 1
    gate.set()
    assert (await held)[0] == 200


async def test_the_pin_never_crosses_the_model_or_group_a_key_may_use(gateway, upstreams) -> None:
    fake_a, fake_b = await upstreams(), await upstreams()
    await add_channel(gateway, fake_a, models="gpt-4")
    await add_channel(gateway, fake_b, models="gpt-4o", group="vip")
    token = await make_key(await rich_user())
    assert (await ask(gateway, token, "s"))[0] == 200
    status, body = await ask(gateway, token, "s", {**BODY, "model": "gpt-4o"})
    assert status == 503 and len(fake_b.seen) == 0  # the vip channel is not this user's, pin or not


async def test_pins_are_shared_by_api_processes(gateway, api_process, upstreams) -> None:
    import aiohttp

    fakes = [await upstreams() for _ in range(3)]
    for i, fake in enumerate(fakes):
        await Channel.create(name=f"c{i}", key="sk-upstream", base_url=fake.url, models="gpt-4", type=1)
    token = await make_key(await rich_user())
    _, first = await api_process()
    _, second = await api_process()
    async with aiohttp.ClientSession() as http:
        for n in range(6):
            channels_used = set()
            for base in (first, second, first, second):
                before = served(*fakes)
                async with http.post(base + "/v1/chat/completions", json=BODY,
                                     headers=headers_for(token) | {"X-Session-Id": f"shared-{n}"}) as resp:
                    assert resp.status == 200, await resp.text()
                now = served(*fakes)
                channels_used |= {i for i in range(3) if now[i] > before[i]}
            assert len(channels_used) == 1, f"session {n} was served by channels {channels_used}"
