"""MCP servers (admin): list, add, edit, delete, and a test that connects and lists the tools.
Credentials are never shown: header values and the OAuth secret come back masked (models.
mcp_server.McpServer.public_dict), and a form that sends them back masked or leaves them out keeps
what is stored. Every change is audited (credentials masked) and reaches every process at once."""
from __future__ import annotations

import time

from aiohttp import web

from api import keys
from api.console.auth import admin_required, the_user
from api.errors import ApiError
from api.i18n import language, translate
from api.mcp import admin as service
from api.mcp.client import McpClient
from api.mcp.registry import server_info
from api.mcp.wire import McpError
from api.response import ok, read_json
from api.services.params import id_value
from api.web import audit
from models import McpServer
from models.enums import Role

SECRET_FIELDS = ("credential",)


def _text(request: web.Request, key: str, **params: object) -> str:
    return translate(key, language(request), **params)


def _allow_private(request: web.Request) -> bool:
    return request.config_dict[keys.OPTIONS].get_bool("MediaFetchPrivateEnabled")


def _server_id(request: web.Request) -> int:
    server_id = id_value(request.match_info["id"])
    if server_id is None:
        raise ApiError("mcp_server_not_found")
    return server_id


async def _record(request: web.Request, action: str, before: McpServer | None, after: McpServer | None) -> None:
    target = (after or before)
    assert target is not None
    await audit.record(request, action, "mcp_server", target.id, service.audit_view(before),
                       service.audit_view(after), secret_fields=SECRET_FIELDS)


@admin_required
async def list_servers(request: web.Request) -> web.Response:
    rows = await McpServer.all().order_by("id")
    return ok({"items": [row.public_dict() for row in rows], "total": len(rows)})


@admin_required
async def get_server(request: web.Request) -> web.Response:
    return ok((await service.get_server(_server_id(request))).public_dict())


@admin_required
async def create_server(request: web.Request) -> web.Response:
    server = await service.create_server(await read_json(request), request.config_dict[keys.EVENTS],
                                         _allow_private(request))
    await _record(request, "mcp_server.create", None, server)
    return ok(server.public_dict(), _text(request, "mcp_server_created"))


@admin_required
async def update_server(request: web.Request) -> web.Response:
    """Only root may send the stored credential to a new URL; an admin gives it again with the URL."""
    body = await read_json(request)
    before = await service.get_server(body.get("id"))
    server = await service.update_server(body, request.config_dict[keys.EVENTS], _allow_private(request),
                                         the_user(request).role >= Role.ROOT)
    await _record(request, "mcp_server.update", before, server)
    return ok(server.public_dict(), _text(request, "mcp_server_updated"))


@admin_required
async def delete_server(request: web.Request) -> web.Response:
    server = await service.delete_server(_server_id(request), request.config_dict[keys.EVENTS])
    await _record(request, "mcp_server.delete", server, None)
    return ok(None, _text(request, "mcp_server_deleted"))


@admin_required
async def test_server(request: web.Request) -> web.Response:
    """Connect with the stored credential and list the tools: {tools: [{name, description}], time_ms}."""
    row = await service.get_server(_server_id(request))
    client = McpClient(request.config_dict[keys.OPTIONS])
    started = time.monotonic()
    try:
        tools = await client.list_tools(server_info(row))
    except McpError as exc:
        raise ApiError("mcp_test_failed", name=row.name, reason=f"{exc.kind}: {exc.message}") from None
    finally:
        await client.close()
    elapsed = int((time.monotonic() - started) * 1000)
    await McpServer.filter(id=row.id).update(test_time=int(time.time()), response_time=elapsed,
                                             tool_count=len(tools))
    listed = [{"name": t.get("name"), "description": t.get("description", ""),
               "offered": server_info(row).offers(str(t.get("name")))} for t in tools]
    return ok({"tools": listed, "time_ms": elapsed})
