"""Worker jobs sent from the event loop without blocking it (a broker's send is synchronous)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from typing import Protocol


class Send(Protocol):
    """Enqueues an actor's message by name (workers.broker.send, given at start-up)."""

    def __call__(self, actor_name: str, *args: object, delay_ms: int | None = None, **kwargs: object) -> object: ...


class Jobs:
    """Sends actor messages by name from a thread pool (the API's own; None: the loop's default)."""

    def __init__(self, send: Send, pool: concurrent.futures.ThreadPoolExecutor | None = None) -> None:
        self._send = send
        self._pool = pool

    async def send(self, actor_name: str, *args: object, delay_ms: int | None = None, **kwargs: object) -> object:
        call = functools.partial(self._send, actor_name, *args, delay_ms=delay_ms, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)
