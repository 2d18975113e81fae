"""The {success, message, data} envelope of the console API, built in one place."""
from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

_DUMPS_OPTIONS = orjson.OPT_NON_STR_KEYS


def json_body(payload: Any) -> bytes:
    return orjson.dumps(payload, option=_DUMPS_OPTIONS)


def ok(data: Any = None, message: str = "", **extra: Any) -> web.Response:
    """A successful answer. `extra` adds top-level fields (e.g. /api/pricing's group_ratio)."""
    body = {"success": True, "message": message, "data": data, **extra}
    return web.Response(body=json_body(body), content_type="application/json")


def fail(message: str, status: int = 200) -> web.Response:
    body = {"success": False, "message": message, "data": None}
    return web.Response(body=json_body(body), status=status, content_type="application/json")


async def read_json(request: web.Request) -> dict[str, Any]:
    """The JSON object of the request body; ApiError when it is not one."""
    from api.errors import ApiError

    raw = await request.read()
    if not raw:
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError("invalid_json_body") from exc
    if not isinstance(data, dict):
        raise ApiError("invalid_json_body")
    return data
