"""Middlewares, one setup_<concern>(app) each; their order is written down in api/app.py."""
from __future__ import annotations

import logging
import os
import re
import time

from aiohttp import web
from aiohttp.typedefs import Handler
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from tortoise.exceptions import DoesNotExist

from api import keys
from api.bodies import message as body_message
from api.bodies import read_body, shown
from api.errors import ApiError, BadRequest, TooManyRequests
from api.i18n import language, translate
from api.response import fail
from api.web.net import client_ip
from models.db import database_refused_value, database_unreachable

log = logging.getLogger("api")
REQUEST_ID_HEADER = "X-Oneapi-Request-Id"


_stamp: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def new_request_id() -> str:
    """yyyyMMddHHmmss + 8 random hex chars: sortable, unique enough, safe to log. The time is
    formatted once per second (every request of that second shares the text)."""
    global _stamp
    now = int(time.time())
    if _stamp[0] != now:
        _stamp = (now, time.strftime("%Y%m%d%H%M%S", time.gmtime(now)))
    return _stamp[1] + os.urandom(4).hex()


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    request_id = new_request_id()
    request[keys.REQUEST_ID] = request_id
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers[REQUEST_ID_HEADER] = request_id
        raise
    if not response.prepared:
        response.headers[REQUEST_ID_HEADER] = request_id
    return response


def setup_request_id(app: web.Application) -> None:
    app.middlewares.append(request_id_middleware)


# Redis unreachable (down, restarting, a network cut): the request is refused at once, 503 with a
# Retry-After, never served free nor left hanging (docs/billing.md, Outages).
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)
RETRY_AFTER = 5  # seconds


def _unavailable(request: web.Request) -> web.Response:
    """Redis or the database unreachable: 503 with Retry-After, in the envelope."""
    response = fail(translate("service_unavailable", language(request)), status=503)
    response.headers["Retry-After"] = str(RETRY_AFTER)
    return response


@web.middleware
async def envelope_errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Domain exceptions → {success:false} envelopes; never a stack trace to the client."""
    try:
        return await handler(request)
    except ApiError as exc:
        return fail(translate(exc.message, language(request), **exc.params), status=exc.status)
    except DoesNotExist:
        return fail(translate("not_found", language(request)))
    except web.HTTPException as exc:
        if exc.status >= 400:
            return fail(exc.reason if exc.status != 404 else translate("not_found", language(request)),
                        status=exc.status)
        raise
    except REDIS_DOWN as exc:
        log.warning("Redis unreachable on %s %s: %s", request.method, request.path, exc)
        return _unavailable(request)
    except Exception as exc:
        if database_refused_value(exc):
            log.info("database refused a value on %s %s: %r", request.method, request.path, exc)
            return fail(translate("invalid_value", language(request)), status=400)
        if database_unreachable(exc):
            log.warning("database unreachable on %s %s (request id %s): %r", request.method, request.path,
                        request.get(keys.REQUEST_ID), exc)
            return _unavailable(request)
        log.exception("unhandled error on %s %s (request id %s)", request.method, request.path,
                      request.get(keys.REQUEST_ID))
        return fail(translate("internal_error", language(request)), status=500)


def setup_envelope_errors(app: web.Application) -> None:
    app.middlewares.append(envelope_errors_middleware)


_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")  # \u0000 escaped in JSON (not an escaped backslash + "u0000")
UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


@web.middleware
async def console_body_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A console body is UTF-8 text within the route's bound (api.bodies), read before the handler,
    and no console field may hold a NUL character (PostgreSQL refuses it; SQLite would store it)."""
    if "\x00" in request.path or "\x00" in request.query_string or "%00" in request.query_string:
        raise BadRequest("invalid_nul")
    if request.body_exists and request.method in {"POST", "PUT", "PATCH"}:
        charset = request.charset
        if charset is not None and charset.lower() not in UTF8_CHARSETS:
            raise BadRequest(body_message(request, "charset_unsupported", charset=shown(charset)))
        raw = await read_body(request)
        if b"\x00" in raw or (b"\\u0000" in raw and _JSON_NUL.search(raw)):
            raise BadRequest("invalid_nul")
        if not raw.isascii():
            try:
                raw.decode()
            except UnicodeDecodeError:
                raise BadRequest(body_message(request, "not_utf8")) from None
    return await handler(request)


def setup_console_body(app: web.Application) -> None:
    app.middlewares.append(console_body_middleware)


@web.middleware
async def api_rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The global per-IP limit of the console API (GlobalAPIRateLimit of the reference)."""
    settings = request.config_dict[keys.SETTINGS]
    allowed = await request.config_dict[keys.LIMITER].hit(
        "api", client_ip(request), settings.rate_limit_api, settings.rate_limit_window)
    if not allowed:
        raise TooManyRequests()
    return await handler(request)


def setup_api_rate_limit(app: web.Application) -> None:
    app.middlewares.append(api_rate_limit_middleware)


@web.middleware
async def session_cookie_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Writes the session cookie a handler created, rotated or cleared."""
    response = await handler(request)
    request.config_dict[keys.SESSIONS].apply_cookie(request, response)
    return response


def setup_session_cookie(app: web.Application) -> None:
    app.middlewares.append(session_cookie_middleware)
