"""Resource lifetimes of a worker process, as Dramatiq middleware on the AsyncIO loop thread."""
from __future__ import annotations

import asyncio
import logging

import aiohttp
from dramatiq.asyncio import get_event_loop_thread
from dramatiq.middleware import Middleware, MiddlewareError

from api.services.events import EventBus
from api.services.options import OptionsService
from api.services.store import Store
from models.db import close_database, init_database
from models.settings import Settings

from .context import WorkerContext, set_context

log = logging.getLogger(__name__)


class TortoiseMiddleware(Middleware):
    """Tortoise on the worker's loop; the global fallback lets actor coroutines (started from other
    threads' contexts) see the connection set up here."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def before_worker_boot(self, broker, worker) -> None:
        try:
            get_event_loop_thread().run_coroutine(init_database(self.settings.database_url))
        except Exception as exc:
            raise MiddlewareError(f"database init failed: {exc}") from exc

    def before_worker_shutdown(self, broker, worker) -> None:
        get_event_loop_thread().run_coroutine(close_database())


class ResourcesMiddleware(Middleware):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._listener: asyncio.Task | None = None

    def before_worker_boot(self, broker, worker) -> None:
        get_event_loop_thread().run_coroutine(self._start())

    def before_worker_shutdown(self, broker, worker) -> None:
        get_event_loop_thread().run_coroutine(self._stop())

    async def _start(self) -> None:
        store = Store.from_url(self.settings.redis_url, self.settings.redis_prefix)
        events = EventBus(store)
        options = OptionsService(store, events)
        await options.load()
        self._listener = asyncio.get_running_loop().create_task(events.run())
        http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60, sock_connect=10))
        set_context(WorkerContext(self.settings, store, events, options, http))

    async def _stop(self) -> None:
        from .context import ctx

        context = ctx()
        if self._listener is not None:
            self._listener.cancel()
        await context.http.close()
        await context.store.close()
        set_context(None)
