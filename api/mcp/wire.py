"""The JSON-RPC and MCP constants both sides of the gateway speak, and the one failure type of the
outbound client."""
from __future__ import annotations

from typing import Any

import orjson

# The initialize handshake's protocol revisions, newest first (the MCP Python SDK 2.x offers the first).
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
ACCEPT = "application/json, text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"

# JSON-RPC 2.0 error codes, and the gateway's own in the implementation-defined range.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32003  # the key may not use this server or tool (data.reason says why)
UPSTREAM_ERROR = -32010  # the MCP server failed, or could not be reached
QUOTA_REFUSED = -32013  # balance, key quota or a rate limit (data.reason, data.retry_after)
CANCELLED = -32800  # the client cancelled the request

GATEWAY_INFO = {"name": "ai-gateway", "title": "AI Gateway MCP", "version": "1.0.0"}


class McpError(Exception):
    """A call to an MCP server that failed. `kind`: unreachable, timeout, http, auth, protocol, rpc
    (the server's own JSON-RPC error: `code`, `data`), too_large, refused (the URL policy), expired
    (the server forgot the session). `message` is masked (no credential, no server address)."""

    def __init__(self, kind: str, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code
        self.data = data


def request(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def dumps(message: Any) -> bytes:
    return orjson.dumps(message)


def is_response(message: Any) -> bool:
    return isinstance(message, dict) and "id" in message and ("result" in message or "error" in message) \
        and "method" not in message
