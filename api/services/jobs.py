"""Worker jobs sent from the event loop without blocking it (dramatiq's send is synchronous)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools

import dramatiq

from workers.broker import send


class Jobs:
    """Sends actor messages by name from a thread pool (the API's own; None: the loop's default)."""

    def __init__(self, pool: concurrent.futures.ThreadPoolExecutor | None = None) -> None:
        self._pool = pool

    async def send(self, actor_name: str, *args: object, delay_ms: int | None = None,
                   **kwargs: object) -> dramatiq.Message:
        call = functools.partial(send, actor_name, *args, delay_ms=delay_ms, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)
