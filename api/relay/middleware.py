"""The relay's sub-applications and their middleware: CORS for browser clients, and errors answered in
the client's shape (OpenAI's `{"error": {message, type, param, code}}` by default) with real status
codes and the request id in the message; Redis or the database unreachable is a 503 with Retry-After."""
from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.typedefs import Handler

from api import keys
from api.errors import ApiError
from api.i18n import language, translate
from api.middlewares import REDIS_DOWN, RETRY_AFTER
from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.inbound.base import REQUEST_INBOUND
from api.relay.refusals import error_response
from api.upstream.errors import RelayError
from models.db import database_unreachable

log = logging.getLogger("api.relay")


def unavailable(request: web.Request) -> web.Response:
    """Redis or the database unreachable: 503 with Retry-After, in the client's format."""
    err = RelayError(503, translate("service_unavailable", language(request)), "new_api_error",
                     "service_unavailable", local=True)
    err.headers = {"Retry-After": str(RETRY_AFTER)}
    return error_response(request, err)


@web.middleware
async def openai_errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """RelayError → its status and OpenAI-shaped body; unknown paths 404, wrong methods 405."""
    try:
        return await handler(request)
    except RelayError as err:
        return error_response(request, err)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        lang = language(request)
        if exc.status in (404, 405):
            if request.get(REQUEST_INBOUND) is None and request.path.startswith("/v1/messages"):
                request[REQUEST_INBOUND] = AnthropicInbound  # Anthropic's routes answer in Anthropic's shape
            message = translate("relay_invalid_url", lang, method=request.method, path=request.path)
            return error_response(request, RelayError(exc.status, message, "invalid_request_error", local=True))
        return error_response(request, RelayError(exc.status, exc.reason, "invalid_request_error", local=True))
    except REDIS_DOWN as exc:
        log.warning("Redis unreachable on %s %s: %s", request.method, request.path, exc)
        return unavailable(request)
    except ApiError as exc:  # a console check (playground session) refused the caller
        return error_response(request, RelayError(exc.status if exc.status >= 400 else 403,
                                                  translate(exc.message, language(request), **exc.params),
                                                  "new_api_error", exc.message, local=True))
    except Exception as exc:
        if database_unreachable(exc):
            log.warning("database unreachable on %s %s (request id %s): %r", request.method, request.path,
                        request.get(keys.REQUEST_ID), exc)
            return unavailable(request)
        log.exception("relay error on %s %s (request id %s)", request.method, request.path,
                      request.get(keys.REQUEST_ID))
        return error_response(request, RelayError(500, translate("relay_internal", language(request)),
                                                  "new_api_error", "internal_error", local=True))


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Browser clients (chat front-ends) call the relay from other origins."""
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        return web.Response(status=204, headers={
            "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
            "Access-Control-Allow-Headers": request.headers.get("Access-Control-Request-Headers", "*"),
            "Access-Control-Max-Age": "86400"})
    response = await handler(request)
    if not response.prepared:
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
    return response


def relay_sub_app() -> web.Application:
    """A sub-application answering in the relay's shape (CORS, OpenAI-shaped errors)."""
    sub = web.Application()
    # Order (outermost first): CORS headers on everything, errors become OpenAI-shaped answers.
    sub.middlewares.append(cors_middleware)
    sub.middlewares.append(openai_errors_middleware)
    return sub
