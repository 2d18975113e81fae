"""User management (admin): list, search, get, create, update, manage, delete, two-factor reset."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from api import keys
from api.console.auth import admin_required, services, the_user
from api.console.handlers.budgets import user_dict, user_dicts
from api.console.handlers.secure_verify import require_fresh
from api.errors import ApiError
from api.i18n import language, translate
from api.response import ok, read_json
from api.services.accounts import two_factor, user_admin
from api.services.accounts.deps import Services
from api.services.paging import read_page
from api.web import audit
from models import User
from models.enums import Role


async def _page_of_users(request: web.Request, keyword: str = "", group: str = "") -> web.Response:
    """`p` is 0-based; page_size 10 by default, at most 100."""
    page = read_page(request.query, first=0)
    users, total = await user_admin.search_users(keyword, group, page.offset, page.size)
    return ok(page.envelope(await user_dicts(request, users), total))


@admin_required
async def list_users(request: web.Request) -> web.Response:
    return await _page_of_users(request)


@admin_required
async def search_users(request: web.Request) -> web.Response:
    return await _page_of_users(request, request.query.get("keyword", ""), request.query.get("group", ""))


@admin_required
async def get_user(request: web.Request) -> web.Response:
    user = await user_admin.get_managed_user(the_user(request), request.match_info["id"])
    return ok(await user_dict(request, user))


@admin_required
async def create_user(request: web.Request) -> web.Response:
    body = await read_json(request)
    user = await user_admin.admin_create_user(request.config_dict[keys.OPTIONS], the_user(request), body)
    await audit.record(request, "user.create", "user", user.id, None, user)
    return ok(await user_dict(request, user))


@admin_required
async def update_user(request: web.Request) -> web.Response:
    body = await read_json(request)
    before = await audit.current(User, body.get("id"))
    user = await user_admin.admin_update_user(services(request), the_user(request), body)
    await audit.record(request, "user.update", "user", user.id, before, user)
    return ok(await user_dict(request, user))


def _manage_result(user: User) -> dict[str, Any]:
    return {"role": user.role, "status": user.status, "DeletedAt": user.deleted_at}


@admin_required
async def manage_user(request: web.Request) -> web.Response:
    body = await read_json(request)
    if body.get("action") in ("promote", "demote") and the_user(request).role >= Role.ROOT:
        await require_fresh(request, the_user(request))  # root changes roles after verifying
    before = await audit.current(User, body.get("id"))
    user = await user_admin.manage_user(services(request), the_user(request), body.get("id"), body.get("action"))
    await audit.record(request, f"user.{body.get('action')}", "user", user.id, before, user)
    return ok(_manage_result(user))


@admin_required
async def delete_user(request: web.Request) -> web.Response:
    before = await audit.current(User, request.match_info["id"])
    user = await user_admin.manage_user(services(request), the_user(request), request.match_info["id"], "delete")
    await audit.record(request, "user.delete", "user", user.id, before, user)
    return ok(_manage_result(user))


@admin_required
async def reset_two_factor(request: web.Request) -> web.Response:
    """Turn a user's two-factor login off (root for anyone, an admin for users below them)."""
    target = await user_admin.get_managed_user(the_user(request), request.match_info["id"])
    await reset_user_two_factor(services(request), the_user(request), target)
    await audit.record(request, "user.2fa.reset", "user", target.id, {"two_factor": True}, {"two_factor": False},
                       target_role=target.role)
    return ok(None, translate("two_factor_reset", language(request)))


async def reset_user_two_factor(services: Services, actor: User, target: User) -> None:
    """`actor` turns `target`'s two-factor login off; every session of the target ends."""
    if not await two_factor.remove(target.id):
        raise ApiError("two_factor_not_enabled")
    await services.sessions.revoke_user(target.id)
