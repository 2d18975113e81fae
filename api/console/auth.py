"""Who is calling the console API, and may they: sessions, access tokens, roles."""
from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from aiohttp import web

from api import keys
from api.errors import Forbidden, TooManyRequests, Unauthorized
from api.services.accounts.deps import Services
from api.services.passwords import sha256_hex
from api.web.net import client_ip
from api.web.sessions import sessions_of
from models import User
from models.enums import Role, UserStatus

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
USER_HEADER = "New-Api-User"
ROLE_ATTRIBUTE = "required_role"  # a handler's least role, as `require` marks it


async def current_user(request: web.Request) -> User | None:
    """The authenticated user, or None for an anonymous caller; Unauthorized on a bad credential."""
    if keys.USER in request:
        return request[keys.USER]
    user_id = 0
    via_token = False
    session = await sessions_of(request).load(request)
    if session is not None and session.user_id:
        user_id = session.user_id
    else:
        auth = request.headers.get("Authorization", "").strip()
        if auth:
            token = auth[7:].strip() if auth.lower().startswith("bearer ") else auth
            if token:
                if not token.isascii():  # ours are; other bytes (a header's raw 0xff) match no token
                    raise Unauthorized()
                found = await User.filter(access_token=sha256_hex(token), deleted_at=None).first()
                if found is None:
                    raise Unauthorized()
                user_id, via_token = found.id, True
                request[keys.USER] = found
    if not user_id:
        request[keys.USER] = None
        return None
    header = request.headers.get(USER_HEADER, "")
    if header != str(user_id):
        raise Unauthorized("user_header_mismatch")
    user = request[keys.USER] if via_token else await User.filter(id=user_id, deleted_at=None).first()
    if user is None:
        raise Unauthorized()
    if user.status != UserStatus.ENABLED:
        raise Unauthorized("user_banned")
    request[keys.USER] = user
    return user


def require(role: Role) -> Callable[[Handler], Handler]:
    """Decorator: the handler runs only for a logged-in user whose role is at least `role`."""

    def decorator(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def wrapper(request: web.Request) -> web.StreamResponse:
            user = await current_user(request)
            if user is None:
                raise Unauthorized()
            if user.role < role:
                raise Forbidden()
            return await handler(request)

        setattr(wrapper, ROLE_ATTRIBUTE, role)  # read by the OpenAPI description (openapi.py)
        return wrapper

    return decorator


user_required = require(Role.USER)
admin_required = require(Role.ADMIN)
root_required = require(Role.ROOT)


def critical(bucket: str) -> Callable[[Handler], Handler]:
    """Decorator: the stricter per-IP limit of register, login, mail and OAuth routes."""

    def decorator(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def wrapper(request: web.Request) -> web.StreamResponse:
            if await over_critical_limit(request, bucket):
                raise TooManyRequests()
            return await handler(request)

        return wrapper

    return decorator


async def over_critical_limit(request: web.Request, bucket: str) -> bool:
    """Count this request against its address's critical limit; True when it is over."""
    settings = request.config_dict[keys.SETTINGS]
    allowed = await request.config_dict[keys.LIMITER].hit(
        f"critical:{bucket}", client_ip(request), settings.rate_limit_critical, settings.critical_rate_limit_window)
    return not allowed


def the_user(request: web.Request) -> User:
    """The user a `require`-decorated handler runs for."""
    user = request[keys.USER]
    assert user is not None, "the_user() outside a require()-decorated handler"
    return user


def services(request: web.Request) -> Services:
    """What the account services act on, for this process."""
    return request.config_dict[keys.SERVICES]
