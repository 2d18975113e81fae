# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Least-busy choice: requests in flight counted across processes (and forgotten when a process
dies), a slow channel given less traffic; and what prompt caching saved, in the hourly aggregates."""
from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from dataclasses import dataclass

import aiohttp
import orjson

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


async def share_of_slow(gateway, upstreams, monkeypatch, least_busy: bool, ttfb: tuple[float, float] = (0.01, 0.01),
                        held_on_slow: int = 0) -> float:
    """The slow channel's share of 200 requests sent one after another, the channels' measured state
    set here: `ttfb` (fast, slow) as the chooser's averages, `held_on_slow` requests in flight on the
    slow channel (another process's). Each answer's own time to first byte is counted, not averaged
    in: how fast this machine happens to be does not move the state the choice is made from."""
    fast, slow = await upstreams(), await upstreams()
    fast_channel = await add_channel(gateway, fast, name="fast")
    slow_channel = await add_channel(gateway, slow, name="slow")
    await set_option(gateway, "ChannelAffinityEnabled", "false")
    await set_option(gateway, "ChannelLeastBusyEnabled", "true" if least_busy else "false")
    token = await make_key(await rich_user())
    load = relay_of(gateway).load
    load.observe(fast_channel.id, ttfb[0])
    load.observe(slow_channel.id, ttfb[1])
    measured: list[int] = []
    monkeypatch.setattr(load, "observe", lambda channel_id, seconds: measured.append(channel_id))
    for _ in range(held_on_slow):
        load.begin(slow_channel.id)
    try:
        for _ in range(200):
            resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
            assert resp.status == 200
            await resp.read()
    finally:
        for _ in range(held_on_slow):
            load.end(slow_channel.id)
    # answers' times to first byte were measured, each on the channel that gave it (a non-streamed
    # answer within a millisecond has no time to first byte and is not measured)
    counted = Counter(measured)
    assert measured and set(counted) <= {fast_channel.id, slow_channel.id}, counted
    assert counted[fast_channel.id] <= len(fast.seen) and counted[slow_channel.id] <= len(slow.seen), counted
    assert (load.latency(fast_channel.id), load.latency(slow_channel.id)) == ttfb
    return len(slow.seen) / (len(slow.seen) + len(fast.seen))


# Even weights: half each by weight alone. Least-busy divides each weight by (in flight + 1) × time to
# first byte, so a channel five times slower, or with four requests in flight beside an idle one, gets
# a sixth (expected 33 of 200; 60 is five standard deviations above).
async def test_least_busy_sends_less_to_a_channel_five_times_slower(gateway, upstreams, monkeypatch) -> None:
    share = await share_of_slow(gateway, upstreams, monkeypatch, least_busy=True, ttfb=(0.01, 0.05))
    assert share < 0.30, share


async def test_least_busy_sends_less_to_a_channel_with_requests_in_flight(gateway, upstreams, monkeypatch) -> None:
    share = await share_of_slow(gateway, upstreams, monkeypatch, least_busy=True, held_on_slow=4)
    assert share < 0.30, share


async def test_without_least_busy_the_weights_alone_decide(gateway, upstreams, monkeypatch) -> None:
    share = await share_of_slow(gateway, upstreams, monkeypatch, least_busy=False, ttfb=(0.01, 0.05),
                                held_on_slow=4)
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
