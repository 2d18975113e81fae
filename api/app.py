"""The application factory: the process's resources as a cleanup context, the console and relay sub-apps."""
from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from api import keys
from api.bodies import MAX_BODY, setup_bodies
from api.console.handlers.status import setup_status_cache
from api.console.oidc_client import setup_jwks_cache
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
from api.relay.mcp.endpoint import setup_mcp
from api.relay.routes import setup_relay
from api.relay.tasks.routes import setup_tasks
from api.resources import HttpPool, open_resources
from api.security import setup_security_headers
from api.services.accounts.deps import Services
from api.services.ratelimit import RateLimiter
from api.static import setup_static
from api.web.sessions import SessionManager
from api.web.stopping import setup_stopping
from models.settings import Settings
from workers.broker import send, setup_broker

log = logging.getLogger("api")


def relay_http(settings: Settings) -> HttpPool:
    """The relay's session: one pool for every upstream; each call sets its own total and read timeouts
    (api.upstream.client.timeouts)."""
    return HttpPool(timeout=aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout),
                    limit=settings.upstream_pool_size, keepalive_timeout=30, ttl_dns_cache=300, passthrough=True)


async def resources_ctx(app: web.Application) -> AsyncIterator[None]:
    """The process's resources (api.resources) under the application's keys, and what the API builds on them."""
    settings = app[keys.SETTINGS]
    setup_broker(settings)
    async with open_resources(settings, send=send, http=relay_http(settings), listen=True, root_user=True,
                              jobs_threads=4) as resources:
        app[keys.STORE] = resources.store
        app[keys.EVENTS] = resources.events
        app[keys.OPTIONS] = resources.options
        app[keys.HTTP] = resources.http
        app[keys.JOBS] = resources.jobs
        app[keys.LIMITER] = RateLimiter(resources.store)
        app[keys.SESSIONS] = SessionManager(resources.store, settings.session_secret, settings.session_ttl,
                                            settings.session_cookie_secure)
        app[keys.SERVICES] = Services(resources.store, resources.options, resources.events, app[keys.SESSIONS],
                                      resources.jobs)
        yield


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
    app.cleanup_ctx.append(resources_ctx)  # first: the status cache and the relay start on these
    setup_status_cache(app)
    setup_jwks_cache(app)  # the custom OIDC providers' signing keys, per process
    app.add_subapp("/api", create_console_app())
    setup_relay(app)
    setup_mcp(app)  # /mcp: MCP servers' tools for keys (api/relay/mcp)
    setup_playground(app)
    setup_tasks(app)
    setup_health(app)
    setup_static(app)  # last: the catch-all
    setup_stopping(app)  # after every sub-app's hooks: a stop ends what they left within SHUTDOWN_TIMEOUT
    return app
