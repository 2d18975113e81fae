"""Self-service of the logged-in user: profile, access token, invite code and earnings, models, groups."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import services, the_user, user_required
from api.console.handlers.secure_verify import require_fresh
from api.response import ok, read_json
from api.services.accounts import users as accounts
from api.web.sessions import sessions_of


@user_required
async def get_self(request: web.Request) -> web.Response:
    return ok(the_user(request).public_dict())


@user_required
async def update_self(request: web.Request) -> web.Response:
    """Profile fields; a new password needs `original_password` (unless the account has none yet)
    and a session verified in the last minutes (POST /api/verify), and ends every session, this one
    continuing under a fresh session id."""
    user = the_user(request)
    body = await read_json(request)
    if body.get("password") not in (None, ""):
        await require_fresh(request, user)
    if await accounts.update_self(services(request), user, body):
        session = await sessions_of(request).load(request)
        if session is not None:
            await sessions_of(request).login(request, user.id)
    return ok()


@user_required
async def delete_self(request: web.Request) -> web.Response:
    await accounts.delete_self(services(request), the_user(request))
    await sessions_of(request).logout(request)
    return ok()


@user_required
async def generate_access_token(request: web.Request) -> web.Response:
    return ok(await accounts.new_access_token(the_user(request)))


@user_required
async def get_aff_code(request: web.Request) -> web.Response:
    return ok(await accounts.aff_code_of(the_user(request)))


@user_required
async def transfer_aff_quota(request: web.Request) -> web.Response:
    body = await read_json(request)
    await accounts.transfer_aff_quota(services(request), the_user(request),
                                      body.get("quota"))
    return ok()


@user_required
async def list_usable_models(request: web.Request) -> web.Response:
    return ok(await accounts.usable_models(the_user(request).group, request.config_dict[keys.OPTIONS]))


async def list_public_groups(request: web.Request) -> web.Response:
    """The groups users may pick, with their descriptions (the reference's playground and key editor ask this)."""
    return ok(accounts.public_groups(request.config_dict[keys.OPTIONS]))


@user_required
async def list_self_groups(request: web.Request) -> web.Response:
    return ok(accounts.selectable_groups(request.config_dict[keys.OPTIONS], the_user(request)))
