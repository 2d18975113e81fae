"""`/mcp` and `/mcp/<server>`: the Model Context Protocol's Streamable HTTP transport for clients
holding a gateway key (`Authorization: Bearer sk-…` or `x-api-key`, checked as the relay checks
them: api.relay.caller).

- POST carries one JSON-RPC message. A request is answered with one JSON message, or with an SSE
  stream when it is a tools/call asking for progress (its progress notifications, then its
  response); a notification or a response is answered 202. `initialize` opens a session
  (`Mcp-Session-Id`, kept in Redis: api.relay.mcp.sessions); every later message names it, with
  the same key (else 404: the client initializes again).
- GET (a server-initiated stream) is not offered: 405. DELETE ends the session.
- A browser's `Origin` must be the gateway's own (the request's host, ServerAddress) or one of
  McpAllowedOrigins: a web page elsewhere cannot drive a local gateway (DNS rebinding).
- Bodies are bounded (api.bodies.MCP_MAX_BODY); batches are refused (protocol 2025-06-18 on).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from api import keys
from api.bodies import read_body
from api.i18n import language, translate
from api.mcp import wire
from api.relay.admission import usable_group
from api.relay.caller import key_caller
from api.relay.mcp import cancels, sessions
from api.relay.mcp.methods import METHODS, Context, RpcError
from api.relay.mcp.tool_call import call_tool, progress_token
from api.relay.state import RelayState, relay_state
from api.upstream.errors import RelayError

log = logging.getLogger("api.relay.mcp")
JSON = "application/json"


def _text(request: web.Request, key: str, **params: object) -> str:
    return translate(key, language(request), **params)


def _answer(message: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(message), status=status, content_type=JSON, headers=headers)


def _origin_of(url: str) -> str:
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def origin_allowed(request: web.Request, state: RelayState) -> bool:
    """No Origin (not a browser), or the gateway's own, or one an administrator allowed."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    origin = origin.strip().lower()
    if not origin or origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.netloc and parts.netloc == (request.host or "").lower():
        return True
    options = state.options
    allowed = {_origin_of(options.get("ServerAddress"))} | {
        _origin_of(o) for o in options.get("McpAllowedOrigins").split(",") if o.strip()}
    return origin in allowed - {""}


async def _caller_context(request: web.Request, state: RelayState) -> Context:
    caller = await key_caller(request, state)
    if state.mcp is not None:
        await state.mcp.registry.fresh()  # reloaded past RELOAD_EVERY: a lost event costs that long at most
    token = caller.token
    assert token is not None
    group = usable_group(request, state.options, caller.user, token.group)
    return Context(request, state, caller, group, request.match_info.get("server", ""))


async def _gate(request: web.Request) -> tuple[RelayState, Context] | web.Response:
    """The checks every method shares: the Origin, then the key. A refusal is the answer."""
    state = relay_state(request)
    if not origin_allowed(request, state):
        message = _text(request, "mcp_origin_forbidden", origin=request.headers.get("Origin", "")[:100])
        return _answer(wire.error(None, wire.REFUSED, message, {"reason": "origin"}), 403)
    try:
        return state, await _caller_context(request, state)
    except RelayError as err:
        headers = {**err.headers}
        if err.status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="mcp"'
        return _answer(wire.error(None, wire.REFUSED, err.message, {"reason": err.code}), err.status, headers)


async def _message(request: web.Request) -> dict[str, Any] | web.Response:
    try:
        raw = await read_body(request)
    except web.HTTPException as exc:
        return _answer(wire.error(None, wire.INVALID_REQUEST, exc.reason or "bad body"), exc.status)
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _answer(wire.error(None, wire.PARSE_ERROR, _text(request, "mcp_parse_error")), 400)
    if isinstance(message, list):
        return _answer(wire.error(None, wire.INVALID_REQUEST, _text(request, "mcp_batch_unsupported")), 400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not (
            isinstance(message.get("method"), str) or wire.is_response(message)):
        return _answer(wire.error(None, wire.INVALID_REQUEST, _text(request, "mcp_invalid_message")), 400)
    request_id = message.get("id")
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        return _answer(wire.error(None, wire.INVALID_REQUEST, _text(request, "mcp_invalid_message")), 400)
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return _answer(wire.error(request_id, wire.INVALID_PARAMS,
                                  _text(request, "mcp_params_invalid", problem="params must be an object")))
    return message


async def post_mcp(request: web.Request) -> web.StreamResponse:
    gated = await _gate(request)
    if isinstance(gated, web.Response):
        return gated
    state, ctx = gated
    message = await _message(request)
    if isinstance(message, web.Response):
        return message
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    version = request.headers.get(wire.VERSION_HEADER)
    if version is not None and version not in wire.SUPPORTED_VERSIONS:
        return _answer(wire.error(request_id, wire.INVALID_REQUEST,
                                  _text(request, "mcp_version_unsupported", version=version[:40])), 400)
    store = request.config_dict[keys.STORE]
    if method == "initialize" and "id" in message:
        try:
            result = await METHODS["initialize"](ctx, params)
        except RpcError as err:
            return _answer(wire.error(request_id, err.code, err.message, err.data))
        session = await sessions.open_session(store, ctx.caller.token.id if ctx.caller.token else 0,
                                              result["protocolVersion"], ctx.scope)
        return _answer(wire.result(request_id, result), headers={wire.SESSION_HEADER: session.id})
    session_id = request.headers.get(wire.SESSION_HEADER, "")
    if not session_id:
        return _answer(wire.error(request_id, wire.INVALID_REQUEST, _text(request, "mcp_session_required")), 400)
    found = await sessions.find_session(store, session_id)
    token = ctx.caller.token
    if found is None or token is None or found.token_id != token.id or found.scope != ctx.scope:
        return _answer(wire.error(request_id, wire.INVALID_REQUEST, _text(request, "mcp_session_unknown")), 404)
    ctx.session_id = found.id
    if "id" not in message or wire.is_response(message):
        if method == "notifications/cancelled" and isinstance(params.get("requestId"), str | int):
            await cancels.announce(request.config_dict[keys.EVENTS], state.mcp_calls, found.id,
                                   params["requestId"])
        return web.Response(status=202)
    if method == "tools/call":
        return await _tool_call(request, ctx, request_id, params)
    handler = METHODS.get(str(method))
    if handler is None or method == "initialize":
        return _answer(wire.error(request_id, wire.METHOD_NOT_FOUND,
                                  _text(request, "mcp_method_unknown", method=str(method)[:100])))
    try:
        return _answer(wire.result(request_id, await handler(ctx, params)))
    except RpcError as err:
        return _answer(wire.error(request_id, err.code, err.message, err.data))


async def _tool_call(request: web.Request, ctx: Context, request_id: Any, params: dict[str, Any]
                     ) -> web.StreamResponse:
    """A tools/call, run as its own task (a cancellation ends it, wherever it arrives); answered
    as an SSE stream when the client asked for progress, else as one JSON message."""
    state = ctx.state
    stream: web.StreamResponse | None = None
    gone = False

    async def emit(note: dict[str, Any]) -> None:
        nonlocal stream, gone
        if gone:
            return
        try:
            if stream is None:
                stream = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                                     "Cache-Control": "no-cache, no-transform"})
                await stream.prepare(request)
            await stream.write(b"event: message\ndata: " + orjson.dumps(note) + b"\n\n")
        except (ConnectionError, RuntimeError):
            gone = True  # the client left: the call is cancelled below
            task.cancel()

    wants_progress = progress_token(params) is not None
    task = asyncio.ensure_future(call_tool(ctx, params, emit if wants_progress else None))
    key = cancels.running_key(ctx.session_id, request_id)
    state.mcp_calls[key] = task
    try:
        await asyncio.wait({task})
    finally:
        state.mcp_calls.pop(key, None)
    if task.cancelled():
        answer = wire.error(request_id, wire.CANCELLED, _text(request, "mcp_cancelled"), {"reason": "cancelled"})
    elif isinstance(task.exception(), RpcError):
        err = task.exception()
        assert isinstance(err, RpcError)
        answer = wire.error(request_id, err.code, err.message, err.data)
    elif task.exception() is not None:
        log.error("MCP tools/call failed", exc_info=task.exception())
        answer = wire.error(request_id, wire.INTERNAL_ERROR, _text(request, "relay_internal"))
    else:
        answer = wire.result(request_id, task.result())
    if stream is None:
        return _answer(answer)
    if not gone:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await stream.write(b"event: message\ndata: " + orjson.dumps(answer) + b"\n\n")
            await stream.write_eof()
    return stream


async def get_mcp(request: web.Request) -> web.Response:
    gated = await _gate(request)
    if isinstance(gated, web.Response):
        return gated
    return _answer(wire.error(None, wire.METHOD_NOT_FOUND, _text(request, "mcp_get_unsupported")), 405,
                   {"Allow": "POST, DELETE"})


async def delete_mcp(request: web.Request) -> web.Response:
    gated = await _gate(request)
    if isinstance(gated, web.Response):
        return gated
    _, ctx = gated
    store = request.config_dict[keys.STORE]
    session = await sessions.find_session(store, request.headers.get(wire.SESSION_HEADER, ""))
    token = ctx.caller.token
    if session is None or token is None or session.token_id != token.id:
        return _answer(wire.error(None, wire.INVALID_REQUEST, _text(request, "mcp_session_unknown")), 404)
    await sessions.end_session(store, session.id)
    return web.Response(status=204)


def setup_mcp(app: web.Application) -> None:
    """The routes, on the root application (the relay's state is read from it)."""
    for path in ("/mcp", "/mcp/{server:[a-z0-9_-]{1,64}}"):
        app.router.add_route("POST", path, post_mcp)
        app.router.add_route("GET", path, get_mcp)
        app.router.add_route("DELETE", path, delete_mcp)
