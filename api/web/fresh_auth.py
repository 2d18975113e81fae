"""Re-verification before secrets: a session proves its user again (password, two-factor code or
passkey, `POST /api/verify`) before the console shows or changes what an open session alone must
not reach: a channel's key, the second factor itself, the password or e-mail, a role given by root.

The proof is kept in the session's own Redis hash (field `verified_at`, unix seconds) for
VERIFIED_FOR seconds: it is that session's only (another browser of the same user, or a session
started later, has to verify itself), and it ends with the session (logout, a password reset).
"""
from __future__ import annotations

import time

from aiohttp import web

from api.errors import ApiError, Unauthorized
from api.web.sessions import sessions_of

VERIFIED_FOR = 300  # seconds a verification is good for, in its session
FIELD = "verified_at"
METHODS = frozenset({"password", "2fa", "passkey"})


class VerificationRequired(ApiError):
    """HTTP 403 with the envelope, as new-api answers it: the console tells this refusal from the
    others by its status, opens its verification dialog and retries."""

    status = 403

    def __init__(self) -> None:
        super().__init__("verification_required")


async def mark_verified(request: web.Request, method: str) -> int:
    """The request's session has just proved its user again by `method` (one of METHODS); the
    unix time until which it counts as verified."""
    if method not in METHODS:
        raise ValueError(f"unknown verification method {method!r}")
    session = await sessions_of(request).load(request)
    if session is None or not session.user_id:
        raise Unauthorized()
    now = int(time.time())
    await session.set(**{FIELD: str(now), "verified_by": method})
    return now + VERIFIED_FOR


async def verified_until(request: web.Request) -> int:
    """Unix time until which the request's session counts as verified; 0 when it does not."""
    session = await sessions_of(request).load(request)
    if session is None or not session.user_id:
        return 0
    try:
        at = int(session.data.get(FIELD, "0"))
    except ValueError:
        return 0
    until = at + VERIFIED_FOR
    return until if until > time.time() else 0


async def require_verified(request: web.Request) -> None:
    """Refuse (`verification_required`, success false, HTTP 403) unless the session verified itself
    in the last VERIFIED_FOR seconds."""
    if not await verified_until(request):
        raise VerificationRequired()
