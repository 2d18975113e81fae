"""Register, login and logout."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from api import keys
from api.console.auth import critical, over_critical_limit
from api.errors import ApiError, TooManyRequests
from api.response import ok, read_json
from api.services.accounts import mail
from api.services.accounts import users as accounts
from api.services.configuration.bootstrap import DEFAULT_ROOT_PASSWORD, DEFAULT_ROOT_USERNAME
from api.web import login_guard, turnstile
from api.web.sessions import sessions_of
from api.web.turnstile import turnstile_checked
from models import User
from models.enums import Role

routes = web.RouteTableDef()


def login_data(user: User, default_password: bool = False) -> dict[str, Any]:
    return {
        "id": user.id,
        "username": user.username,
        "display_name": user.display_name,
        "role": user.role,
        "status": user.status,
        "group": user.group,
        "default_password": default_password,
    }


async def start_session(request: web.Request, user: User, default_password: bool = False) -> web.Response:
    await sessions_of(request).login(request, user.id)
    return ok(login_data(user, default_password))


@routes.post("/user/login")
async def login(request: web.Request) -> web.Response:
    # The address's critical limit spares a browser known to the account it logs in to: behind a
    # shared address (NAT, a proxy missing from TRUSTED_PROXIES) guessers must not lock the owner out.
    # Without a cookie that could make it known, the refusal comes first, as on the other critical routes.
    over_limit = await over_critical_limit(request, "login")
    if over_limit and not login_guard.may_be_known(request):
        raise TooManyRequests()
    await turnstile.check(request)
    options = request.config_dict[keys.OPTIONS]
    if not options.get_bool("PasswordLoginEnabled"):
        raise ApiError("password_login_disabled")
    body = await read_json(request)
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str) or not username or not password:
        raise ApiError("login_fields_required")
    # The wait is the account's from this source (api.web.login_guard): an attacker's guesses
    # never delay the owner's known browser.
    user = await accounts.login_candidate(username)
    sessions = sessions_of(request)
    guard = login_guard.LoginGuard(request.config_dict[keys.STORE], sessions.secret)
    attempt = await guard.attempt(request, user, username)
    if over_limit and not attempt.known:
        raise TooManyRequests()
    if attempt.wait:
        raise TooManyRequests("login_backoff", seconds=attempt.wait)
    try:
        user = await accounts.check_login(user, password)
    except ApiError as exc:
        if exc.message == "login_failed":
            await guard.failed(attempt)
        raise
    default = (user.role == Role.ROOT and user.username == DEFAULT_ROOT_USERNAME
               and password == DEFAULT_ROOT_PASSWORD)
    response = await start_session(request, user, default)
    await guard.succeeded(attempt, response, sessions.secure)
    return response


@routes.get("/user/logout")
async def logout(request: web.Request) -> web.Response:
    await sessions_of(request).logout(request)
    return ok()


@routes.post("/user/register")
@critical("register")
@turnstile_checked
async def register(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    if not options.get_bool("RegisterEnabled"):
        raise ApiError("registration_disabled")
    if not options.get_bool("PasswordRegisterEnabled"):
        raise ApiError("password_register_disabled")
    body = await read_json(request)
    username = accounts.check_username(body.get("username"))
    password = accounts.check_password(body.get("password"), body.get("password2"))
    email = ""
    if options.get_bool("EmailVerificationEnabled"):
        # Without verification an address is not taken: it would let anyone squat someone's e-mail.
        email = accounts.check_email_allowed(options, body.get("email"))
        code = body.get("verification_code")
        if not isinstance(code, str) or not code.strip():
            raise ApiError("verification_code_required")
        if await User.filter(username=username).exists():
            raise ApiError("username_taken")
        # The code first: only the mailbox's owner learns whether the address is taken.
        if not await mail.consume_code(request.config_dict[keys.STORE], mail.VERIFY, email, code):
            raise ApiError("verification_code_invalid")
        if await accounts.email_in_use(email):
            raise ApiError("email_taken")
    aff_code = body.get("aff_code")
    await accounts.create_account(options, accounts.NewAccount(
        username=username, password=password, email=email, aff_code=aff_code if isinstance(aff_code, str) else ""))
    return ok()
