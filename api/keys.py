"""Every web.AppKey of the application, in one place."""
from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from models.settings import Settings

if TYPE_CHECKING:  # the services import this module: their classes are named for the checker only
    from api.services.accounts.deps import Services
    from api.services.configuration.options import OptionsService
    from api.services.events import EventBus
    from api.services.jobs import Jobs
    from api.services.ratelimit import RateLimiter
    from api.services.store import Store
    from api.web.sessions import Session, SessionManager
    from models import User

SETTINGS = web.AppKey("settings", Settings)
STORE: web.AppKey[Store] = web.AppKey("store")
EVENTS: web.AppKey[EventBus] = web.AppKey("events")
OPTIONS: web.AppKey[OptionsService] = web.AppKey("options")
SESSIONS: web.AppKey[SessionManager] = web.AppKey("sessions")
LIMITER: web.AppKey[RateLimiter] = web.AppKey("limiter")
HTTP = web.AppKey("http", aiohttp.ClientSession)
JOBS: web.AppKey[Jobs] = web.AppKey("jobs")
SERVICES: web.AppKey[Services] = web.AppKey("services")  # what the account services act on
START_TIME = web.AppKey("start_time", int)

# Per-request storage
REQUEST_ID = web.RequestKey("request_id", str)
CLIENT_IP = web.RequestKey("client_ip", str)
SESSION: web.RequestKey[Session | None] = web.RequestKey("session")  # once loaded
SESSION_COOKIE = web.RequestKey("session_cookie", str)  # pending cookie value; "" clears it
USER: web.RequestKey[User | None] = web.RequestKey("user")  # once authenticated
