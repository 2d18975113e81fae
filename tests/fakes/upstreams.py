"""Fake upstream AI providers speaking the OpenAI wire format, as one aiohttp app with one prefix per
behaviour (a channel's base_url is `<server>/<behaviour>`):

  /healthy   answers chat completions with usage, /v1/models, and the OpenAI billing endpoints
  /hang      accepts the request and never answers (until the server shuts down)
  /invalid   401 invalid_api_key, as OpenAI answers a revoked key
  /toggle    healthy or invalid depending on `app[TOGGLE_OK]["ok"]` (a provider that comes back)
  /leaky     401 invalid_api_key whose message quotes the key it was sent
  /broken    200 with neither choices nor usage
  /<any>/v1/user/info   SiliconFlow's balance endpoint

Every request is recorded in `app[REQUESTS]` as (behaviour, path, headers, json body or None).
(tests/fakes/providers.py holds the fake OAuth providers of the accounts tests.)
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

REQUESTS = web.AppKey("requests", list)
TOGGLE_OK = web.AppKey("toggle_ok", dict)
RELEASE = web.AppKey("release", asyncio.Event)

HARD_LIMIT_USD = 100.0
TOTAL_USAGE_CENTS = 2512.5  # balance = 100 - 25.125 = 74.875
SILICON_BALANCE = "12.34"
INVALID_KEY_ERROR = {
    "error": {
        "message": "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}
PROVIDER_MODELS = ("gpt-4o-mini", "gpt-4o", "text-embedding-3-small")


def completion(model: str, content: str = "hello") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 8, "completion_tokens": 1, "total_tokens": 9},
    }


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


async def _record(request: web.Request) -> dict[str, Any] | None:
    raw = await request.read()
    body = orjson.loads(raw) if raw else None
    request.app[REQUESTS].append((request.match_info["kind"], request.match_info["tail"], dict(request.headers),
                                  body))
    return body


async def chat(request: web.Request) -> web.StreamResponse:
    kind = request.match_info["kind"]
    body = await _record(request) or {}
    model = body.get("model", "")
    if kind == "hang":
        await request.app[RELEASE].wait()
        return _json({"error": {"message": "released"}}, 500)
    if kind == "invalid" or (kind == "toggle" and not request.app[TOGGLE_OK]["ok"]):
        return _json(INVALID_KEY_ERROR, 401)
    if kind == "broken":
        return _json({"id": "x", "object": "chat.completion"})
    if kind == "leaky":
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return _json({"error": {**INVALID_KEY_ERROR["error"], "message": f"Incorrect API key provided: {key}."}}, 401)
    return _json(completion(model))


async def get_route(request: web.Request) -> web.Response:
    kind, tail = request.match_info["kind"], request.match_info["tail"]
    await _record(request)
    if kind == "invalid":
        return _json(INVALID_KEY_ERROR, 401)
    if kind == "leaky":
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return _json({"error": {"message": f"Incorrect API key provided: {key}."}}, 401)
    if tail == "v1/models":
        return _json({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"}
                                                 for m in PROVIDER_MODELS]})
    if tail == "v1/dashboard/billing/subscription":
        return _json({"object": "billing_subscription", "hard_limit_usd": HARD_LIMIT_USD, "has_payment_method": True})
    if tail == "v1/dashboard/billing/usage":
        if "start_date" not in request.query or "end_date" not in request.query:
            return _json({"error": {"message": "start_date and end_date are required"}}, 400)
        return _json({"object": "list", "total_usage": TOTAL_USAGE_CENTS})
    if tail == "v1/user/info":
        return _json({"code": 20000, "status": True, "data": {"totalBalance": SILICON_BALANCE}})
    return _json({"error": {"message": "not found"}}, 404)


async def other_post(request: web.Request) -> web.Response:
    await _record(request)
    return _json({"error": {"message": "not found", "type": "invalid_request_error"}}, 404)


async def _release(app: web.Application) -> None:
    app[RELEASE].set()  # a hanging handler returns, so the server can stop at once


def upstream_app() -> web.Application:
    app = web.Application()
    app[REQUESTS] = []
    app[TOGGLE_OK] = {"ok": True}
    app[RELEASE] = asyncio.Event()
    app.on_shutdown.append(_release)
    app.router.add_post("/{kind}/{tail:v1/chat/completions}", chat)
    app.router.add_post("/{kind}/{tail:.*}", other_post)
    app.router.add_get("/{kind}/{tail:.*}", get_route)
    return app
