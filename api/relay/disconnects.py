"""Clients that go away while their request waits on the upstream.

aiohttp does not cancel a handler whose client disconnected (handler cancellation is off: it would
cut console handlers between a database commit and the Redis update that follows it). The relay
wants exactly that for its own requests (docs/billing.md, Partial answers: the upstream request is
cancelled and a non-streamed request is refunded), so each relay handler registers here and one loop
per process cancels the handlers whose connection is gone, a fraction of a second after it went.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from aiohttp import web

log = logging.getLogger("api.relay")
INTERVAL = 0.25  # seconds between two looks at the open connections


def client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


class DisconnectWatcher:
    def __init__(self) -> None:
        self._watched: dict[asyncio.Task[Any], web.Request] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self.stopping = False  # the server is stopping: a cancelled request ends with a clear error

    def server_stopped(self, request: web.Request) -> bool:
        """Inside `except CancelledError`: True (and the cancellation absorbed) when it came from the
        server stopping while the client is still there, so the request can end in words."""
        if not self.stopping or client_gone(request):
            return False
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        return True

    async def drain(self, grace: float) -> int:
        """The server stops: wait up to `grace` seconds for the watched requests to end, then cancel
        the rest with `stopping` set (a stream ends with an error event and is billed for its output,
        a request still waiting for its answer gets 503 and is refunded). Returns how many were cut."""
        if self._watched and grace > 0:  # no new ones: the server no longer listens
            await asyncio.wait(set(self._watched), timeout=grace)
        self.stopping = True
        left = [task for task in self._watched if not task.done()]
        for task in left:
            task.cancel()
        if left:
            log.warning("server stopping: %d relay requests still running after %.0f s were ended", len(left), grace)
            await asyncio.wait(left, timeout=5)
        return len(left)

    @contextlib.contextmanager
    def watch(self, request: web.Request) -> Iterator[None]:
        """While the block runs, the current task is cancelled if the request's client leaves."""
        task = asyncio.current_task()
        if task is None:
            yield
            return
        self._watched[task] = request
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.get_running_loop().create_task(self._run(), name="relay-disconnects")
        try:
            yield
        finally:
            self._watched.pop(task, None)

    async def _run(self) -> None:
        while self._watched:
            await asyncio.sleep(INTERVAL)
            for task, request in list(self._watched.items()):
                if client_gone(request) and not task.done():
                    log.info("client of %s %s went away: request cancelled", request.method, request.path)
                    del self._watched[task]
                    task.cancel()

    async def close(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
