"""Login and logout."""
from __future__ import annotations

from aiohttp import web
from tortoise.expressions import Q

from api import keys
from api.console.auth import critical
from api.errors import ApiError
from api.response import ok, read_json
from api.services.bootstrap import DEFAULT_ROOT_PASSWORD, DEFAULT_ROOT_USERNAME
from api.services.passwords import verify_password
from api.services.sessions import sessions_of
from models import User
from models.enums import Role, UserStatus

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


@routes.post("/user/login")
@critical("login")
async def login(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    if not options.get_bool("PasswordLoginEnabled"):
        raise ApiError("password_login_disabled")
    body = await read_json(request)
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str) or not username or not password:
        raise ApiError("login_fields_required")
    user = await User.filter(Q(username=username) | Q(email=username), deleted_at=None).first()
    if user is None or not await verify_password(password, user.password):
        raise ApiError("login_failed")
    if user.status != UserStatus.ENABLED:
        raise ApiError("user_banned")
    await sessions_of(request).login(request, user.id)
    default = (user.role == Role.ROOT and user.username == DEFAULT_ROOT_USERNAME
               and password == DEFAULT_ROOT_PASSWORD)
    return ok(login_data(user, default))


@routes.get("/user/logout")
async def logout(request: web.Request) -> web.Response:
    await sessions_of(request).logout(request)
    return ok()
