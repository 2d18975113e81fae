"""The API side of settlement: the relay's settle script stores each record in Redis, then
`SettlementSender` tells the workers which users have new records (one `billing.apply` message per
~250 ms per process, sent off the event loop); api.services.billing.settlement applies them."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from api.services.cancellation import raise_if_cancelled

log = logging.getLogger(__name__)
FLUSH_INTERVAL = 0.25  # seconds a process gathers users before it sends one billing.apply (fewer, larger batches)


class SettlementSender:
    """Collects the users with new records and sends `billing.apply` in batches, off the loop."""

    def __init__(self, send: Callable[..., Awaitable[Any]]) -> None:  # send(actor_name, *args): jobs.enqueue
        self._send = send
        self._dirty: set[int] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def mark(self, user_id: int) -> None:
        self._dirty.add(user_id)
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="settlements")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.flush()

    async def flush(self) -> None:
        if not self._dirty:
            return
        users, self._dirty = sorted(self._dirty), set()
        try:
            await self._send("billing.apply", users)
        except Exception:  # Redis down: the records are safe in Redis, billing.sweep applies them later
            log.exception("could not enqueue billing.apply for %d users", len(users))

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(FLUSH_INTERVAL)  # gather the users of the next ~250 ms in one message
            await self.flush()
            raise_if_cancelled()
