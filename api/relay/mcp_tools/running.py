"""One tool call the model made, run by the gateway: admitted and billed as a call of `/mcp` is
(api.relay.mcp.calls.admit reserves the server's price and counts the rate limits, then
api.relay.mcp.tool_call.run_admitted charges it on a result and refunds it otherwise), with the
gateway's credential for the server.

Whatever goes wrong goes to the model as the tool's result, marked as an error, and to the client
in the call's item: arguments that are not a JSON object (nothing sent, nothing reserved), a call the
balance or the rate limits refuse (nothing reserved), a server that fails or times out (refunded),
a result the tool marked `isError` (refunded; its texts masked like an upstream's).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from api.i18n import language, translate
from api.mcp.wire import McpError
from api.relay.caller import Caller
from api.relay.mcp import calls
from api.relay.mcp.tool_call import run_admitted
from api.relay.mcp_tools.offer import Offered
from api.relay.state import RelayState


@dataclass(slots=True)
class Ran:
    """A call the model made and what came of it."""

    offered: Offered
    call_id: str
    arguments: str  # as the model wrote them
    output: str = ""  # what the model is told (the result's text, or the error's)
    error: dict[str, Any] | None = None  # a Responses McpToolCallError when it failed
    content: list[dict[str, Any]] = field(default_factory=list)  # the result's text blocks

    @property
    def failed(self) -> bool:
        return self.error is not None


def result_text(result: dict[str, Any]) -> str:
    """A CallToolResult as the one text a model reads: its text contents in order, a resource's text,
    other contents by their kind; the structured content when there is no content."""
    parts: list[str] = []
    for part in result.get("content") or ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append(str(part.get("text") or ""))
        elif kind == "resource" and isinstance(part.get("resource"), dict) and "text" in part["resource"]:
            parts.append(str(part["resource"]["text"]))
        else:
            parts.append(f"[{kind or 'content'}]")
    if not parts and result.get("structuredContent") is not None:
        parts.append(orjson.dumps(result["structuredContent"]).decode())
    return "\n".join(parts)


def _failed(ran: Ran, text: str, error: dict[str, Any]) -> Ran:
    ran.output, ran.error, ran.content = text, error, [{"type": "text", "text": text}]
    return ran


async def run_call(request: web.Request, state: RelayState, caller: Caller, group: str, offered: Offered,
                   call_id: str, arguments: str) -> Ran:
    ran = Ran(offered, call_id, arguments)
    lang = language(request)
    try:
        parsed = orjson.loads(arguments) if arguments.strip() else {}
    except orjson.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        text = translate("mcp_tool_arguments_invalid", lang, tool=offered.listed)
        return _failed(ran, text, {"type": "mcp_protocol_error", "code": -32602, "message": text})
    token = caller.token
    assert token is not None  # MCP tools are served for API keys only
    try:
        call = await calls.admit(request, state, caller.user, token, group, offered.grant, offered.tool, parsed)
    except calls.CallRefused as exc:
        text = translate(exc.message_key, lang, **exc.params)
        return _failed(ran, text, {"type": "http_error", "code": 429 if exc.retry_after else 403, "message": text})
    assert state.mcp is not None
    try:
        result = await run_admitted(state.mcp.client, call, translate("mcp_cancelled", lang))
    except McpError as exc:
        text = translate("mcp_upstream_failed", lang, server=offered.grant.server.name, reason=exc.message)
        if exc.kind == "rpc" and exc.code is not None:
            return _failed(ran, text, {"type": "mcp_protocol_error", "code": exc.code, "message": exc.message})
        return _failed(ran, text, {"type": "http_error", "code": 504 if exc.kind == "timeout" else 502,
                                   "message": text})
    text = result_text(result)
    if result.get("isError") is True:
        ran.output, ran.content = text, [{"type": "text", "text": text}]
        ran.error = {"type": "mcp_tool_execution_error", "content": result.get("content") or []}
        return ran
    ran.output, ran.content = text, [{"type": "text", "text": text}]
    return ran
