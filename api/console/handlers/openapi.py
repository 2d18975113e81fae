"""The console API's own description (api.console.openapi)."""
from __future__ import annotations

from aiohttp import web

from api.console import openapi
from api.response import json_body


async def describe(request: web.Request) -> web.Response:
    """The OpenAPI description of every console route (built from the route table: a few ms)."""
    return web.Response(body=json_body(openapi.build(request.app)), content_type="application/json")
