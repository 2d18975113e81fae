"""The credential cache: single-flight exchanges, refresh before expiry off the request path,
failures that propagate to the waiters and never poison the cache."""
from __future__ import annotations

import asyncio

import pytest

from api.upstream.credentials import Credential, CredentialCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_concurrent_gets_share_one_exchange() -> None:
    gate, calls = asyncio.Event(), []

    async def fetch() -> Credential:
        calls.append(1)
        await gate.wait()
        return Credential("tok", 10_000_000_000)

    cache = CredentialCache()
    waiters = [asyncio.create_task(cache.get("k", fetch)) for _ in range(20)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*waiters) == ["tok"] * 20 and len(calls) == 1
    assert await cache.get("k", fetch) == "tok" and len(calls) == 1


async def test_refreshed_in_the_background_before_it_expires() -> None:
    clock, issued = Clock(), []
    refresh_started, release = asyncio.Event(), asyncio.Event()

    async def fetch() -> Credential:
        issued.append(f"tok-{len(issued) + 1}")
        if len(issued) > 1:
            refresh_started.set()
            await release.wait()
        return Credential(issued[-1], clock.now + 3600)

    cache = CredentialCache(refresh_margin=300, clock=clock)
    assert await cache.get("k", fetch) == "tok-1"
    clock.now += 3600 - 200  # 200 s left: inside the margin, still valid
    assert await cache.get("k", fetch) == "tok-1"  # answered at once with the current token
    await refresh_started.wait()
    assert await cache.get("k", fetch) == "tok-1" and issued == ["tok-1", "tok-2"]  # one refresh only
    refresh = cache._inflight["k"]
    release.set()
    await refresh
    assert await cache.get("k", fetch) == "tok-2" and issued == ["tok-1", "tok-2"]


async def test_expired_is_fetched_and_failures_propagate_then_retry() -> None:
    clock, attempts = Clock(), []

    async def fetch() -> Credential:
        attempts.append(1)
        if len(attempts) == 2:
            raise RuntimeError("token endpoint down")
        return Credential(f"tok-{len(attempts)}", clock.now + 60)

    cache = CredentialCache(refresh_margin=10, clock=clock)
    assert await cache.get("k", fetch) == "tok-1"
    clock.now += 61  # expired: the next caller waits for a new one
    with pytest.raises(RuntimeError):
        await cache.get("k", fetch)
    assert await cache.get("k", fetch) == "tok-3"


async def test_background_failure_keeps_the_current_credential(caplog) -> None:
    clock, attempts = Clock(), []

    async def fetch() -> Credential:
        attempts.append(1)
        if len(attempts) == 2:
            raise RuntimeError("refresh failed")
        return Credential(f"tok-{len(attempts)}", clock.now + 100)

    cache = CredentialCache(refresh_margin=50, clock=clock)
    assert await cache.get("k", fetch) == "tok-1"
    clock.now += 60
    assert await cache.get("k", fetch) == "tok-1"
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(attempts) == 2 and "refresh failed" in caplog.text
    assert await cache.get("k", fetch) == "tok-1"  # kept, and a new refresh is tried
    await cache.close()


async def test_bounded() -> None:
    async def fetch() -> Credential:
        return Credential("v", 10_000_000_000)

    cache = CredentialCache(max_entries=3)
    for key in "abcde":
        await cache.get(key, fetch)
    assert list(cache._entries) == ["c", "d", "e"]
