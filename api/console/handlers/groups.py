"""Group names (admin): the keys of GroupRatio."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import admin_required
from api.response import ok
from api.services.accounts.users import group_names


@admin_required
async def list_groups(request: web.Request) -> web.Response:
    return ok(group_names(request.config_dict[keys.OPTIONS]))
