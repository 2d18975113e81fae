"""The key's models: `GET /v1/models` and `/v1/models/{model}` in OpenAI's shape, `/v1beta/models` (and
/v1 with a Google key) in Google's."""
from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from api import keys
from api.relay.caller import key_caller
from api.relay.inbound.base import REQUEST_INBOUND
from api.relay.inbound.gemini import GeminiInbound
from api.relay.refusals import refuse
from api.relay.state import relay_state
from api.services.configuration import fallback_rules


def _gemini_model(model: str) -> dict[str, Any]:
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


def _owned_by(model: str) -> str:
    lower = model.lower()
    for prefix, owner in (("gpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
                          ("dall-e", "openai"), ("whisper", "openai"), ("tts", "openai"), ("text-", "openai"),
                          ("chatgpt", "openai"), ("omni", "openai"), ("claude", "anthropic"), ("gemini", "google"),
                          ("deepseek", "deepseek"), ("qwen", "alibaba"), ("glm", "zhipu"), ("moonshot", "moonshot")):
        if lower.startswith(prefix):
            return owner
    return "custom"


def _model_object(model: str, created: int) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": created, "owned_by": _owned_by(model)}


async def _key_models(request: web.Request) -> list[str]:
    state = relay_state(request)
    caller = await key_caller(request, state)
    token = caller.token
    if token is not None and token.model_limits is not None:
        return sorted(token.model_limits)
    group = (token.group if token and token.group else "") or caller.user.group
    models = list(state.index.models(group))
    return models + routes_served(state.options.get(fallback_rules.ROUTES), group, set(models))


def routes_served(value: str, group: str, served: set[str]) -> list[str]:
    """The operator's named routes (ModelRoutes) of the group with a model served in it."""
    table = fallback_rules.table(fallback_rules.ROUTES, value)
    return sorted(name for name, route in table.exact.items() if name not in served and route.applies(group)
                  and any(model in served for model in route.models))


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
