"""Every web.AppKey of the application, in one place."""
from __future__ import annotations

import concurrent.futures

import aiohttp
from aiohttp import web

from models.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
STORE = web.AppKey("store", "Store")
EVENTS = web.AppKey("events", "EventBus")
OPTIONS = web.AppKey("options", "OptionsService")
SESSIONS = web.AppKey("sessions", "SessionManager")
LIMITER = web.AppKey("limiter", "RateLimiter")
HTTP = web.AppKey("http", aiohttp.ClientSession)
ENQUEUE_POOL = web.AppKey("enqueue_pool", concurrent.futures.ThreadPoolExecutor)
START_TIME = web.AppKey("start_time", int)

# Per-request storage
REQUEST_ID = web.RequestKey("request_id", str)
CLIENT_IP = web.RequestKey("client_ip", str)
SESSION = web.RequestKey("session", object)  # Session | None once loaded
SESSION_COOKIE = web.RequestKey("session_cookie", str)  # pending cookie value; "" clears it
USER = web.RequestKey("user", object)  # models.User | None once authenticated
