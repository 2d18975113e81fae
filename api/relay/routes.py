"""Relay routes: the OpenAI-format surface under /v1 (and Anthropic's `/v1/messages`, OpenAI's
Responses), Gemini's under /v1beta, the legacy /dashboard/billing endpoints, and /metrics. Each prefix
is a sub-app whose middleware (api/relay/middleware.py) answers errors in the client's shape with real
status codes; the relay's resources live in api/relay/lifetime.py, the model lists in model_lists.py.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler

from api.i18n import language, translate
from api.relay.caller import key_caller
from api.relay.counting import admit_count, client_count
from api.relay.dashboard import billing_subscription, billing_usage, metrics
from api.relay.handler import read_input, requested_model, run
from api.relay.inbound.anthropic import AnthropicInbound
from api.relay.inbound.base import REQUEST_INBOUND, Inbound
from api.relay.inbound.gemini import GeminiEmbedInbound, GeminiInbound
from api.relay.inbound.responses import ResponsesCompactInbound, ResponsesInbound
from api.relay.inbound.shapes import check_gemini_embed
from api.relay.lifetime import relay_ctx, stop_relay
from api.relay.mcp_tools.rounds import hosted_of, serve_hosted
from api.relay.middleware import relay_sub_app
from api.relay.model_lists import gemini_model, gemini_models, get_model, list_models
from api.relay.modes import MODES
from api.relay.realtime.handler import setup_realtime
from api.relay.refusals import refuse
from api.relay.state import relay_state
from api.relay.validate import Invalid
from api.upstream.base import RelayMode
from api.upstream.errors import RelayError

# -- handlers ---------------------------------------------------------------------------------------


def relay_handler(mode: RelayMode, route: str) -> Handler:
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


def inbound_handler(inbound: type[Inbound], route: str) -> Handler:
    """A route of another client format: its errors are shaped its way from the first check on."""
    async def handle(request: web.Request) -> web.StreamResponse:
        request[REQUEST_INBOUND] = inbound
        caller = await key_caller(request, relay_state(request))
        body, _ = await read_input(request, RelayMode.CHAT)
        checked(request, inbound.check, body)
        hosted = await hosted_of(request, caller, inbound, body)  # MCP servers of this gateway's, served here
        if hosted is not None:
            return await serve_hosted(request, route, caller, inbound(body, request), hosted)
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


async def response_not_stored(request: web.Request) -> web.Response:
    raise RelayError(404, translate("relay_response_not_stored", language(request)), "invalid_request_error",
                     "response_not_found", local=True)


async def not_implemented(request: web.Request) -> web.Response:
    raise RelayError(501, translate("relay_not_implemented", language(request)), "new_api_error",
                     "api_not_implemented", local=True)


# -- tables -----------------------------------------------------------------------------------------


def relayed() -> tuple[tuple[str, RelayMode], ...]:
    """The OpenAI endpoints, as the v1 app is made: each one's OpenAI path under /v1 (its RelayMode
    member's) and the further routes its row names (api/relay/modes.py)."""
    return tuple((route, mode) for mode, spec in MODES.items() if mode.path
                 for route in (mode.path.removeprefix("/v1"), *spec.routes))


# OpenAI routes the gateway does not relay (reference: RelayNotImplemented).
NOT_IMPLEMENTED: tuple[tuple[str, str], ...] = (
    ("POST", "/edits"), ("POST", "/images/variations"),
    ("GET", "/files"), ("POST", "/files"), ("GET", "/files/{id}"), ("DELETE", "/files/{id}"),
    ("GET", "/files/{id}/content"), ("GET", "/fine-tunes"), ("POST", "/fine-tunes"),
    ("GET", "/fine-tunes/{id}"), ("POST", "/fine-tunes/{id}/cancel"), ("GET", "/fine-tunes/{id}/events"),
    ("GET", "/fine_tuning/jobs"), ("POST", "/fine_tuning/jobs"), ("DELETE", "/models/{model}"),
)


def create_v1_app() -> web.Application:
    v1 = relay_sub_app()
    for path, mode in relayed():
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
    setup_realtime(v1)  # GET /v1/realtime (WebSocket)
    for method, path in NOT_IMPLEMENTED:
        v1.router.add_route(method, path, not_implemented)
    return v1


GEMINI_ACTIONS = frozenset({"generateContent", "streamGenerateContent", "countTokens", "embedContent",
                            "batchEmbedContents"})


@web.middleware
async def google_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
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
