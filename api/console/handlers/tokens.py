"""API keys of the calling user (an admin sees and changes only their own too)."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import the_user, user_required
from api.console.handlers.budgets import token_dict, token_dicts
from api.response import ok, read_json
from api.services.accounts import tokens
from api.services.paging import read_page
from api.services.params import body_id, path_id

SIZE_PARAMS = ("size", "page_size")


@user_required
async def list_tokens(request: web.Request) -> web.Response:
    page = read_page(request.query, first=0, size_params=SIZE_PARAMS)
    items, total = await tokens.list_tokens(the_user(request).id, page.offset, page.size)
    return ok(page.envelope(await token_dicts(request, items), total))


@user_required
async def search_tokens(request: web.Request) -> web.Response:
    page = read_page(request.query, first=0, size_params=SIZE_PARAMS)
    keyword = request.query.get("keyword", "").strip()
    key = request.query.get("token", "").strip()
    items, total = await tokens.search_tokens(the_user(request).id, keyword, key, page.offset, page.size)
    return ok(page.envelope(await token_dicts(request, items), total))


@user_required
async def get_token(request: web.Request) -> web.Response:
    token = await tokens.get_token(the_user(request).id, path_id(request))
    return ok(await token_dict(request, token))


@user_required
async def create_token(request: web.Request) -> web.Response:
    user = the_user(request)
    body = await read_json(request)
    options = request.config_dict[keys.OPTIONS]
    fields = tokens.clean_fields(body, user, options, creating=True)
    await tokens.check_may_create(request.config_dict[keys.LIMITER], options, user)
    token = await tokens.create_token(request.config_dict[keys.STORE], request.config_dict[keys.EVENTS], user,
                                      fields)
    return ok(await token_dict(request, token))


@user_required
async def update_token(request: web.Request) -> web.Response:
    user = the_user(request)
    body = await read_json(request)
    token_id = body_id(body.get("id"))
    store, events = request.config_dict[keys.STORE], request.config_dict[keys.EVENTS]
    if request.query.get("status_only", "") not in ("", "false", "0"):
        token = await tokens.set_token_status(store, events, user, token_id, body.get("status"))
        return ok(await token_dict(request, token))
    current = await tokens.get_token(user.id, token_id)
    fields = tokens.clean_fields(body, user, request.config_dict[keys.OPTIONS], creating=False, current=current)
    token = await tokens.update_token(store, events, current, fields)
    return ok(await token_dict(request, token))


@user_required
async def delete_token(request: web.Request) -> web.Response:
    await tokens.delete_token(request.config_dict[keys.STORE], request.config_dict[keys.EVENTS],
                              the_user(request), path_id(request))
    return ok()
