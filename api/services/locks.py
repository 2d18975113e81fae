"""Redis locks, all of one kind: a key set only if absent, holding its holder's token, with an
expiry; only the holder may extend or delete it (compare-and-act scripts).

`acquire` / `refresh` / `release` are the parts; `lease_lock` holds a lock on a short lease that
it renews while the block works: a holder that dies (kill -9, a lost machine) blocks the others for
one lease at most, while a long job keeps its lock, up to `max_hold` seconds: a block stuck past
that (a database call that never returns) stops being renewed, and the lock lapses one lease later."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator

from redis.exceptions import LockError

from api.services.cancellation import raise_if_cancelled
from api.services.store import Store

log = logging.getLogger(__name__)
LEASE = 10.0  # seconds


class LockBusy(LockError):
    """Someone else holds the lock (and kept it for as long as the caller would wait)."""

_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
_REFRESH = ("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
            "return 0")


def new_token() -> str:
    return secrets.token_hex(8)


async def acquire(store: Store, key: str, ttl: float, token: str | None = None) -> str | None:
    """Take `key` for `ttl` seconds if it is free; the holder's token, or None when taken."""
    token = token or new_token()
    ok = await store.redis.set(key, token, nx=True, px=max(1, int(ttl * 1000)))
    return token if ok else None


async def refresh(store: Store, key: str, token: str, ttl: float) -> bool:
    """Extend the lock to `ttl` seconds from now if `token` still holds it."""
    return bool(await store.redis.eval(_REFRESH, 1, key, token, max(1, int(ttl * 1000))))


async def release(store: Store, key: str, token: str) -> bool:
    """Delete the lock if `token` still holds it (never someone else's)."""
    return bool(await store.redis.eval(_RELEASE, 1, key, token))


@contextlib.asynccontextmanager
async def lease_lock(store: Store, key: str, *, lease: float = LEASE, wait: float = 60.0,
                     max_hold: float | None = None) -> AsyncIterator[None]:
    """Hold `key` while the block runs, renewed for `max_hold` seconds at most (None: as long as
    it runs); wait up to `wait` seconds for it (0: one try), LockBusy after."""
    lock = store.redis.lock(key, timeout=lease, blocking_timeout=wait)
    if not await lock.acquire():
        raise LockBusy(f"could not acquire {key} within {wait:g} s")
    loop = asyncio.get_running_loop()
    renew_until = None if max_hold is None else loop.time() + max_hold

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease / 3)
            if renew_until is not None and loop.time() >= renew_until:
                log.warning("lock %s held past %g s: no longer renewed", key, max_hold)
                return
            try:
                await lock.reacquire()  # the TTL back to a full lease
            except Exception as exc:  # lost (expired under a stall) or Redis unreachable: stop renewing
                log.warning("lock %s not renewed: %s", key, exc)
                return
            raise_if_cancelled()

    renewal = loop.create_task(renew())
    try:
        yield
    finally:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewal
        with contextlib.suppress(LockError):
            await lock.release()
