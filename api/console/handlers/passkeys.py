"""Passkeys (WebAuthn) on new-api's routes: a user registers, lists and deletes them, logs in with one,
and proves it is them again with one (re-verification); an administrator removes a user's passkeys.

Begin answers `data.options` = {"publicKey": …} (what the browser's navigator.credentials takes once
its base64url fields are bytes); finish takes the credential as the browser's PublicKeyCredential
JSON (id, rawId, type, response{…}). A ceremony belongs to the console session that began it: login
begins by giving an anonymous browser its session, as the OAuth state does.

The ceremonies' module (py_webauthn and its cryptography, about 25 MiB) is imported by the first
passkey request, not with every API process.
"""
from __future__ import annotations

import hashlib
import hmac

from aiohttp import web

from api import keys
from api.console.auth import admin_required, critical, the_user, user_required
from api.console.handlers.users import start_session
from api.errors import ApiError
from api.response import ok, read_json
from api.services.params import id_value
from api.web import audit, fresh_auth, login_guard
from api.web.sessions import Session, sessions_of


def _binding(request: web.Request, session: Session) -> str:
    """What a ceremony's challenge is kept under: the session, by a digest only the server can make."""
    secret = sessions_of(request).secret
    return hmac.new(secret, b"passkey:" + session.sid.encode(), hashlib.sha256).hexdigest()[:32]


async def _user_session(request: web.Request) -> str:
    """The binding of the logged-in user's own console session (an access token has none)."""
    session = await sessions_of(request).load(request)
    if session is None or session.user_id != the_user(request).id:
        raise ApiError("passkey_session_required")
    return _binding(request, session)


# -- the user's own passkeys -------------------------------------------------------------------------
@user_required
async def passkey_status(request: web.Request) -> web.Response:
    """`enabled` and `last_used_at` (new-api's), and `passkeys`: id, name, times — no key material."""
    from api.services.accounts import passkeys
    return ok(await passkeys.status_of(the_user(request)))


@user_required
async def register_begin(request: web.Request) -> web.Response:
    """Body (optional): {"name": "…"} to register the passkey under."""
    from api.services.accounts import passkeys
    body = await read_json(request)
    binding = await _user_session(request)
    options = await passkeys.registration_options(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS],
                                                  the_user(request), binding, body.get("name"))
    return ok({"options": options})


@user_required
async def register_finish(request: web.Request) -> web.Response:
    from api.services.accounts import passkeys
    body = await read_json(request)
    binding = await _user_session(request)
    passkey = await passkeys.register(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS],
                                      the_user(request), binding, body)
    return ok(passkey.public_dict())


@user_required
async def delete_passkey(request: web.Request) -> web.Response:
    """`?id=` deletes that passkey; without it every passkey of the user goes (new-api's one-passkey route)."""
    from api.services.accounts import passkeys
    raw = request.query.get("id")
    passkey_id = None
    if raw is not None:
        passkey_id = id_value(raw.strip())
        if passkey_id is None:
            raise ApiError("invalid_param", name="id")
    await passkeys.delete_own(the_user(request), passkey_id)
    return ok()


# -- login ---------------------------------------------------------------------------------------------
@critical("passkey")
async def login_begin(request: web.Request) -> web.Response:
    """Body (optional): {"username": "…"} to limit the login to that user's passkeys."""
    from api.services.accounts import passkeys
    body = await read_json(request)
    session = await sessions_of(request).get_or_create(request)
    options = await passkeys.login_options(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS],
                                           _binding(request, session), body.get("username"))
    return ok({"options": options})


@critical("passkey")
async def login_finish(request: web.Request) -> web.Response:
    """The session starts as a password login's does (same answer); this browser becomes one the
    account knows (api.web.login_guard), as after a correct password."""
    from api.services.accounts import passkeys
    body = await read_json(request)
    sessions = sessions_of(request)
    session = await sessions.load(request)
    if session is None:
        raise ApiError("passkey_challenge_missing")
    user = await passkeys.login(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS],
                                _binding(request, session), body)
    # A passkey with user verification is a strong factor: a two-factor gate of the session starter
    # has nothing to add.
    response = await start_session(request, user, second_factor=True)  # a passkey is a strong factor
    guard = login_guard.LoginGuard(request.config_dict[keys.STORE], sessions.secret)
    await guard.trust(user.id, response, sessions.secure)
    return response


# -- re-verification -----------------------------------------------------------------------------------
@user_required
async def verify_begin(request: web.Request) -> web.Response:
    from api.services.accounts import passkeys
    binding = await _user_session(request)
    options = await passkeys.verification_options(request.config_dict[keys.STORE],
                                                  request.config_dict[keys.OPTIONS], the_user(request), binding)
    return ok({"options": options})


@critical("passkey")
@user_required
async def verify_finish(request: web.Request) -> web.Response:
    """The session counts as verified for fresh_auth.VERIFIED_FOR seconds (`expires_at`: until when)."""
    from api.services.accounts import passkeys
    body = await read_json(request)
    binding = await _user_session(request)
    await passkeys.verify(request.config_dict[keys.STORE], request.config_dict[keys.OPTIONS], the_user(request),
                          binding, body)
    until = await fresh_auth.mark_verified(request, "passkey")
    return ok({"verified": True, "expires_at": until})


# -- administration ------------------------------------------------------------------------------------
@admin_required
async def reset_passkey(request: web.Request) -> web.Response:
    """Every passkey of the user goes: an admin's for users below them, root's for anyone."""
    from api.services.accounts import passkeys
    target = await passkeys.reset_for(the_user(request), request.match_info["id"])
    await audit.record(request, "user.passkey.reset", "user", target.id, {"passkeys": True}, {"passkeys": False},
                       target_role=target.role)
    return ok()
