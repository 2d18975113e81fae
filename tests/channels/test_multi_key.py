# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Multi-key channels in the relay: each mode's choice of key, a session kept on its key, a refused
key retried on another and disabled on its own, the channel following its keys, keys coming back."""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import orjson
from aiohttp import web

from api import keys
from api.channels import keys as channel_keys
from api.channels import monitor
from api.services.logs import log_dict
from models import Channel, Log, keyring
from models.enums import ChannelStatus, LogType, Role
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    Seen,
    announce_channel,
    drain,
    gateway,
    headers_for,
    make_key,
    relay_of,
    rich_user,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}
KEYS = [f"sk-key-{c}-0123456789abcdef" for c in "abcd"]


@dataclass
class KeyedUpstream(FakeUpstream):
    """An OpenAI-compatible upstream that knows its keys: a refused one answers 401 as OpenAI does."""

    refused: set[str] = field(default_factory=set)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if key in self.refused:
            self.seen.append(Seen(request.path, dict(request.headers), {}, None))
            return web.json_response({"error": {"message": "Incorrect API key provided: sk-key…", "type":
                                                "invalid_request_error", "param": None, "code": "invalid_api_key"}},
                                     status=401)
        return await super().chat(request)

    def keys_used(self) -> list[str]:
        return [s.headers.get("Authorization", "").removeprefix("Bearer ") for s in self.seen]


async def keyed(aiohttp_server, **behaviour) -> KeyedUpstream:
    fake = KeyedUpstream(**behaviour)
    fake.server = await aiohttp_server(fake.app())
    return fake


async def multi_channel(gateway, fake: FakeUpstream, mode: str, keys_: list[str] = KEYS, **fields) -> Channel:
    ring = keyring.Keyring(multi=True, mode=mode, keys=list(keys_))
    channel = await Channel.create(name=fields.pop("name", "multi"), type=1, base_url=fake.url, models="gpt-4",
                                   key=ring.key_text(), channel_info=ring.info_text(), **fields)
    await announce_channel(gateway, channel.id)
    return channel


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


async def ask(gateway, token, session: str | None = None) -> int:
    headers = headers_for(token) | ({"X-Session-Id": session} if session else {})
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers)
    await resp.read()
    return resp.status


async def test_polling_takes_the_keys_in_turn(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server)
    await multi_channel(gateway, fake, "polling")
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    token = await make_key(await rich_user())
    for _ in range(8):
        assert await ask(gateway, token) == 200
    used = fake.keys_used()
    assert used[:4] == used[4:] and sorted(used[:4]) == sorted(KEYS)


async def test_random_uses_every_key(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server)
    await multi_channel(gateway, fake, "random")
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    relay_of(gateway).index._rng = random.Random(3)
    token = await make_key(await rich_user())
    for _ in range(40):
        assert await ask(gateway, token) == 200
    assert set(fake.keys_used()) == set(KEYS)


async def test_affinity_keeps_each_session_on_its_key(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server)
    channel = await multi_channel(gateway, fake, "affinity")
    token = await make_key(await rich_user())
    by_session: dict[str, set[str]] = {}
    for n in range(8):
        for _ in range(3):
            before = len(fake.seen)
            assert await ask(gateway, token, f"s{n}") == 200
            by_session.setdefault(f"s{n}", set()).update(fake.keys_used()[before:])
    assert all(len(used) == 1 for used in by_session.values()), by_session
    assert len(set().union(*by_session.values())) > 1  # sessions spread over the keys
    await drain(gateway)
    logs = [orjson.loads(log.other) for log in await Log.filter(type=LogType.CONSUME).order_by("id")]
    assert [o["affinity"] for o in logs[:3]] == ["new", "hit", "hit"]
    assert {o["key_index"] for o in logs} <= {0, 1, 2, 3}
    assert logs[0]["key_index"] == KEYS.index(next(iter(by_session["s0"])))
    assert all(key not in log.other for log in await Log.all() for key in KEYS)  # never a key in a log
    assert channel.id == logs[0]["admin_info"]["use_channel"][0]
    row = await Log.filter(type=LogType.CONSUME).first()
    assert row is not None
    mine = orjson.loads(log_dict(row, admin=False)["other"])  # what the user sees of their own log
    assert "key_index" not in mine and "admin_info" not in mine and mine["affinity"] == "new"


async def test_an_upstream_caching_per_channel_keeps_the_session_on_the_channel_only(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server)
    await multi_channel(gateway, fake, "affinity", cache_per_key=0)
    token = await make_key(await rich_user())
    for _ in range(12):
        assert await ask(gateway, token, "s") == 200
    assert len(set(fake.keys_used())) > 1  # the keys share one cache: any of them serves
    await drain(gateway)
    logs = [orjson.loads(log.other)["affinity"] for log in await Log.filter(type=LogType.CONSUME).order_by("id")]
    assert logs == ["new"] + ["hit"] * 11


async def test_a_refused_key_is_retried_on_another_and_disabled_alone(gateway, aiohttp_server, worker) -> None:
    fake = await keyed(aiohttp_server, refused={KEYS[1]})
    channel = await multi_channel(gateway, fake, "polling", KEYS[:3])
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    await set_option(gateway, "RetryTimes", "1")
    token = await make_key(await rich_user())
    for _ in range(3):
        assert await ask(gateway, token) == 200  # key 1's refusal retried on key 2 of the same channel
    used = fake.keys_used()
    assert used[:2] == [KEYS[0], KEYS[1]] and used.count(KEYS[1]) == 1  # out of this process's choice at once

    async def key_disabled() -> keyring.Keyring | None:
        row = await Channel.get(id=channel.id)
        ring = keyring.load(row.key, row.channel_info)
        return ring if ring.status(1) == keyring.AUTO else None

    ring = await eventually(key_disabled, timeout=60)
    assert "Incorrect API key" in ring.states[1].reason and ring.states[1].time > 0
    assert (await Channel.get(id=channel.id)).status == ChannelStatus.ENABLED  # the channel keeps its keys
    await announce_channel(gateway, channel.id)
    before = len(fake.seen)
    for _ in range(4):
        assert await ask(gateway, token) == 200
    assert KEYS[1] not in fake.keys_used()[before:]
    async def counted() -> channel_keys.KeyStats | None:  # counted off the request path
        stats = await channel_keys.key_stats(gateway.server.app[keys.STORE], channel.id)
        return stats.get(channel_keys.fingerprint(KEYS[1]))

    bad = await eventually(counted, timeout=10)
    assert bad.failed == 1 and "Incorrect API key" in bad.last_error and KEYS[1] not in bad.last_error


async def test_the_channel_follows_its_keys_and_they_come_back_when_they_answer(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server, refused={KEYS[0], KEYS[1]})
    channel = await multi_channel(gateway, fake, "random", KEYS[:2])
    app = gateway.server.app
    events = app[keys.EVENTS]
    for fp in (channel_keys.fingerprint(KEYS[0]), channel_keys.fingerprint(KEYS[1])):
        assert await channel_keys.set_key_status(channel.id, fp, keyring.AUTO, reason="status 401",
                                                 only_from=(keyring.ENABLED,), events=events)
    row = await Channel.get(id=channel.id)
    assert row.status == ChannelStatus.AUTO_DISABLED
    assert orjson.loads(row.other_info)["status_reason"] == channel_keys.ALL_KEYS_DISABLED
    # A key disabled by hand is not brought back by the monitor; one disabled automatically is.
    assert await channel_keys.set_key_status(channel.id, 1, keyring.MANUAL, events=events)
    fake.refused.clear()
    await set_option(gateway, "AutomaticEnableChannelEnabled", "true")
    deps = monitor.Deps(app[keys.STORE], app[keys.OPTIONS], events, app[keys.HTTP], _Sent())
    await monitor.test_and_apply(deps, await Channel.get(id=channel.id))
    row = await Channel.get(id=channel.id)
    ring = keyring.load(row.key, row.channel_info)
    assert (ring.status(0), ring.status(1)) == (keyring.ENABLED, keyring.MANUAL)
    assert row.status == ChannelStatus.ENABLED
    await announce_channel(gateway, channel.id)
    token = await make_key(await rich_user())
    assert await ask(gateway, token) == 200
    assert fake.keys_used()[-1] == KEYS[0]


async def test_the_monitor_disables_a_refused_key_not_the_channel(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server, refused={KEYS[0]})
    channel = await multi_channel(gateway, fake, "random", KEYS[:2])
    app = gateway.server.app
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    deps = monitor.Deps(app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS], app[keys.HTTP], _Sent())
    await monitor.test_and_apply(deps, await Channel.get(id=channel.id))
    row = await Channel.get(id=channel.id)
    ring = keyring.load(row.key, row.channel_info)
    assert row.status == ChannelStatus.ENABLED and ring.status(0) == keyring.AUTO and ring.status(1) == keyring.ENABLED
    assert Counter(fake.keys_used()) == Counter({KEYS[0]: 1})


class _Sent(list):
    async def __call__(self, actor: str, *args: object) -> None:
        self.append((actor, *args))


async def test_an_administrator_pinning_a_multi_key_channel_gets_its_first_enabled_key(gateway, aiohttp_server) -> None:
    fake = await keyed(aiohttp_server)
    ring = keyring.Keyring(multi=True, mode="random", keys=list(KEYS[:3]))
    ring.set_status(0, keyring.MANUAL)
    channel = await Channel.create(name="multi", type=1, base_url=fake.url, models="gpt-4", key=ring.key_text(),
                                   channel_info=ring.info_text())
    await announce_channel(gateway, channel.id)
    token = await make_key(await rich_user(role=int(Role.ADMIN)))
    for _ in range(3):
        resp = await gateway.post("/v1/chat/completions", json=BODY,
                                  headers={"Authorization": f"Bearer sk-{token.key}-{channel.id}"})
        assert resp.status == 200, await resp.text()
    assert fake.keys_used() == [KEYS[1]] * 3
