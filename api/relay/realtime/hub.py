"""This process's open Realtime sessions: the route's setup, and on shutdown every session closed with
an error event and a close frame (1001, going away) after its response in progress is billed."""
from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from aiohttp import web

log = logging.getLogger("api.relay")
SHUTDOWN_GRACE = 10.0  # seconds the sessions get to close and settle once the server stops


class Closable(Protocol):
    task: asyncio.Task[object] | None

    def stop(self, reason: str) -> None: ...


class Hub:
    def __init__(self) -> None:
        self.sessions: set[Closable] = set()
        self.stopping = False
        self.empty = asyncio.Event()  # no session open (each leaves once closed, settled and its place freed)
        self.empty.set()

    def add(self, session: Closable) -> None:
        self.sessions.add(session)
        self.empty.clear()

    def discard(self, session: Closable) -> None:
        self.sessions.discard(session)
        if not self.sessions:
            self.empty.set()

    async def close_all(self, grace: float = SHUTDOWN_GRACE) -> int:
        """Stop every session (each closes both sides and settles); returns how many were open."""
        self.stopping = True
        open_sessions = list(self.sessions)
        for session in open_sessions:
            session.stop("shutdown")
        try:
            async with asyncio.timeout(grace):
                await self.empty.wait()
        except TimeoutError:
            left = [s.task for s in self.sessions if s.task is not None and not s.task.done()]
            log.warning("%d realtime sessions still closing after %.0f s are cut", len(left), grace)
            for task in left:
                task.cancel()
        return len(open_sessions)


HUB = web.AppKey("realtime_hub", Hub)


async def close_sessions(app: web.Application) -> None:
    closed = await app[HUB].close_all()
    if closed:
        log.info("server stopping: %d realtime sessions closed", closed)

