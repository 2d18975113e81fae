"""The errors the gateway itself answers, in the client's format: a refusal (never retried, never a
reason to disable a channel) and the response that carries any relay error back."""
from __future__ import annotations

from collections.abc import Mapping

import orjson
from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.middlewares import REQUEST_ID_HEADER
from api.relay.inbound.base import REQUEST_INBOUND, Inbound
from api.upstream.errors import RelayError


def refuse(request: web.Request, status: int, message_key: str, code: str, error_type: str = "new_api_error",
           headers: Mapping[str, str] | None = None, **params: object) -> RelayError:
    """A refusal by the gateway itself (never retried, never a reason to disable a channel)."""
    err = RelayError.local_error(status, translate(message_key, language(request), **params), code, error_type)
    err.headers = dict(headers or {})
    return err


def error_response(request: web.Request, err: RelayError) -> web.Response:
    """The error in the shape of the client's format (OpenAI's unless the route is another's)."""
    request_id = request.get(keys.REQUEST_ID, "")
    headers = {REQUEST_ID_HEADER: request_id, **err.headers}
    inbound: type[Inbound] | None = request.get(REQUEST_INBOUND)
    body = inbound.error_body(err, request_id) if inbound is not None else err.to_body(request_id)
    return web.Response(body=orjson.dumps(body), status=err.status, headers=headers, content_type="application/json")
