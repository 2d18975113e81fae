# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Fault scenarios on real processes (`python -m api`, `python -m workers`, `python -m scheduler`),
killed or stopped with real signals, each ending with the billing invariant (tests/faults/ledger.py)
and the service answering again: an API process killed while many streams settle, a storm of
clients leaving, SIGTERM to every process group with streams open."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time

import aiohttp

from api.services.store import Store
from api.upstream.catalogue import ChannelType
from models import Channel
from tests.conftest import process_env
from tests.faults.ledger import accounts, chat, check_books, report
from tests.helpers import eventually
from tests.relay.fakes import make_key, rich_user, upstreams  # noqa: F401

TTL = 60  # RESERVATION_TTL of the API processes here; the sweep runs with the clock moved past it


def auth(token) -> dict[str, str]:
    return {"Authorization": f"Bearer sk-{token.key}"}


async def read_until(resp: aiohttp.ClientResponse, pieces: int) -> bytes:
    got = b""
    while got.count(b'"content"') < pieces + 1:  # the role chunk, then `pieces` pieces
        line = await resp.content.readline()
        if not line:
            break
        got += line
    return got


async def test_api_killed_while_many_streams_settle(client, settings, api_process, upstreams) -> None:
    """Twelve streams with output checkpointed; six end, and as they settle the API process gets
    SIGKILL: each stream is billed once, by its own settlement if it ran, else by the sweep from
    its checkpoint."""
    feeds: list[asyncio.Queue] = []
    fake = await upstreams(feeds=feeds)
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    books = await accounts(4)
    proc, url = await api_process(CHECKPOINT_INTERVAL="0.05", RESERVATION_TTL=str(TTL))
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    async with aiohttp.ClientSession() as http:
        try:
            streams = [await http.post(f"{url}/v1/chat/completions", json=chat(True), headers=auth(t))
                       for t in books.tokens for _ in range(3)]
            for feed in feeds:
                for _ in range(3):
                    await feed.put("word ")
            for resp in streams:
                await read_until(resp, 3)

            async def all_checkpointed() -> bool:
                for user in books.users:
                    entries = await store.redis.hgetall(f"{store.prefix}{{u{user.id}}}:resv")
                    if sum(1 for k, v in entries.items() if k.endswith("#") and int(v.split("|")[1]) > 0) != 3:
                        return False
                return True

            await eventually(all_checkpointed, timeout=20)
            for feed in feeds[::2]:
                feed.put_nowait(None)  # half the streams end now…

            async def one_settled() -> bool:
                left = 0
                for user in books.users:
                    left += await store.redis.hlen(f"{store.prefix}{{u{user.id}}}:resv")
                return left < 2 * len(streams)

            await eventually(one_settled, timeout=20, interval=0.002)
            os.killpg(proc.proc.pid, signal.SIGKILL)  # …and the process dies as they settle
            await asyncio.to_thread(proc.proc.wait)
            for resp in streams:
                resp.close()
            summary = await check_books(store, books, sweep_after=TTL + 1)
            assert summary.logs == len(streams)  # each stream billed, once
            assert summary.orphans == summary.incomplete and 6 <= summary.orphans < 12
        finally:
            await store.close()
    report(f"API process killed (SIGKILL) with {len(streams)} streams open, half of them settling",
           "streams cut off (those already ended: complete)",
           "each stream once: settled in full, or by the sweep for its checkpointed output", summary)


async def test_client_disconnect_storm(client, settings, api_process, upstreams) -> None:
    """Forty clients leave at once, half streamed mid-answer, half waiting for a non-streamed one."""
    gate = asyncio.Event()
    streaming = await upstreams(hang_after=3)
    waiting = await upstreams(gate=gate)
    await Channel.create(name="streams", key="sk-a", base_url=streaming.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    await Channel.create(name="answers", key="sk-b", base_url=waiting.url, models="gpt-3.5-turbo",
                         type=int(ChannelType.OPENAI))
    books = await accounts(4)
    proc, url = await api_process(CHECKPOINT_INTERVAL="0.05", RESERVATION_TTL=str(TTL))
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    sessions = [aiohttp.ClientSession() for _ in range(40)]
    try:
        streams = [await s.post(f"{url}/v1/chat/completions", json=chat(True), headers=auth(books.tokens[i % 4]))
                   for i, s in enumerate(sessions[:20])]
        for resp in streams:
            await read_until(resp, 3)
        body = {**chat(False), "model": "gpt-3.5-turbo"}
        pending = [asyncio.ensure_future(s.post(f"{url}/v1/chat/completions", json=body,
                                                headers=auth(books.tokens[i % 4])))
                   for i, s in enumerate(sessions[20:])]
        await eventually(lambda: asyncio.sleep(0, waiting.waiting == 20), timeout=20)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for resp in streams:
            resp.close()
        for s in sessions:
            await s.close()  # every client gone at once

        async def all_closed() -> bool:
            for user in books.users:
                if await store.redis.exists(f"{store.prefix}{{u{user.id}}}:resv"):
                    return False
            return True

        await eventually(all_closed, timeout=30)  # every reservation closed by its own process
        gate.set()
        summary = await check_books(store, books)
        assert summary.logs == 20 and summary.incomplete == 20  # the streams, for what they delivered
        assert summary.orphans == 0
        async with aiohttp.ClientSession() as http, http.post(
                f"{url}/v1/chat/completions", json=body, headers=auth(books.tokens[0])) as resp:
            assert resp.status == 200  # answering again
        await eventually(lambda: asyncio.sleep(0, proc.proc.poll() is None))
    finally:
        for s in sessions:
            await s.close()
        await store.close()
    report("40 clients leave at once: 20 mid-stream, 20 waiting for a non-streamed answer",
           "(gone)", "streams: prompt and the output produced until the client left; the non-streamed "
           "requests nothing (their upstream calls cancelled)", summary)


async def test_sigterm_to_every_process_group(client, settings, api_process, worker, spawn, upstreams) -> None:
    """SIGTERM to the API, worker and scheduler groups with streams open: each exits within its
    grace, the streams are billed for their output, nothing is left open."""
    fake = await upstreams(hang_after=4)
    waiting = await upstreams(gate=asyncio.Event())
    await Channel.create(name="fake", key="sk-upstream", base_url=fake.url, models="gpt-4",
                         type=int(ChannelType.OPENAI))
    await Channel.create(name="slow", key="sk-upstream", base_url=waiting.url, models="gpt-3.5-turbo",
                         type=int(ChannelType.OPENAI))
    books = await accounts(3)
    api, url = await api_process(CHECKPOINT_INTERVAL="0.05", RESERVATION_TTL=str(TTL), SHUTDOWN_TIMEOUT="2")
    scheduler = spawn([sys.executable, "-m", "scheduler"], process_env(settings), name="scheduler")
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    async with aiohttp.ClientSession() as http:
        try:
            streams = [await http.post(f"{url}/v1/chat/completions", json=chat(True), headers=auth(t))
                       for t in books.tokens for _ in range(2)]
            for resp in streams:
                await read_until(resp, 4)
            answer = asyncio.ensure_future(http.post(f"{url}/v1/chat/completions", headers=auth(books.tokens[0]),
                                                     json={**chat(False), "model": "gpt-3.5-turbo"}))
            await eventually(lambda: asyncio.sleep(0, waiting.waiting == 1), timeout=20)
            started = time.monotonic()
            for proc in (api, worker, scheduler):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.proc.pid, signal.SIGTERM)
            exits = await asyncio.gather(*(asyncio.wait_for(asyncio.to_thread(p.proc.wait), 30)
                                           for p in (api, worker, scheduler)))
            took = time.monotonic() - started
            assert all(code is not None for code in exits)
            refused = await answer
            assert refused.status == 503 and refused.headers["Retry-After"] == "5"  # and not charged
            assert (await refused.json())["error"]["code"] == "service_unavailable"
            tails = [await resp.content.read() for resp in streams]
            assert all(b"shutting down" in tail and tail.rstrip().endswith(b"[DONE]") for tail in tails), tails
            summary = await check_books(store, books, sweep_after=TTL + 1)
            assert summary.logs == len(streams) and summary.incomplete == len(streams)
        finally:
            await store.close()
    report(f"SIGTERM to every process group (API, worker, scheduler) with {len(streams)} streams open",
           "streams ended after the API's grace (SHUTDOWN_TIMEOUT) with an error event and [DONE], a "
           "request waiting for its answer 503 + Retry-After; "
           f"every process gone in {took:.1f} s",
           "each stream for its output so far, once; the waiting request nothing", summary)
