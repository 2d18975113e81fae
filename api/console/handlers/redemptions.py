"""Redemption codes (admin)."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from api.console.auth import admin_required, the_user
from api.response import ok, read_json
from api.services.billing import redemptions
from api.services.paging import read_page
from api.services.params import body_id, path_id
from api.web import audit
from models import Redemption


@admin_required
async def list_redemptions(request: web.Request) -> web.Response:
    page = read_page(request.query, first=0)
    items, total = await redemptions.list_codes(page.offset, page.size)
    return ok(page.envelope([redemptions.redemption_dict(c) for c in items], total))


@admin_required
async def search_redemptions(request: web.Request) -> web.Response:
    page = read_page(request.query, first=0)
    items, total = await redemptions.search_codes(request.query.get("keyword", "").strip(), page.offset, page.size)
    return ok(page.envelope([redemptions.redemption_dict(c) for c in items], total))


@admin_required
async def get_redemption(request: web.Request) -> web.Response:
    code = await redemptions.get_code(path_id(request))
    return ok(redemptions.redemption_dict(code))


@admin_required
async def create_redemptions(request: web.Request) -> web.Response:
    body = await read_json(request)
    name = redemptions.clean_name(body.get("name"))
    quota = redemptions.clean_quota(body.get("quota", redemptions.DEFAULT_QUOTA))
    count = redemptions.clean_count(body.get("count", 1))
    created = await redemptions.create_codes(the_user(request), name, quota, count)
    await audit.new_rows(request, "redemption.create", await Redemption.filter(key__in=created).order_by("id"))
    return ok(created)


@admin_required
async def update_redemption(request: web.Request) -> web.Response:
    body = await read_json(request)
    code_id = body_id(body.get("id"))
    this_code = Redemption.filter(id=code_id)
    if request.query.get("status_only", "") not in ("", "false", "0"):
        code = await audit.each_row(request, "redemption.status", this_code,
                                    redemptions.set_code_status(code_id, body.get("status")))
        return ok(redemptions.redemption_dict(code))
    fields: dict[str, Any] = {}
    if body.get("name") is not None:
        fields["name"] = redemptions.clean_name(body["name"])
    if body.get("quota") is not None:
        fields["quota"] = redemptions.clean_quota(body["quota"])
    code = await audit.each_row(request, "redemption.update", this_code, redemptions.update_code(code_id, fields))
    return ok(redemptions.redemption_dict(code))


@admin_required
async def delete_redemption(request: web.Request) -> web.Response:
    code_id = path_id(request)
    await audit.each_row(request, "redemption.delete", Redemption.filter(id=code_id), redemptions.delete_code(code_id))
    return ok()
