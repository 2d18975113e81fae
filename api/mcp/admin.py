"""Registering MCP servers (the console's `/api/mcp/`): every field checked before anything is
saved (a refusal names the field and changes nothing), credentials kept when the form sends them
back masked or leaves them out, and every change told to all processes at once (an `mcp_server`
event: api.mcp.registry)."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import orjson
from tortoise.exceptions import IntegrityError

from api.errors import ApiError
from api.mcp.policy import check_url
from api.mcp.registry import EVENT
from api.mcp.wire import McpError
from api.services import mcp_names as names
from api.services.events import EventBus
from models import McpServer
from models.enums import ChannelStatus
from models.keyring import mask
from models.mcp_server import TRANSPORTS, json_list, json_object

MAX_PRICE = 10**12
MAX_TIMEOUT = 600
MAX_HEADERS = 32
MAX_LIST = 500
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
# Headers the gateway itself sets for the protocol: a server's credential may not replace them.
RESERVED_HEADERS = frozenset({"host", "content-type", "content-length", "accept", "connection", "transfer-encoding",
                              "mcp-session-id", "mcp-protocol-version", "last-event-id", "te", "upgrade"})
GROUP_NAME = re.compile(r"^[^\s,]{1,64}$")


def _bad(field: str, problem: str) -> ApiError:
    return ApiError("mcp_field_invalid", field=field, problem=problem)


def _text(body: Mapping[str, Any], field: str, most: int, default: str | None = None) -> str | None:
    value = body.get(field, default)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(field, "must be a string")
    value = value.strip()
    if len(value) > most:
        raise _bad(field, f"longer than {most} characters")
    return value


def _int(body: Mapping[str, Any], field: str, low: int, high: int) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(field, "must be an integer")
    if not low <= value <= high:
        raise _bad(field, f"must be between {low} and {high}")
    return value


def _names(body: Mapping[str, Any], field: str, pattern: re.Pattern[str]) -> list[str] | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise _bad(field, f"must be a list of at most {MAX_LIST} names")
    found: list[str] = []
    for item in value:
        if not isinstance(item, str) or not pattern.match(item.strip()):
            raise _bad(field, f"{str(item)[:40]!r} is not a valid name")
        if item.strip() not in found:
            found.append(item.strip())
    return found


TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")


def _is_kept(given: str, stored: str) -> bool:
    """A credential the form sent back as the console showed it (masked), or left empty."""
    return not given or (bool(stored) and given == mask(stored))


def _headers(body: Mapping[str, Any], stored: Mapping[str, str]) -> tuple[dict[str, str], bool] | None:
    """(the headers to store, whether any stored value was kept as it was); None: not sent."""
    value = body.get("headers")
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > MAX_HEADERS:
        raise _bad("headers", f"must be an object of at most {MAX_HEADERS} header names and values")
    headers: dict[str, str] = {}
    kept = False
    for name, given in value.items():
        if not isinstance(name, str) or not HEADER_NAME.match(name):
            raise _bad("headers", f"{str(name)[:40]!r} is not a header name")
        if name.lower() in RESERVED_HEADERS:
            raise _bad("headers", f"{name} is set by the gateway itself")
        if not isinstance(given, str) or "\n" in given or "\r" in given or len(given) > 8192:
            raise _bad("headers", f"the value of {name} must be one line of text")
        old = next((v for k, v in stored.items() if k.lower() == name.lower()), "")
        if _is_kept(given.strip(), old) and old:
            headers[name], kept = old, True
        elif not given.strip():
            raise _bad("headers", f"the value of {name} is empty")
        else:
            headers[name] = given.strip()
    return headers, kept


async def clean(body: Mapping[str, Any], current: McpServer | None, allow_private: bool,
                may_resend_credentials: bool) -> dict[str, Any]:
    """The validated fields of `body` (all of them with defaults when creating, `current` None)."""
    fields: dict[str, Any] = {}
    creating = current is None
    name = _text(body, "name", 64)
    if name is not None or creating:
        if not name or not names.valid_server_name(name):
            raise _bad("name", "1 to 64 of a-z, 0-9, _ and - (no __)")
        fields["name"] = name
    description = _text(body, "description", 255)
    if description is not None:
        fields["description"] = description
    url = _text(body, "url", 1024)
    if url is not None or creating:
        if not url:
            raise _bad("url", "required")
        try:
            await check_url(url, allow_private)
        except McpError as exc:
            raise _bad("url", exc.message) from None
        fields["url"] = url
    transport = _text(body, "transport", 32)
    if transport is not None:
        if transport not in TRANSPORTS:
            raise _bad("transport", f"one of {', '.join(TRANSPORTS)}")
        fields["transport"] = transport
    kept_credential = False
    headers = _headers(body, json_object(current.headers) if current else {})
    if headers is not None:
        fields["headers"] = orjson.dumps(headers[0]).decode() if headers[0] else ""
        kept_credential = headers[1]
    elif current is not None and current.headers:
        kept_credential = True
    token_url = _text(body, "oauth_token_url", 1024)
    if token_url is not None:
        if token_url:
            try:
                await check_url(token_url, allow_private)
            except McpError as exc:
                raise _bad("oauth_token_url", exc.message) from None
        fields["oauth_token_url"] = token_url
    for field, most in (("oauth_client_id", 255), ("oauth_scope", 512)):
        value = _text(body, field, most)
        if value is not None:
            fields[field] = value
    secret = _text(body, "oauth_client_secret", 4096)
    stored_secret = current.oauth_client_secret if current else ""
    if secret is not None and not _is_kept(secret, stored_secret):
        fields["oauth_client_secret"] = secret
    elif stored_secret:
        kept_credential = True
    effective_token_url = fields.get("oauth_token_url", current.oauth_token_url if current else "")
    if effective_token_url and not fields.get("oauth_client_id", current.oauth_client_id if current else ""):
        raise _bad("oauth_client_id", "required with an OAuth token URL")
    for field, pattern in (("groups", GROUP_NAME), ("tools", TOOL_NAME)):
        listed = _names(body, field, pattern)
        if listed is not None:
            fields[field] = orjson.dumps(listed).decode()
    if creating and "groups" not in fields:
        fields["groups"] = orjson.dumps(["default"]).decode()
    for field, low, high in (("price", 0, MAX_PRICE), ("timeout_seconds", 1, MAX_TIMEOUT)):
        number = _int(body, field, low, high)
        if number is not None:
            fields[field] = number
    status = _int(body, "status", 1, 3)
    if status is not None:
        fields["status"] = status
        if status != ChannelStatus.AUTO_DISABLED:
            fields["status_reason"] = ""
    moved = current is not None and (fields.get("url", current.url) != current.url or
                                     fields.get("oauth_token_url", current.oauth_token_url) != current.oauth_token_url)
    if moved and kept_credential and not may_resend_credentials:
        raise ApiError("mcp_url_needs_credentials")
    return fields


async def announce(events: EventBus, server_id: int) -> None:
    """Every process reloads its servers; this one before the console's answer (its own pub/sub
    message, heard later, reloads once more), so that a change is in force here once it is answered."""
    await events.publish(EVENT, id=server_id)
    await events.dispatch({"kind": EVENT, "id": server_id})


async def create_server(body: Mapping[str, Any], events: EventBus, allow_private: bool) -> McpServer:
    fields = await clean(body, None, allow_private, True)
    if await McpServer.filter(name=fields["name"]).exists():
        raise ApiError("mcp_name_taken", name=fields["name"])
    try:
        server = await McpServer.create(**fields)
    except IntegrityError:
        raise ApiError("mcp_name_taken", name=fields["name"]) from None
    await announce(events, server.id)
    return server


async def get_server(server_id: object) -> McpServer:
    server = await McpServer.filter(id=server_id).first() if isinstance(server_id, int) else None
    if server is None:
        raise ApiError("mcp_server_not_found")
    return server


async def update_server(body: Mapping[str, Any], events: EventBus, allow_private: bool,
                        may_resend_credentials: bool) -> McpServer:
    server = await get_server(body.get("id"))
    fields = await clean(body, server, allow_private, may_resend_credentials)
    if "name" in fields and fields["name"] != server.name and await McpServer.filter(name=fields["name"]).exists():
        raise ApiError("mcp_name_taken", name=fields["name"])
    if fields:
        try:
            await McpServer.filter(id=server.id).update(**fields)
        except IntegrityError:
            raise ApiError("mcp_name_taken", name=str(fields.get("name"))) from None
        await announce(events, server.id)
    return await get_server(server.id)


async def delete_server(server_id: int, events: EventBus) -> McpServer:
    server = await get_server(server_id)
    await McpServer.filter(id=server.id).delete()
    await announce(events, server.id)
    return server


def credential_digest(server: McpServer) -> str:
    raw = "\n".join((server.headers, server.oauth_client_secret, server.oauth_client_id, server.oauth_token_url))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def audit_view(server: McpServer | None) -> dict[str, Any] | None:
    """What the audit log records of a server: its fields, the credentials masked by name."""
    if server is None:
        return None
    view = server.public_dict()
    for volatile in ("test_time", "response_time", "tool_count", "status_reason", "created_time"):
        view.pop(volatile, None)
    view["headers"] = sorted(json_object(server.headers))  # the names only
    view["credential"] = credential_digest(server)  # masked by the audit log: says it changed, never what
    view["groups"], view["tools"] = json_list(server.groups), json_list(server.tools)
    return view
