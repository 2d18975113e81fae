# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Least-busy choice: requests in flight counted across processes (and forgotten when a process
dies), a slow channel given less traffic; and what prompt caching saved, in the hourly aggregates."""
from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass

import aiohttp
import orjson
from aiohttp import web

from api import keys
from api.relay.load import Load, inflight_totals
from api.services.billing import pricing
from models import Channel, Log, QuotaData
from models.enums import LogType
from tests.helpers import eventually
from tests.relay.fakes import (  # noqa: F401
    FakeUpstream,
    add_channel,
    drain,
    gateway,
    headers_for,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


async def test_every_process_sees_the_others_requests_in_flight(gateway) -> None:
    store = gateway.server.app[keys.STORE]
    first, second = Load(store, "proc-a"), Load(store, "proc-b")
    first.begin(7, "fp1")
    first.begin(7)
    second.begin(8)
    await first.sync()
    await second.sync()
    assert (second.inflight(7), second.key_inflight(7, "fp1"), second.inflight(8)) == (2, 1, 1)
    assert await inflight_totals(store) == {7: 2, 8: 1}
    first.end(7, "fp1")
    await first.sync()
    await second.sync()
    assert second.inflight(7) == 1 and second.key_inflight(7, "fp1") == 0
    await first.close()  # a process that stops says so
    await second.sync()
    assert second.inflight(7) == 0 and await inflight_totals(store) == {8: 1}
    await second.close()


async def test_a_killed_process_stops_counting(gateway, api_process, upstreams) -> None:
    gate = asyncio.Event()
    fake = await upstreams(gate=gate)
    channel = await Channel.create(name="held", key="sk-upstream", base_url=fake.url, models="gpt-4", type=1)
    token = await make_key(await rich_user())
    proc, base = await api_process()
    store = gateway.server.app[keys.STORE]
    async with aiohttp.ClientSession() as http:
        held = asyncio.ensure_future(http.post(base + "/v1/chat/completions", json=BODY, headers=headers_for(token)))

        async def counted() -> bool:
            return await inflight_totals(store) == {channel.id: 1}

        await eventually(counted, timeout=20)
        os.killpg(proc.proc.pid, signal.SIGKILL)
        proc.proc.wait()

        async def forgotten() -> bool:
            return await inflight_totals(store) == {}

        await eventually(forgotten, timeout=20)  # its count expires after a few missed syncs
        gate.set()
        try:
            await held
        except aiohttp.ClientError:
            pass  # the process died with the request


@dataclass
class SlowUpstream(FakeUpstream):
    delay: float = 0.0

    async def chat(self, request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(self.delay)
        return await super().chat(request)


async def slow_upstream(aiohttp_server, delay: float) -> SlowUpstream:
    fake = SlowUpstream(delay=delay)
    fake.server = await aiohttp_server(fake.app())
    return fake


async def share_of_slow(gateway, aiohttp_server, least_busy: bool) -> float:
    fast, slow = await slow_upstream(aiohttp_server, 0.01), await slow_upstream(aiohttp_server, 0.05)
    await add_channel(gateway, fast, name="fast")
    await add_channel(gateway, slow, name="slow")
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    await set_option(gateway, "ChannelLeastBusyEnabled", "true" if least_busy else "false")
    token = await make_key(await rich_user())

    async def client() -> None:  # each client sends its next request when the last one is answered
        for _ in range(50):
            resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
            assert resp.status == 200
            await resp.read()

    await asyncio.gather(*(client() for _ in range(4)))
    return len(slow.seen) / (len(slow.seen) + len(fast.seen))


async def test_least_busy_sends_less_to_a_channel_five_times_slower(gateway, aiohttp_server) -> None:
    share = await share_of_slow(gateway, aiohttp_server, least_busy=True)
    # Even weights: half each by weight alone; least-busy leaves the slow channel well under a third.
    assert share < 0.30, share


async def test_without_least_busy_the_weights_alone_decide(gateway, aiohttp_server) -> None:
    share = await share_of_slow(gateway, aiohttp_server, least_busy=False)
    assert 0.38 < share < 0.62, share


@dataclass
class CachingUpstream(FakeUpstream):
    """Reports part of the prompt as read from its cache, as OpenAI does."""

    cached: int = 0

    def _usage(self) -> dict | None:
        usage = super()._usage()
        if usage is not None and self.cached:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached}
        return usage


async def test_what_the_cache_saved_is_counted_by_the_hour_and_in_metrics(gateway, aiohttp_server) -> None:
    fake = CachingUpstream(usage=(1000, 10), cached=800)
    fake.server = await aiohttp_server(fake.app())
    channel = await add_channel(gateway, fake, models="gpt-4o")
    user = await rich_user()
    token = await make_key(user)
    for _ in range(3):
        resp = await gateway.post("/v1/chat/completions", json={**BODY, "model": "gpt-4o"},
                                  headers=headers_for(token) | {"X-Session-Id": "s"})
        assert resp.status == 200
        await resp.read()
    await drain(gateway)
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], "gpt-4o", "default")
    assert price.cache_ratio is not None and price.cache_ratio < 1
    full = pricing.settle_quota(price, 1000, 10)
    paid = pricing.settle_quota(price, 1000, 10, cached_tokens=800)
    assert 0 < paid < full
    row = await QuotaData.get(user_id=user.id, model_name="gpt-4o")
    assert (row.count, row.prompt_tokens, row.cache_tokens) == (3, 3000, 2400)
    assert row.saved_quota == 3 * (full - paid) and row.quota == 3 * paid
    log = await Log.filter(type=LogType.CONSUME).first()
    assert log is not None and orjson.loads(log.other)["cache_tokens"] == 800
    metrics = await (await gateway.get("/metrics")).text()
    assert f'gateway_prompt_tokens_total{{channel="{channel.id}"}} 3000' in metrics
    assert f'gateway_cached_prompt_tokens_total{{channel="{channel.id}"}} 2400' in metrics
    assert "gateway_channel_inflight" in metrics
    assert relay_of(gateway).load.inflight(channel.id) == 0
