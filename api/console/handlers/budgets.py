"""Limits over time as the console shows them: each limit with its window's usage and reset (on the
key views, the user views, and the user's own page)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from api import keys
from api.console.auth import the_user, user_required
from api.response import ok
from api.services.accounts import tokens as accounts_tokens
from api.services.budgets.usage import group_holder, key_holder, read_usage, user_holder
from models import Token, User


def time_zone(request: web.Request) -> str:
    return request.config_dict[keys.OPTIONS].get("BudgetTimeZone") or "UTC"


async def token_dicts(request: web.Request, tokens: Sequence[Token]) -> list[dict[str, Any]]:
    """The keys' wire shapes, each with `limit_usage` (one Redis round trip for the page)."""
    holders = [key_holder(t.user_id, t.id, t.limits) for t in tokens]
    usage = await read_usage(request.config_dict[keys.STORE], holders, time_zone=time_zone(request))
    return [{**accounts_tokens.token_dict(t), "limit_usage": u} for t, u in zip(tokens, usage, strict=True)]


async def token_dict(request: web.Request, token: Token) -> dict[str, Any]:
    return (await token_dicts(request, [token]))[0]


async def user_dicts(request: web.Request, users: Sequence[User]) -> list[dict[str, Any]]:
    """The users' wire shapes, each with `limit_usage` of their own limits."""
    holders = [user_holder(u.id, u.limits) for u in users]
    usage = await read_usage(request.config_dict[keys.STORE], holders, time_zone=time_zone(request))
    return [{**u.public_dict(), "limit_usage": entries} for u, entries in zip(users, usage, strict=True)]


async def user_dict(request: web.Request, user: User) -> dict[str, Any]:
    return (await user_dicts(request, [user]))[0]


@user_required
async def list_self_limits(request: web.Request) -> web.Response:
    """The caller's own limits and their group's (GroupLimits: an allowance for each of its users),
    with usage; `owner` says whose each is, `index` its place in that owner's list."""
    user = the_user(request)
    options = request.config_dict[keys.OPTIONS]
    tz = time_zone(request)
    own, group = await read_usage(request.config_dict[keys.STORE],
                                  [user_holder(user.id, user.limits),
                                   group_holder(user.id, user.group, options.get("GroupLimits") or "")],
                                  time_zone=tz)
    return ok({"items": [*own, *group], "group": user.group, "time_zone": tz})
