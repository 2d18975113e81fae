"""Re-verification before secrets (`POST /api/verify`, new-api's route) and the guessing limits of
every route that checks a password or a two-factor code of a logged-in user.

`POST /api/verify` bodies:
- `{"method": "password", "password": "…"}`
- `{"method": "2fa", "code": "123456"}` (a backup code works too, and is spent)
- `{"method": "passkey"}`: the passkey routes verify the session themselves (mark_verified(request,
  "passkey")); this answers for that proof while it is fresh, as new-api's console asks after its
  passkey ceremony, and refuses (`verify_passkey_first`) otherwise.
Answer: `{"verified": true, "expires_at": <unix s>, "method": …}`. The proof is the session's only
(api.web.fresh_auth); a caller with an access token and no session cannot verify.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from api import keys
from api.console.auth import over_critical_limit, the_user, user_required
from api.console.handlers.users import sealing_key
from api.errors import ApiError, TooManyRequests
from api.i18n import language, translate
from api.response import ok, read_json
from api.services.accounts import two_factor
from api.services.passwords import verify_password
from api.web import fresh_auth, login_guard
from api.web.sessions import sessions_of
from models import PasskeyCredential, User


async def methods_of(user: User) -> list[str]:
    """How the user can prove themselves again: `password` (a password is set), `2fa` (on),
    `passkey` (one registered)."""
    methods = ["password"] if user.password else []
    if await two_factor.is_enabled(user.id):
        methods.append("2fa")
    if await PasskeyCredential.filter(user_id=user.id).exists():
        methods.append("passkey")
    return methods


async def require_fresh(request: web.Request, user: User) -> None:
    """fresh_auth.require_verified for a user who has a way to verify; an account with none (no
    password, no second factor: an OAuth-only account) has nothing to prove beyond its session."""
    if await methods_of(user):
        await fresh_auth.require_verified(request)


async def prove(request: web.Request, user: User, check: Callable[[], Awaitable[bool]], wrong: str) -> None:
    """Run a password or code check of a logged-in user under the login limits: the critical
    per-address limit (bucket "verify") and the account's per-source counters of
    api.web.login_guard (the same counters as the password login's), refusing with `wrong`."""
    if await over_critical_limit(request, "verify"):
        raise TooManyRequests()
    guard = login_guard.LoginGuard(request.config_dict[keys.STORE], sessions_of(request).secret)
    attempt = await guard.attempt(request, user, user.username)
    if attempt.wait:
        raise TooManyRequests("two_factor_backoff", seconds=attempt.wait)
    if not await check():
        await guard.failed(attempt, request, user.username)
        raise ApiError(wrong)


def _text(request: web.Request, field: str, body: dict[str, object], missing: str) -> str:
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise ApiError(missing)
    return value


@user_required
async def verify(request: web.Request) -> web.Response:
    user = the_user(request)
    body = await read_json(request)
    method = body.get("method")
    if method not in fresh_auth.METHODS:
        raise ApiError("verify_method_unknown", method=str(method)[:20])
    if method == "passkey":
        session = await sessions_of(request).load(request)
        until = await fresh_auth.verified_until(request)
        if session is None or not until or session.data.get("verified_by") != "passkey":
            raise ApiError("verify_passkey_first")
        return ok({"verified": True, "expires_at": until, "method": method}, translate("verified", language(request)))
    if method not in await methods_of(user):
        raise ApiError("verify_method_unavailable", method=method)
    if method == "password":
        password = _text(request, "password", body, "login_fields_required")
        await prove(request, user, lambda: verify_password(password, user.password), "verify_password_wrong")
    else:
        code = _text(request, "code", body, "two_factor_code_required")
        await prove(request, user, lambda: two_factor.check_code(sealing_key(request), user.id, code),
                    "two_factor_code_invalid")
    until = await fresh_auth.mark_verified(request, str(method))
    return ok({"verified": True, "expires_at": until, "method": method}, translate("verified", language(request)))


@user_required
async def verify_status(request: web.Request) -> web.Response:
    """Whether this session is verified (and until when), and the methods the user can verify with."""
    until = await fresh_auth.verified_until(request)
    return ok({"verified": bool(until), "expires_at": until, "methods": await methods_of(the_user(request))})
