"""Redis locks, all of one kind: a key set only if absent, holding its holder's token, with an
expiry; only the holder may extend or delete it (compare-and-act scripts).

`acquire` / `refresh` / `release` are the parts; `lease_lock` holds a lock on a short lease that
it renews while the block works: a holder that dies (kill -9, a lost machine) blocks the others for
one lease at most, while a long job keeps its lock."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator

from redis.exceptions import LockError

from .store import Store

log = logging.getLogger(__name__)
LEASE = 10.0  # seconds

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
async def lease_lock(store: Store, key: str, *, lease: float = LEASE, wait: float = 60.0) -> AsyncIterator[None]:
    """Hold `key` while the block runs; wait up to `wait` seconds for it (LockError after)."""
    lock = store.redis.lock(key, timeout=lease, blocking_timeout=wait)
    if not await lock.acquire():
        raise LockError(f"could not acquire {key} within {wait:g} s")

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease / 3)
            try:
                await lock.reacquire()  # the TTL back to a full lease
            except Exception as exc:  # lost (expired under a stall) or Redis unreachable: stop renewing
                log.warning("lock %s not renewed: %s", key, exc)
                return

    renewal = asyncio.get_running_loop().create_task(renew())
    try:
        yield
    finally:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewal
        with contextlib.suppress(LockError):
            await lock.release()
