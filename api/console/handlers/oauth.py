"""Third-party login and binding: GitHub, LINUX DO, WeChat, Telegram, and e-mail binding.

GitHub and LINUX DO callbacks log in (creating the account when registration is open) or, for a
logged-in caller, bind the identity and answer with the message "bind" (what the console expects).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from api import keys
from api.console.auth import USER_HEADER, critical, current_user, services, the_user, user_required
from api.console.handlers.secure_verify import require_fresh
from api.console.handlers.users import start_session
from api.errors import ApiError, Unauthorized
from api.response import ok
from api.services.accounts import identities, mail
from api.services.accounts import users as accounts
from api.services.accounts.identities import Identity
from api.web import oauth
from api.web.sessions import sessions_of
from models import User
from models.enums import UserStatus

BIND = "bind"


def _require_enabled(request: web.Request, provider: str) -> None:
    _, label, option = accounts.PROVIDERS[provider]
    if not request.config_dict[keys.OPTIONS].get_bool(option):
        raise ApiError("oauth_disabled", provider=label)


def _code(request: web.Request) -> str:
    code = request.query.get("code", "").strip()
    if not code:
        raise ApiError("invalid_param", name="code")
    return code


async def _login_or_bind(request: web.Request, identity: Identity, aff: str) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    oauth.check_linuxdo_level(options, identity)
    caller = await current_user(request)
    if caller is not None:
        await identities.bind_identity(services(request), caller, identity)
        return ok(None, BIND)
    user = await identities.login_with_identity(services(request), identity, aff)
    return await start_session(request, user)


@critical("oauth")
async def get_state(request: web.Request) -> web.Response:
    return ok(await oauth.new_state(request, request.query.get("aff", "").strip()))


@critical("oauth")
async def github_callback(request: web.Request) -> web.Response:
    return await _code_callback(request, "github", oauth.github_identity)


@critical("oauth")
async def linuxdo_callback(request: web.Request) -> web.Response:
    return await _code_callback(request, "linuxdo", oauth.linuxdo_identity)


async def _code_callback(request: web.Request, provider: str,
                         identity_of: Callable[[web.Request, str], Awaitable[Identity]]) -> web.Response:
    """An OAuth code callback: provider on, state matches the session, code → identity → login or bind."""
    _require_enabled(request, provider)
    code = _code(request)
    remembered_aff = await oauth.take_state(request, request.query.get("state", ""))
    identity = await identity_of(request, code)
    return await _login_or_bind(request, identity, request.query.get("aff", "") or remembered_aff)


@critical("oauth")
async def wechat_login(request: web.Request) -> web.Response:
    _require_enabled(request, "wechat")
    identity = await oauth.wechat_identity(request, _code(request))
    user = await identities.login_with_identity(services(request), identity,
                                              request.query.get("aff", ""))
    return await start_session(request, user)


@critical("oauth")
@user_required
async def wechat_bind(request: web.Request) -> web.Response:
    _require_enabled(request, "wechat")
    identity = await oauth.wechat_identity(request, _code(request))
    await identities.bind_identity(services(request), the_user(request), identity)
    return ok()


@critical("oauth")
@user_required
async def email_bind(request: web.Request) -> web.Response:
    await require_fresh(request, the_user(request))  # a new address can take over the account
    options = request.config_dict[keys.OPTIONS]
    email = accounts.check_email_allowed(options, request.query.get("email"))
    code = request.query.get("code", "").strip()
    if not code:
        raise ApiError("verification_code_required")
    user = the_user(request)
    # The code first: only the mailbox's owner learns whether the address is taken.
    if not await mail.consume_code(request.config_dict[keys.STORE], mail.VERIFY, email, code):
        raise ApiError("verification_code_invalid")
    if await accounts.email_in_use(email, except_id=user.id):
        raise ApiError("email_taken")
    await accounts.bind_email(services(request), user, email)
    return ok()


@critical("oauth")
async def telegram_login(request: web.Request) -> web.Response:
    _require_enabled(request, "telegram")
    options = request.config_dict[keys.OPTIONS]
    identity = oauth.telegram_identity(options, dict(request.query))
    user = await identities.login_with_identity(services(request), identity, "")
    return await start_session(request, user)


@critical("oauth")
async def telegram_bind(request: web.Request) -> web.StreamResponse:
    """Called by the console (New-Api-User header: JSON answer) or reached by the login widget's
    redirect (a browser navigation: the session cookie alone, then back to /setting)."""
    _require_enabled(request, "telegram")
    identity = oauth.telegram_identity(request.config_dict[keys.OPTIONS], dict(request.query))
    navigation = USER_HEADER not in request.headers
    user = await _session_user(request) if navigation else await current_user(request)
    if user is None:
        raise Unauthorized()
    await identities.bind_identity(services(request), user, identity)
    if navigation:
        raise web.HTTPFound("/setting")
    return ok()


async def _session_user(request: web.Request) -> User | None:
    session = await sessions_of(request).load(request)
    if session is None or not session.user_id:
        return None
    return await User.filter(id=session.user_id, deleted_at=None, status=int(UserStatus.ENABLED)).first()
