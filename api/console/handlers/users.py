"""Register, login (password, then the two-factor code when it is on) and logout."""
from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from api import keys
from api.console.auth import critical, over_critical_limit
from api.errors import ApiError, TooManyRequests
from api.i18n import language, translate
from api.response import ok, read_json
from api.services.accounts import mail, two_factor
from api.services.accounts import users as accounts
from api.services.configuration.bootstrap import DEFAULT_ROOT_PASSWORD, DEFAULT_ROOT_USERNAME
from api.web import login_guard, turnstile
from api.web.sessions import sessions_of
from api.web.turnstile import turnstile_checked
from models import User
from models.enums import Role


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


# Pre-login session fields of a login waiting for its second factor (or, where the option requires
# two-factor login of admins, for its setup); SessionManager.login drops them with the old session.
PENDING_USER = "pending_2fa_uid"
SETUP_USER = "setup_2fa_uid"
UNTIL = "pending_2fa_until"
DEFAULT_PASSWORD = "pending_2fa_default"
PENDING_FOR = 300  # seconds to enter the code after the password
SETUP_FOR = 900  # seconds to set up the authenticator after the password


async def _pending_session(request: web.Request, field: str, user: User, default_password: bool,
                           seconds: int) -> None:
    """A fresh pre-login session (a new id: no fixation) that names the user only in `field`: no route
    takes it for a login; the turnstile proof is carried over."""
    sessions = sessions_of(request)
    old = await sessions.load(request)
    carried = {k: v for k, v in (old.data if old else {}).items() if k == "turnstile"}
    await sessions.logout(request)
    session = await sessions.get_or_create(request)
    await session.set(**carried, **{field: str(user.id), UNTIL: str(int(time.time()) + seconds),
                                    DEFAULT_PASSWORD: "1" if default_password else ""})


async def pending_user(request: web.Request, field: str) -> tuple[User, bool] | None:
    """The user a pre-login session waits for (`field`: PENDING_USER or SETUP_USER) while it is
    fresh, and whether their password was the default one."""
    session = await sessions_of(request).load(request)
    if session is None or session.user_id:
        return None
    try:
        user_id, until = int(session.data.get(field, "0")), int(session.data.get(UNTIL, "0"))
    except ValueError:
        return None
    if not user_id or until < time.time():
        return None
    user = await User.filter(id=user_id).first()
    if user is None:
        return None
    accounts.check_can_log_in(user)
    return user, session.data.get(DEFAULT_PASSWORD) == "1"


async def _open(request: web.Request, user: User, default_password: bool,
                second_factor: bool) -> tuple[web.Response, bool]:
    """The two-factor gate of every login; (the answer, whether a session was opened for good or for
    the setup that the option requires)."""
    options = request.config_dict[keys.OPTIONS]
    if not second_factor:
        if await two_factor.is_enabled(user.id):
            await _pending_session(request, PENDING_USER, user, default_password, PENDING_FOR)
            return ok({"require_2fa": True}, translate("two_factor_required", language(request))), False
        if two_factor.required_for(options, user):
            await _pending_session(request, SETUP_USER, user, default_password, SETUP_FOR)
            return ok({"require_2fa_setup": True, "username": user.username},
                      translate("two_factor_setup_required", language(request))), True
    await sessions_of(request).login(request, user.id)
    return ok(login_data(user, default_password)), True


async def start_session(request: web.Request, user: User, default_password: bool = False, *,
                        second_factor: bool = False) -> web.Response:
    """Log the user in: the one door of every login (password, OAuth, Telegram, WeChat, the code
    step, a passkey).

    `second_factor`: the caller has already checked a second factor (the two-factor code of
    /user/login/2fa, a passkey login) and the session opens at once. Otherwise an account with
    two-factor login on gets no session yet: the answer is `success: true, data.require_2fa: true`
    and this browser's pre-login session waits PENDING_FOR for `POST /api/user/login/2fa`. An admin
    or root without it, while TwoFactorRequiredForAdminsEnabled is on, gets `data.require_2fa_setup:
    true` and a pre-login session that only the setup routes (/user/2fa/setup, /user/2fa/enable)
    take, for SETUP_FOR; enabling finishes the login."""
    return (await _open(request, user, default_password, second_factor))[0]


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
            await guard.failed(attempt, request, username)
        raise
    default = (user.role == Role.ROOT and user.username == DEFAULT_ROOT_USERNAME
               and password == DEFAULT_ROOT_PASSWORD)
    response, opened = await _open(request, user, default, second_factor=False)
    if opened:  # a pending code step keeps the counters: a wrong code counts with wrong passwords
        await guard.succeeded(attempt, response, sessions.secure)
    return response


async def login_second_factor(request: web.Request) -> web.Response:
    """`{"code": …}`: a code of the authenticator app or a backup code, in the browser whose password
    login answered require_2fa. Wrong codes count per account and source with wrong passwords
    (api.web.login_guard); a code is good once."""
    over_limit = await over_critical_limit(request, "login")
    if over_limit and not login_guard.may_be_known(request):
        raise TooManyRequests()
    pending = await pending_user(request, PENDING_USER)
    if pending is None:
        raise ApiError("two_factor_login_expired")
    user, default = pending
    sessions = sessions_of(request)
    guard = login_guard.LoginGuard(request.config_dict[keys.STORE], sessions.secret)
    attempt = await guard.attempt(request, user, user.username)
    if over_limit and not attempt.known:
        raise TooManyRequests()
    if attempt.wait:
        raise TooManyRequests("two_factor_backoff", seconds=attempt.wait)
    code = (await read_json(request)).get("code")
    if not isinstance(code, str) or not code.strip():
        raise ApiError("two_factor_code_required")
    if not await two_factor.check_code(sealing_key(request), user.id, code):
        await guard.failed(attempt, request, user.username)
        raise ApiError("two_factor_code_invalid")
    response = await start_session(request, user, default, second_factor=True)
    await guard.succeeded(attempt, response, sessions.secure)
    return response


def sealing_key(request: web.Request) -> bytes:
    """The key of the sealed two-factor secrets (api.services.accounts.two_factor)."""
    return two_factor.sealing_key(request.config_dict[keys.SETTINGS].session_secret)


async def logout(request: web.Request) -> web.Response:
    await sessions_of(request).logout(request)
    return ok()


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
