"""E-mail verification codes, password-reset mails and the reset itself."""
from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from api import keys
from api.console.auth import critical, services
from api.errors import ApiError
from api.response import ok, read_json
from api.services.accounts import mail
from api.services.accounts import users as accounts
from api.services.passwords import hash_password, random_string
from api.web.login_guard import LoginGuard
from api.web.sessions import sessions_of
from api.web.turnstile import turnstile_checked
from models import User

NEW_PASSWORD_LENGTH = 12


@critical("verification")
@turnstile_checked
async def send_verification_code(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    email = accounts.check_email_allowed(options, request.query.get("email"))
    if not mail.smtp_configured(options):
        raise ApiError("smtp_not_configured")
    store = request.config_dict[keys.STORE]
    code = await mail.issue_code(store, mail.VERIFY, email, mail.VERIFY_CODE_LENGTH)  # same cooldown either way
    if await accounts.email_in_use(email):
        # The same answer as for a free address (no account discovery); the mailbox's owner is told.
        subject, html = mail.address_in_use_mail(options.get("SystemName"))
    else:
        subject, html = mail.verification_mail(options.get("SystemName"), code)
    await _send(request, mail.VERIFY, email, code, subject, html)
    return ok()


@critical("reset")
@turnstile_checked
async def send_reset_mail(request: web.Request) -> web.Response:
    """Answers the same whether or not the address has an account (no account discovery)."""
    options = request.config_dict[keys.OPTIONS]
    email = accounts.normalize_email(request.query.get("email"))
    if not mail.smtp_configured(options):
        raise ApiError("smtp_not_configured")
    # The link is built from ServerAddress alone: never from the request's Host header, which the
    # caller chooses (a link to the caller's own site would hand it the victim's reset token).
    base = options.get("ServerAddress").strip()
    if not base:
        raise ApiError("server_address_required")
    store = request.config_dict[keys.STORE]
    token = await mail.issue_code(store, mail.RESET, email, mail.RESET_TOKEN_LENGTH)
    if not await User.filter(email=email, deleted_at=None).exists():
        return ok()
    link = f"{base.rstrip('/')}/user/reset?{urlencode({'email': email, 'token': token})}"
    subject, html = mail.reset_mail(options.get("SystemName"), link)
    await _send(request, mail.RESET, email, token, subject, html)
    return ok()


@critical("reset")
async def reset_password(request: web.Request) -> web.Response:
    """A valid reset link sets a new random password, returned once; every session of the user ends.
    The link proved the mailbox: this browser becomes the account's only known device (its logins
    are not slowed by someone guessing at the account)."""
    body = await read_json(request)
    email, token = body.get("email"), body.get("token")
    if not isinstance(email, str) or not isinstance(token, str) or not email or not token:
        raise ApiError("reset_link_invalid")
    email = email.strip().lower()
    user = await User.filter(email=email, deleted_at=None).first()
    if user is None or not await mail.consume_code(request.config_dict[keys.STORE], mail.RESET, email, token):
        raise ApiError("reset_link_invalid")
    password = random_string(NEW_PASSWORD_LENGTH)
    await User.filter(id=user.id).update(password=await hash_password(password), access_token=None)
    await accounts.user_changed(services(request), user.id, revoke_sessions=True)
    sessions = sessions_of(request)
    guard = LoginGuard(request.config_dict[keys.STORE], sessions.secret)
    await guard.forget_devices(user.id)
    response = ok(password)
    await guard.trust(user.id, response, sessions.secure)
    return response


async def _send(request: web.Request, kind: str, email: str, code: str, subject: str, html: str) -> None:
    """Queue the mail; if that fails, lift the resend cooldown so the caller may try again at once
    (and the mail does not count against the address's daily cap)."""
    try:
        await mail.send_mail(request.config_dict[keys.JOBS], email, subject, html)
    except Exception:
        await mail.release_cooldown(request.config_dict[keys.STORE], kind, email, code)
        raise
