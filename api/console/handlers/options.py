"""Runtime options (root only); each change also writes an audit entry (api.web.audit) beside the
MANAGE log row it always wrote."""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import root_required, the_user
from api.errors import ApiError
from api.response import ok, read_json
from api.services.configuration.option_rules import DEFAULTS, SECRET_OPTIONS
from api.services.logs import log_event
from api.web import audit
from models.enums import LogType


@root_required
async def list_options(request: web.Request) -> web.Response:
    return ok(request.config_dict[keys.OPTIONS].public_items())


@root_required
async def update_option(request: web.Request) -> web.Response:
    body = await read_json(request)
    key = body.get("key")
    if not isinstance(key, str) or not key:
        raise ApiError("invalid_param", name="key")
    options = request.config_dict[keys.OPTIONS]
    old = options.values.get(key)
    value = await options.update(key, body.get("value"))
    await audit.record(request, "option.set", "option", key, {"value": old}, {"value": value},
                       secret_fields=("value",) if audit.option_is_secret(key) else ())
    user = the_user(request)
    hidden = key in SECRET_OPTIONS
    shown = "(hidden)" if hidden else (value if len(value) <= 200 else value[:200] + "…")
    await request.config_dict[keys.JOBS].send(
        "system.record_log", user.id, int(LogType.MANAGE), f"option {key} set to {shown}", user.username,
        other=log_event("option_set", key=key, value="" if hidden else shown, hidden=hidden))
    return ok()


@root_required
async def reset_model_ratio(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    old = options.values.get("ModelRatio")
    value = await options.update("ModelRatio", DEFAULTS["ModelRatio"])
    await audit.record(request, "option.reset", "option", "ModelRatio", {"value": old}, {"value": value})
    return ok()
