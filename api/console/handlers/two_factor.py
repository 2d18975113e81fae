"""Two-factor login of the logged-in user (new-api's /api/user/2fa/* routes) and its admin figures.

Setup and enable also take the pre-login session of an admin whom TwoFactorRequiredForAdminsEnabled
sends to set it up (api.console.handlers.users.start_session): enabling there finishes the login.
"""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import admin_required, current_user, services, the_user, user_required
from api.console.handlers.secure_verify import prove, require_fresh
from api.console.handlers.users import SETUP_USER, pending_user, sealing_key, start_session
from api.errors import ApiError, Unauthorized
from api.i18n import language, translate
from api.response import ok, read_json
from api.services.accounts import two_factor
from api.services.passwords import verify_password
from api.web import audit
from api.web.sessions import sessions_of
from models import User


def _said(request: web.Request, key: str) -> str:
    return translate(key, language(request))


async def _enrolling(request: web.Request) -> tuple[User, bool, bool]:
    """(the user, whether this is the setup-only pre-login session, whether their password was the
    default one)."""
    user = await current_user(request)
    if user is not None:
        return user, False, False
    pending = await pending_user(request, SETUP_USER)
    if pending is None:
        raise Unauthorized()
    return pending[0], True, pending[1]


@user_required
async def get_status(request: web.Request) -> web.Response:
    user = the_user(request)
    answer = await two_factor.status(user.id)
    answer["required"] = two_factor.required_for(request.config_dict[keys.OPTIONS], user)
    return ok(answer)


async def setup(request: web.Request) -> web.Response:
    """A new pending secret: `secret`, `qr_code_data` (the otpauth:// URI, issuer SystemName) and
    `backup_codes` (valid once enabled); shown once."""
    user, _, _ = await _enrolling(request)
    issuer = request.config_dict[keys.OPTIONS].get("SystemName")
    started = await two_factor.begin_setup(sealing_key(request), user, issuer)
    return ok({"secret": started.secret, "qr_code_data": started.uri, "backup_codes": started.backup_codes},
              _said(request, "two_factor_setup_started"))


async def enable(request: web.Request) -> web.Response:
    """`{"code": …}` of the pending secret turns two-factor login on and ends the account's other
    sessions (they were opened without it); a setup-only session becomes the login."""
    user, setup_only, default = await _enrolling(request)
    body = await read_json(request)
    await prove(request, user, lambda: _confirmed(request, user, body.get("code")), "two_factor_code_invalid")
    if setup_only:
        return await start_session(request, user, default, second_factor=True)
    await services(request).sessions.revoke_user(user.id)
    await sessions_of(request).login(request, user.id)
    return ok(None, _said(request, "two_factor_enabled"))


async def _confirmed(request: web.Request, user: User, code: object) -> bool:
    try:
        await two_factor.confirm_setup(sealing_key(request), user, code)
    except ApiError as exc:
        if exc.message == "two_factor_code_invalid":
            return False
        raise
    return True


@user_required
async def disable(request: web.Request) -> web.Response:
    """`{"code": …}` (authenticator or backup code) or `{"password": …}`, in a session verified in the
    last minutes (POST /api/verify). Refused while the option requires it of this user."""
    user = the_user(request)
    await require_fresh(request, user)
    if two_factor.required_for(request.config_dict[keys.OPTIONS], user):
        raise ApiError("two_factor_still_required")
    if not await two_factor.is_enabled(user.id):
        raise ApiError("two_factor_not_enabled")
    body = await read_json(request)
    code, password = body.get("code"), body.get("password")
    if isinstance(code, str) and code.strip():
        await prove(request, user, lambda: two_factor.check_code(sealing_key(request), user.id, code),
                    "two_factor_code_invalid")
    elif isinstance(password, str) and password and user.password:
        await prove(request, user, lambda: verify_password(password, user.password), "verify_password_wrong")
    else:
        raise ApiError("two_factor_disable_proof")
    await disable_two_factor(user.id)
    await audit.record(request, "user.2fa.disable", "user", user.id, {"two_factor": True}, {"two_factor": False},
                       target_role=user.role)
    return ok(None, _said(request, "two_factor_disabled"))


async def disable_two_factor(user_id: int) -> bool:
    """The user turns two-factor login off (their secret and backup codes are deleted)."""
    return await two_factor.remove(user_id)


@user_required
async def regenerate_backup_codes(request: web.Request) -> web.Response:
    """`{"code": …}` of the authenticator: ten new backup codes replace the old ones; shown once."""
    user = the_user(request)
    if not await two_factor.is_enabled(user.id):
        raise ApiError("two_factor_not_enabled")
    code = (await read_json(request)).get("code")
    await prove(request, user, lambda: two_factor.check_code(sealing_key(request), user.id, code, backup=False),
                "two_factor_code_invalid")
    codes = await two_factor.new_backup_set(user.id)
    return ok({"backup_codes": codes}, _said(request, "two_factor_backup_codes_new"))


@admin_required
async def get_stats(request: web.Request) -> web.Response:
    return ok(await two_factor.stats())
