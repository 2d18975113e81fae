"""Register, login and logout."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import critical
from api.errors import ApiError, TooManyRequests
from api.response import ok, read_json
from api.services import accounts, mail
from api.services.bootstrap import DEFAULT_ROOT_PASSWORD, DEFAULT_ROOT_USERNAME
from api.services.login_guard import LoginGuard
from api.services.sessions import sessions_of
from api.services.turnstile import turnstile_checked
from models import User
from models.enums import Role

routes = web.RouteTableDef()


def login_data(user: User, default_password: bool = False) -> dict:
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
@critical("login")
@turnstile_checked
async def login(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    if not options.get_bool("PasswordLoginEnabled"):
        raise ApiError("password_login_disabled")
    body = await read_json(request)
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str) or not username or not password:
        raise ApiError("login_fields_required")
    guard = LoginGuard(request.config_dict[keys.STORE])
    wait = await guard.wait_left(username)
    if wait:
        raise TooManyRequests("login_backoff", seconds=wait)
    try:
        user = await accounts.authenticate(username, password)
    except ApiError as exc:
        if exc.message == "login_failed":
            await guard.failed(username)
        raise
    await guard.succeeded(username)
    default = (user.role == Role.ROOT and user.username == DEFAULT_ROOT_USERNAME
               and password == DEFAULT_ROOT_PASSWORD)
    return await start_session(request, user, default)


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
