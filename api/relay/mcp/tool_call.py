"""tools/call on `/mcp`: the access check (a refusal names why), the call's reservation (api.relay.mcp.
calls), the call to the server with its progress passed on to the client under the client's own
progress token, the settlement (charged when the server answered a result, refunded otherwise).

The client's arguments go to the server as sent; the client's key never does (the gateway's
credential for the server does). A cancellation by the client (notifications/cancelled, on any API
process: api.relay.mcp.cancels) cancels the call on the server too and refunds it.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from api.mcp import access, wire
from api.mcp.access import AccessRefused
from api.mcp.client import McpClient, OnProgress
from api.mcp.wire import McpError
from api.relay.mcp import calls
from api.relay.mcp.methods import Context, RpcError
from api.upstream.masking import mask_secrets

Emit = Callable[[dict[str, Any]], Awaitable[None]]  # a notification to the client (an SSE answer's event)


def progress_token(params: dict[str, Any]) -> str | int | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


async def call_tool(ctx: Context, params: dict[str, Any], emit: Emit | None) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments")
    if not isinstance(name, str) or not name:
        raise ctx.invalid("name must be a string")
    if arguments is not None and not isinstance(arguments, dict):
        raise ctx.invalid("arguments must be an object")
    server_name, tool = ctx.target(name, "tool")
    token, user = ctx.caller.token, ctx.caller.user
    assert token is not None
    try:
        grant = access.check_tool(ctx.hub.registry.all(), ctx.group, ctx.key_tools, server_name, tool)
    except AccessRefused as exc:
        ctx.state.metrics.mcp_call(server_name if ctx.hub.registry.get(server_name) else "-", "refused")
        raise ctx.refused(exc) from None
    try:
        call = await calls.admit(ctx.request, ctx.state, user, token, ctx.group, grant, tool, arguments or {})
    except calls.CallRefused as exc:
        ctx.state.metrics.mcp_call(grant.server.name, "refused")
        data: dict[str, Any] = {"reason": exc.reason}
        if exc.retry_after:
            data["retry_after"] = exc.retry_after
        raise RpcError(wire.QUOTA_REFUSED, ctx.text(exc.message_key, **exc.params), data) from None
    client_token = progress_token(params)
    on_progress = None
    if emit is not None and client_token is not None:
        async def on_progress(body: dict[str, Any]) -> None:
            forwarded = {k: v for k, v in body.items() if k in ("progress", "total", "message")}
            await emit(wire.notification("notifications/progress", {**forwarded, "progressToken": client_token}))
    try:
        return await run_admitted(ctx.hub.client, call, ctx.text("mcp_cancelled"), on_progress)
    except McpError as exc:
        raise ctx.upstream(grant.server.name, exc) from None


async def run_admitted(client: McpClient, call: calls.ToolCall, cancelled: str,
                       on_progress: OnProgress | None = None) -> dict[str, Any]:
    """Send an admitted call (api.relay.mcp.calls.admit) and settle its bill: charged when the server
    answered a result, refunded when it did not (the McpError raised after the refund), when the
    caller was cancelled (`cancelled` is the log row's text), or when the tool marked its result
    `isError` (returned with its texts masked). The one way a billed call is made: the `/mcp`
    endpoint's and MCP tools inside model requests (api.relay.mcp_tools)."""
    server = call.grant.server
    try:
        result = await client.call_tool(server, call.tool, call.arguments, on_progress=on_progress)
    except McpError as exc:
        await call.failed(exc.kind, exc.message, 504 if exc.kind == "timeout" else 502)
        raise
    except asyncio.CancelledError:
        await asyncio.shield(call.failed("cancelled", cancelled, 499))
        raise
    if result.get("isError") is True:
        result = _masked(result, server.secrets, server.url)
        await call.failed("tool_error", _first_text(result), 200, result)
    else:
        await call.succeeded(result)
    return result


def _masked(result: dict[str, Any], secrets: str, url: str) -> dict[str, Any]:
    """A tool's error result with its texts masked like an upstream's error (credentials, address)."""
    content = [{**part, "text": mask_secrets(part["text"], secrets, url)}
               if isinstance(part, dict) and isinstance(part.get("text"), str) else part
               for part in result.get("content") or []]
    return {**result, "content": content}


def _first_text(result: dict[str, Any]) -> str:
    """The tool's own error text, for the log row (its first text content)."""
    for part in result.get("content") or []:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            return str(part["text"])[:500]
    return "the tool reported an error"
