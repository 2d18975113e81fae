"""A Redis lock held on a short lease that its holder renews while it works: a holder that dies
(kill -9, a lost machine) blocks the others for one lease at most, while a long job keeps its lock."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from redis.exceptions import LockError

from .store import Store

log = logging.getLogger(__name__)
LEASE = 10.0  # seconds


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
