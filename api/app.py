"""The application factory: resources as cleanup contexts, the console and relay sub-apps."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from api import keys
from api.bodies import MAX_BODY, setup_bodies
from api.console.handlers.status import setup_status_cache
from api.console.playground import setup_playground
from api.console.routes import add_console_routes
from api.health import setup_health
from api.middlewares import (
    setup_api_rate_limit,
    setup_console_body,
    setup_envelope_errors,
    setup_request_id,
    setup_session_cookie,
)
from api.relay.routes import setup_relay
from api.relay.tasks.routes import setup_tasks
from api.security import setup_security_headers
from api.services.accounts.deps import Services
from api.services.configuration.bootstrap import ensure_root_user
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.jobs import Jobs
from api.services.ratelimit import RateLimiter
from api.services.store import Store
from api.static import setup_static
from api.web.sessions import SessionManager
from models.db import close_database, init_database
from models.settings import Settings
from workers.broker import send, setup_broker

log = logging.getLogger("api")


async def database_ctx(app: web.Application) -> AsyncIterator[None]:
    await init_database(app[keys.SETTINGS].database_url, timeouts=app[keys.SETTINGS].database_timeouts)
    await ensure_root_user(app[keys.SETTINGS].initial_root_password)
    yield
    await close_database()


async def redis_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    store = Store.from_settings(settings)
    app[keys.STORE] = store
    app[keys.LIMITER] = RateLimiter(store)
    app[keys.SESSIONS] = SessionManager(store, settings.session_secret, settings.session_ttl,
                                        settings.session_cookie_secure)
    yield
    await store.close()


async def events_ctx(app: web.Application) -> AsyncIterator[None]:
    """Options loaded, then the pub/sub listener keeps every cache of this process current."""
    events = EventBus(app[keys.STORE])
    app[keys.EVENTS] = events
    options = OptionsService(app[keys.STORE], events)
    app[keys.OPTIONS] = options
    listener = asyncio.get_running_loop().create_task(events.run(), name="events")
    await asyncio.wait_for(events.wait_ready(), 10)
    await options.load()
    yield
    listener.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await listener


async def http_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    connector = aiohttp.TCPConnector(limit=settings.upstream_pool_size, limit_per_host=0,
                                     keepalive_timeout=30, ttl_dns_cache=300)
    session = aiohttp.ClientSession(
        connector=connector, auto_decompress=False, skip_auto_headers=("User-Agent",),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout))
    app[keys.HTTP] = session
    yield
    await session.close()


async def enqueue_ctx(app: web.Application) -> AsyncIterator[None]:
    setup_broker(app[keys.SETTINGS])
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="enqueue")
    app[keys.JOBS] = Jobs(send, pool)
    app[keys.SERVICES] = Services(app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS], app[keys.SESSIONS],
                                  app[keys.JOBS])
    yield
    pool.shutdown(wait=True)


def create_console_app() -> web.Application:
    console = web.Application()
    # Order (outermost first): the session cookie a handler created or rotated is written on every
    # answer, failures included (a Turnstile pass survives a failed login) → errors become
    # envelopes → the per-IP limit runs before any other work → the body is read (bounded, UTF-8,
    # no NUL) before the handler.
    setup_session_cookie(console)
    setup_envelope_errors(console)
    setup_api_rate_limit(console)
    setup_console_body(console)
    add_console_routes(console)
    return console


def create_app(settings: Settings) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    app[keys.SETTINGS] = settings
    app[keys.START_TIME] = int(time.time())
    setup_request_id(app)  # every answer (console, relay, static) carries X-Oneapi-Request-Id
    setup_bodies(app)  # each route's bound on its inflated body; nothing unread is inflated
    setup_security_headers(app)
    app.cleanup_ctx.extend([database_ctx, redis_ctx, events_ctx, http_ctx, enqueue_ctx])
    setup_status_cache(app)
    app.add_subapp("/api", create_console_app())
    setup_relay(app)
    setup_playground(app)
    setup_tasks(app)
    setup_health(app)
    setup_static(app)  # last: the catch-all
    return app
