"""Relay routes: the OpenAI-format surface under /v1, the legacy
/dashboard/billing endpoints, and /metrics. Each prefix is a sub-app whose error middleware answers
OpenAI-shaped errors `{"error": {message, type, param, code}}` with real status codes and the request
id in the message (the root app puts the request id header on every answer).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from aiohttp import web

from api import keys
from api.channels.index import ChannelIndex
from api.errors import ApiError
from api.i18n import language, translate
from api.middlewares import REDIS_DOWN, RETRY_AFTER
from api.relay.affinity import Pins
from api.relay.auth import KeyAuth
from api.relay.counting import admit_count, client_count
from api.relay.dashboard import billing_subscription, billing_usage, metrics
from api.relay.handler import key_caller, read_input, requested_model, run
from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.inbound.base import REQUEST_INBOUND, Inbound
from api.relay.inbound.gemini import GeminiEmbedInbound, GeminiInbound
from api.relay.inbound.responses import ResponsesCompactInbound, ResponsesInbound
from api.relay.inbound.shapes import check_gemini_embed
from api.relay.job import error_response, refuse
from api.relay.load import Load
from api.relay.state import RELAY, RelayState, relay_state
from api.relay.validate import Invalid
from api.services.billing.quota import QuotaService
from api.services.billing.reservations import ReservationKeeper
from api.services.billing.settlement_sender import SettlementSender
from api.services.store import Store
from api.upstream import catalogue
from api.upstream.base import RelayMode
from api.upstream.errors import RelayError
from api.upstream.tokenizer import get_encoding
from models.db import database_unreachable

log = logging.getLogger("api.relay")
SHUTDOWN_GRACE = 10.0  # seconds background work may take once the server stops


# -- lifetime ---------------------------------------------------------------------------------------


async def relay_ctx(app: web.Application) -> AsyncIterator[None]:
    """Index, key cache, quota scripts and the settlement sender of this process."""
    store, events = app[keys.STORE], app[keys.EVENTS]
    index = ChannelIndex(usable=catalogue.usable)
    index.subscribe(events)
    await index.load()
    auth = KeyAuth(store)
    auth.subscribe(events)
    sender = SettlementSender(app[keys.JOBS].send)
    sender.start()
    # Warm the tokenizer (~0.3 s) in this thread: the server is not listening yet, and loading it in an
    # executor thread would leave that thread's malloc arena with ~2 MiB resident for good.
    get_encoding()
    settings = app[keys.SETTINGS]
    ttl_ms = int(settings.reservation_ttl * 1000)
    keeper = ReservationKeeper(store, ttl_ms, settings.checkpoint_interval)
    keeper.start()
    own_queues = settings.broker_url and settings.broker_url != settings.redis_url
    queues = Store.from_url(settings.broker_url, settings.redis_prefix, 4) if own_queues else store
    load = Load(store)
    load.start()
    app[RELAY] = RelayState(index=index, auth=auth, quota=QuotaService(store, ttl_ms), settlements=sender,
                            keeper=keeper, options=app[keys.OPTIONS], settings=settings, http=app[keys.HTTP],
                            queues=queues, load=load, pins=Pins(store))
    yield
    state = app[RELAY]
    if state.background:  # settlements waiting for Redis get a grace; the sweep closes what is left
        _, left = await asyncio.wait(set(state.background), timeout=SHUTDOWN_GRACE)
        for task in left:
            task.cancel()
        if left:
            log.warning("%d settlements still waiting for Redis at shutdown: their reservations are closed "
                        "by the sweep", len(left))
            await asyncio.gather(*left, return_exceptions=True)
    await keeper.stop()
    await load.close()
    await sender.stop()
    await state.disconnects.close()
    await index.close()
    if state.queues is not store:
        await state.queues.close()
    await state.credentials.close()  # refreshes in flight (the cached credentials stay for the process)


async def stop_relay(app: web.Application) -> None:
    """The server stops (listening already closed): running relay requests get SHUTDOWN_TIMEOUT
    seconds to end, then streams end with an error event and waiting requests get 503."""
    await app[RELAY].disconnects.drain(app[keys.SETTINGS].shutdown_timeout)


# -- errors and CORS --------------------------------------------------------------------------------


def unavailable(request: web.Request) -> web.Response:
    """Redis or the database unreachable: 503 with Retry-After, in the client's format."""
    err = RelayError(503, translate("service_unavailable", language(request)), "new_api_error",
                     "service_unavailable", local=True)
    err.headers = {"Retry-After": str(RETRY_AFTER)}
    return error_response(request, err)


@web.middleware
async def openai_errors_middleware(request: web.Request, handler):
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
            log.warning("database unreachable on %s %s: %r", request.method, request.path, exc)
            return unavailable(request)
        log.exception("relay error on %s %s (request id %s)", request.method, request.path,
                      request.get(keys.REQUEST_ID))
        return error_response(request, RelayError(500, translate("relay_internal", language(request)),
                                                  "new_api_error", "internal_error", local=True))


@web.middleware
async def cors_middleware(request: web.Request, handler):
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


# -- handlers ---------------------------------------------------------------------------------------


def relay_handler(mode: RelayMode, route: str):
    async def handle(request: web.Request) -> web.StreamResponse:
        caller = await key_caller(request, relay_state(request))
        return await run(request, mode, route, caller)

    handle.__name__ = f"relay_{mode}"
    return handle


def checked(request: web.Request, check: Callable[..., None], body: dict[str, Any], *args: Any) -> None:
    """The body as sent checked before it is read (api/relay/inbound/shapes.py): a problem is a 400
    naming the field, in the route's error shape."""
    try:
        check(body, *args)
    except Invalid as bad:
        err = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error",
                     param=bad.param, problem=bad.problem)
        err.param = bad.param
        raise err from None


def inbound_handler(inbound: type[Inbound], route: str):
    """A route of another client format: its errors are shaped its way from the first check on."""
    async def handle(request: web.Request) -> web.StreamResponse:
        request[REQUEST_INBOUND] = inbound
        caller = await key_caller(request, relay_state(request))
        body, _ = await read_input(request, RelayMode.CHAT)
        checked(request, inbound.check, body)
        return await run(request, RelayMode.CHAT, route, caller, inbound(body, request))

    handle.__name__ = f"relay_{inbound.name}"
    return handle


async def anthropic_count_tokens(request: web.Request) -> web.Response:
    """POST /v1/messages/count_tokens: the prompt's tokens as the gateway counts them (free)."""
    request[REQUEST_INBOUND] = AnthropicInbound
    await key_caller(request, relay_state(request))
    await admit_count(request)
    body, _ = await read_input(request, RelayMode.CHAT)
    checked(request, AnthropicInbound.check, body)
    converted = AnthropicInbound(body, request).openai
    requested_model(request, RelayMode.CHAT, converted)
    answer = {"input_tokens": await client_count(request, converted)}
    return web.Response(body=orjson.dumps(answer), content_type="application/json")


async def gemini_action(request: web.Request) -> web.StreamResponse:
    """POST /v1beta/models/{model}:{action} (and under /v1)."""
    request[REQUEST_INBOUND] = GeminiInbound
    model, _, action = request.match_info["target"].partition(":")
    model = model.removeprefix("models/")
    if action not in GEMINI_ACTIONS:
        raise web.HTTPNotFound()
    caller = await key_caller(request, relay_state(request))
    if action == "countTokens":
        await admit_count(request)
    body, _ = await read_input(request, RelayMode.CHAT)
    route = f"/{request.path.split('/')[1]}/models:{action}"
    if action in ("embedContent", "batchEmbedContents"):
        checked(request, check_gemini_embed, body, action == "batchEmbedContents")
        embed = GeminiEmbedInbound(body, request, model, batch=action == "batchEmbedContents")
        return await run(request, RelayMode.EMBEDDINGS, route, caller, embed)
    checked(request, GeminiInbound.check, body)
    if action == "countTokens":
        wrapped = body.get("generateContentRequest")
        inner: dict[str, Any] = wrapped if isinstance(wrapped, dict) else body
        counted = await client_count(request, GeminiInbound(inner, request, model).openai)
        return web.Response(body=orjson.dumps({"totalTokens": counted}), content_type="application/json")
    stream = action == "streamGenerateContent"
    inbound = GeminiInbound(body, request, model, stream=stream, sse=request.query.get("alt") == "sse")
    return await run(request, RelayMode.CHAT, route, caller, inbound)


def _gemini_model(model: str) -> dict:
    methods = (["embedContent", "batchEmbedContents"] if "embedding" in model
               else ["generateContent", "streamGenerateContent", "countTokens"])
    return {"name": f"models/{model}", "baseModelId": model, "version": "001", "displayName": model,
            "description": "", "supportedGenerationMethods": methods}


async def gemini_models(request: web.Request) -> web.Response:
    """GET /v1beta/models (and /v1/models with a Google key): the key's models in Google's shape."""
    request[REQUEST_INBOUND] = GeminiInbound
    models = await _key_models(request)
    body = {"models": [_gemini_model(m) for m in models]}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def gemini_model(request: web.Request) -> web.Response:
    request[REQUEST_INBOUND] = GeminiInbound
    model = request.match_info["model"].removeprefix("models/")
    if model not in await _key_models(request):
        raise refuse(request, 404, "relay_model_not_found", "model_not_found", "invalid_request_error", model=model)
    return web.Response(body=orjson.dumps(_gemini_model(model)), content_type="application/json")


def google_client(request: web.Request) -> bool:
    return "x-goog-api-key" in request.headers or ("key" in request.query and "Authorization" not in request.headers)


async def response_not_stored(request: web.Request) -> web.Response:
    raise RelayError(404, translate("relay_response_not_stored", language(request)), "invalid_request_error",
                     "response_not_found", local=True)


async def not_implemented(request: web.Request) -> web.Response:
    raise RelayError(501, translate("relay_not_implemented", language(request)), "new_api_error",
                     "api_not_implemented", local=True)


def _owned_by(model: str) -> str:
    lower = model.lower()
    for prefix, owner in (("gpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
                          ("dall-e", "openai"), ("whisper", "openai"), ("tts", "openai"), ("text-", "openai"),
                          ("chatgpt", "openai"), ("omni", "openai"), ("claude", "anthropic"), ("gemini", "google"),
                          ("deepseek", "deepseek"), ("qwen", "alibaba"), ("glm", "zhipu"), ("moonshot", "moonshot")):
        if lower.startswith(prefix):
            return owner
    return "custom"


def _model_object(model: str, created: int) -> dict:
    return {"id": model, "object": "model", "created": created, "owned_by": _owned_by(model)}


async def _key_models(request: web.Request) -> list[str]:
    state = relay_state(request)
    caller = await key_caller(request, state)
    token = caller.token
    if token is not None and token.model_limits is not None:
        return sorted(token.model_limits)
    group = (token.group if token and token.group else "") or caller.user.group
    return list(state.index.models(group))


async def list_models(request: web.Request) -> web.Response:
    if google_client(request):
        return await gemini_models(request)
    created = request.config_dict[keys.START_TIME]
    data = [_model_object(m, created) for m in await _key_models(request)]
    return web.Response(body=orjson.dumps({"object": "list", "data": data}), content_type="application/json")


async def get_model(request: web.Request) -> web.Response:
    if google_client(request):
        return await gemini_model(request)
    model = request.match_info["model"]
    if model not in await _key_models(request):
        raise refuse(request, 404, "relay_model_not_found", "model_not_found", "invalid_request_error", model=model)
    body = _model_object(model, request.config_dict[keys.START_TIME])
    return web.Response(body=orjson.dumps(body), content_type="application/json")


# -- tables -----------------------------------------------------------------------------------------


RELAYED: tuple[tuple[str, RelayMode], ...] = (
    ("/chat/completions", RelayMode.CHAT),
    ("/completions", RelayMode.COMPLETIONS),
    ("/embeddings", RelayMode.EMBEDDINGS),
    ("/engines/{model}/embeddings", RelayMode.EMBEDDINGS),
    ("/moderations", RelayMode.MODERATIONS),
    ("/images/generations", RelayMode.IMAGES),
    ("/audio/speech", RelayMode.SPEECH),
    ("/audio/transcriptions", RelayMode.TRANSCRIPTION),
    ("/audio/translations", RelayMode.TRANSLATION),
    ("/rerank", RelayMode.RERANK),
)
# OpenAI routes the gateway does not relay (reference: RelayNotImplemented).
NOT_IMPLEMENTED: tuple[tuple[str, str], ...] = (
    ("POST", "/edits"), ("POST", "/images/edits"), ("POST", "/images/variations"),
    ("GET", "/files"), ("POST", "/files"), ("GET", "/files/{id}"), ("DELETE", "/files/{id}"),
    ("GET", "/files/{id}/content"), ("GET", "/fine-tunes"), ("POST", "/fine-tunes"),
    ("GET", "/fine-tunes/{id}"), ("POST", "/fine-tunes/{id}/cancel"), ("GET", "/fine-tunes/{id}/events"),
    ("GET", "/fine_tuning/jobs"), ("POST", "/fine_tuning/jobs"), ("DELETE", "/models/{model}"),
)


def create_v1_app() -> web.Application:
    v1 = relay_sub_app()
    for path, mode in RELAYED:
        v1.router.add_post(path, relay_handler(mode, "/v1" + path))
    v1.router.add_post("/messages", inbound_handler(AnthropicInbound, "/v1/messages"))
    v1.router.add_post("/messages/count_tokens", anthropic_count_tokens)
    v1.router.add_post("/responses", inbound_handler(ResponsesInbound, "/v1/responses"))
    # Before /responses/{id}, which would take it for a stored response's id.
    v1.router.add_post("/responses/compact", inbound_handler(ResponsesCompactInbound, "/v1/responses/compact"))
    v1.router.add_post("/models/{target}", gemini_action)
    v1.router.add_route("*", "/responses/{id}", response_not_stored)
    v1.router.add_get("/models", list_models)
    v1.router.add_get("/models/{model}", get_model)
    v1.router.add_get("/dashboard/billing/subscription", billing_subscription)
    v1.router.add_get("/dashboard/billing/usage", billing_usage)
    for method, path in NOT_IMPLEMENTED:
        v1.router.add_route(method, path, not_implemented)
    return v1


GEMINI_ACTIONS = frozenset({"generateContent", "streamGenerateContent", "countTokens", "embedContent",
                            "batchEmbedContents"})


@web.middleware
async def google_errors(request: web.Request, handler):
    """Everything under /v1beta answers errors in Google's shape, unknown paths included."""
    request[REQUEST_INBOUND] = GeminiInbound
    return await handler(request)


def create_v1beta_app() -> web.Application:
    v1beta = relay_sub_app()
    v1beta.middlewares.insert(0, google_errors)
    v1beta.router.add_post("/models/{target}", gemini_action)
    v1beta.router.add_get("/models", gemini_models)
    v1beta.router.add_get("/models/{model}", gemini_model)
    return v1beta


def setup_relay(app: web.Application) -> None:
    """Mount the relay on the root application; its resources start after the shared ones."""
    app.cleanup_ctx.append(relay_ctx)
    app.on_shutdown.append(stop_relay)
    app.add_subapp("/v1", create_v1_app())
    app.add_subapp("/v1beta", create_v1beta_app())
    dashboard = relay_sub_app()
    dashboard.router.add_get("/billing/subscription", billing_subscription)
    dashboard.router.add_get("/billing/usage", billing_usage)
    app.add_subapp("/dashboard", dashboard)
    app.router.add_get("/metrics", metrics)
