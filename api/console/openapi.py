"""The console API's OpenAPI description, served at GET /api/openapi.json.

Built from the route table itself (every route, its path parameters, the role its handler requires
as `x-role`, the first line of its docstring as summary), plus the query parameters and body
fields below; tests/api/test_openapi.py checks that each entry here names a real route, and fuzzes
every operation as every role. Every answer is the envelope {success, message, data}, but for
the files of FILES (exports), whose errors are the envelope.
"""
from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from api.console.auth import ROLE_ATTRIBUTE
from models.enums import Role

PAGING = {"p": "integer", "page_size": "integer"}
LOG_FILTERS = {**PAGING, "type": "integer", "start_timestamp": "integer", "end_timestamp": "integer",
               "username": "string", "token_name": "string", "model_name": "string", "channel": "integer",
               "group": "string"}
AUDIT_FILTERS = {"actor_id": "integer", "actor": "string", "action": "string", "target_type": "string",
                 "target_id": "string", "start_timestamp": "integer", "end_timestamp": "integer"}
TASK_FILTERS = {**PAGING, "channel_id": "integer", "start_timestamp": "integer", "end_timestamp": "integer",
                "mj_id": "string", "task_id": "string", "platform": "string"}

# path (as routed, under /api) → query parameters and their types
QUERY: dict[str, dict[str, str]] = {
    "/channel/": {**PAGING, "id_sort": "boolean", "tag_mode": "boolean", "tag": "string"},
    "/channel/search": {**PAGING, "keyword": "string", "group": "string", "model": "string", "tag": "string"},
    "/channel/models": {},
    "/data/": {"start_timestamp": "integer", "end_timestamp": "integer", "username": "string",
               "default_time": "string", "by_user": "string"},
    "/data/self/": {"start_timestamp": "integer", "end_timestamp": "integer", "default_time": "string"},
    "/log/": LOG_FILTERS,
    "/audit/": {**PAGING, **AUDIT_FILTERS},
    "/audit/export": {**AUDIT_FILTERS, "format": "string"},
    "/log/self/": LOG_FILTERS,
    "/log/stat": LOG_FILTERS,
    "/log/self/stat": LOG_FILTERS,
    "/redemption/": PAGING,
    "/redemption/search": {**PAGING, "keyword": "string"},
    "/mj/": TASK_FILTERS,
    "/mj/self/": TASK_FILTERS,
    "/task/": TASK_FILTERS,
    "/task/self/": TASK_FILTERS,
    "/token/": {**PAGING, "size": "integer"},
    "/token/search": {**PAGING, "keyword": "string", "token": "string"},
    "/user/": PAGING,
    "/user/search": {**PAGING, "keyword": "string", "group": "string"},
    "/verification": {"email": "string", "turnstile": "string"},
    "/reset_password": {"email": "string", "turnstile": "string"},
    "/oauth/email/bind": {"email": "string", "code": "string"},
    "/oauth/github": {"code": "string", "state": "string"},
    "/oauth/linuxdo": {"code": "string", "state": "string"},
    "/oauth/wechat": {"code": "string"},
    "/oauth/wechat/bind": {"code": "string"},
    "/channel/test/{id}": {"model": "string"},
    "/token/{id}": {},
}

ANY: dict[str, Any] = {}  # a field of any JSON type: the fuzzer tries them all

# (method, path) → the body's fields (any JSON value unless typed)
BODY: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/user/login"): {"username": {"type": "string"}, "password": {"type": "string"}},
    ("POST", "/user/register"): {"username": {"type": "string"}, "password": {"type": "string"},
                                 "email": ANY, "verification_code": ANY, "aff_code": ANY},
    ("POST", "/user/reset"): {"email": ANY, "token": ANY},
    ("PUT", "/user/self"): {"username": ANY, "display_name": ANY, "password": ANY, "original_password": ANY},
    ("POST", "/user/"): {"username": ANY, "password": ANY, "display_name": ANY},
    ("PUT", "/user/"): {"id": ANY, "username": ANY, "display_name": ANY, "password": ANY, "group": ANY,
                        "quota": ANY, "remark": ANY, "email": ANY},
    ("POST", "/user/manage"): {"id": ANY, "action": {"enum": ["disable", "enable", "promote", "demote", "delete"]}},
    ("POST", "/user/topup"): {"key": ANY},
    ("POST", "/user/amount"): {"amount": ANY},
    ("POST", "/user/pay"): {"amount": ANY, "payment_method": ANY},
    ("POST", "/user/aff_transfer"): {"quota": ANY},
    ("POST", "/token/"): {"name": ANY, "remain_quota": ANY, "expired_time": ANY, "unlimited_quota": ANY,
                          "model_limits_enabled": ANY, "model_limits": ANY, "allow_ips": ANY, "group": ANY},
    ("PUT", "/token/"): {"id": ANY, "name": ANY, "remain_quota": ANY, "expired_time": ANY, "unlimited_quota": ANY,
                         "status": ANY, "model_limits_enabled": ANY, "model_limits": ANY, "allow_ips": ANY},
    ("POST", "/redemption/"): {"name": ANY, "quota": ANY, "count": ANY, "expired_time": ANY},
    ("PUT", "/redemption/"): {"id": ANY, "name": ANY, "quota": ANY, "status": ANY, "expired_time": ANY},
    ("POST", "/channel/"): {"mode": ANY, "channel": ANY, "multi_key_mode": ANY},
    ("PUT", "/channel/"): {"id": ANY, "name": ANY, "type": ANY, "key": ANY, "base_url": ANY, "models": ANY,
                           "group": ANY, "priority": ANY, "weight": ANY, "status": ANY, "model_mapping": ANY,
                           "multi_key": ANY, "multi_key_mode": ANY, "key_mode": ANY, "tag": ANY,
                           "cache_per_key": ANY, "max_inflight": ANY},
    ("POST", "/channel/multi_key/manage"): {
        "channel_id": ANY, "key_index": ANY, "fingerprint": ANY, "keys": ANY, "page": ANY, "page_size": ANY,
        "status": ANY, "action": {"enum": ["get_key_status", "enable_key", "disable_key", "enable_all_keys",
                                           "disable_all_keys", "delete_key", "delete_disabled_keys", "add_keys"]}},
    ("POST", "/channel/tag/disabled"): {"tag": ANY},
    ("POST", "/channel/tag/enabled"): {"tag": ANY},
    ("PUT", "/channel/tag"): {"tag": ANY, "new_tag": ANY, "priority": ANY, "weight": ANY, "models": ANY,
                              "groups": ANY, "model_mapping": ANY},
    ("POST", "/channel/batch/tag"): {"ids": ANY, "tag": ANY},
    ("POST", "/channel/batch"): {"ids": ANY},
    ("POST", "/channel/fix"): {},
    ("PUT", "/option/"): {"key": ANY, "value": ANY},
    ("POST", "/channel/fetch_models"): {"type": ANY, "base_url": ANY, "key": ANY, "other": ANY},
}

# path → what its 200 answer is when it is a file, not the envelope (its errors are the envelope)
FILES: dict[str, tuple[str, ...]] = {"/audit/export": ("application/x-ndjson", "text/csv")}

_PARAM = re.compile(r"{(\w+)(?::[^}]*)?}")


def _path_of(route: web.AbstractRoute) -> str | None:
    info = route.resource.get_info() if route.resource is not None else {}
    return info.get("path") or info.get("formatter")


def _role(handler: Any) -> str:
    role = getattr(handler, ROLE_ATTRIBUTE, None)
    return {None: "anonymous", Role.USER: "user", Role.ADMIN: "admin", Role.ROOT: "root"}.get(role, str(role))


def _query_for(path: str) -> dict[str, str]:
    return QUERY.get(path) or QUERY.get(path.rstrip("/") + "/") or QUERY.get(path.rstrip("/")) or {}


def _body_for(method: str, path: str) -> dict[str, Any] | None:
    for candidate in (path, path.rstrip("/") + "/", path.rstrip("/")):
        if (method, candidate) in BODY:
            return BODY[(method, candidate)]
    return None


def build(console: web.Application, prefix: str = "/api") -> dict[str, Any]:
    envelope = {"type": "object", "required": ["success", "message"], "properties": {
        "success": {"type": "boolean"}, "message": {"type": "string"}, "data": {}}}
    paths: dict[str, dict[str, Any]] = {}
    for route in console.router.routes():
        path = _path_of(route)
        if path is None or route.method in {"HEAD", "OPTIONS", "*"}:
            continue
        path = path.removeprefix(prefix) if path.startswith(prefix + "/") else path  # mounted: already prefixed
        handler = route.handler
        params: list[dict[str, Any]] = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "integer"}}
            for name in _PARAM.findall(path)]
        params += [{"name": name, "in": "query", "required": False, "schema": {"type": kind}}
                   for name, kind in _query_for(path).items()]
        name = re.sub(r"\W+", "_", path.strip("/")) + ("_" if path.endswith("/") else "")
        operation: dict[str, Any] = {
            "operationId": f"{route.method.lower()}_{name}",
            "summary": ((handler.__doc__ or "").strip().splitlines() or [""])[0],
            "x-role": _role(handler),
            "parameters": params,
            "responses": {"200": {"description": "a file" if path in FILES else "the envelope",
                                  "content": {kind: {"schema": {"type": "string"}} for kind in FILES[path]}
                                  if path in FILES else {"application/json": {"schema": envelope}}},
                          "default": {"description": "an error, in the envelope",
                                      "content": {"application/json": {"schema": envelope}}}},
        }
        if route.method in {"POST", "PUT", "PATCH"}:
            fields = _body_for(route.method, path)
            schema: dict[str, Any] = {"type": "object"}
            if fields:
                schema["properties"] = fields
            operation["requestBody"] = {"required": False, "content": {"application/json": {"schema": schema}}}
        full = prefix + _PARAM.sub(lambda m: "{" + m.group(1) + "}", path)
        paths.setdefault(full, {})[route.method.lower()] = operation
    return {"openapi": "3.0.3", "info": {"title": "Console API", "version": "1"}, "paths": paths}


def routed(console: web.Application) -> set[tuple[str, str]]:
    """(method, path) of every route: what the tables above may name."""
    return {(route.method, path) for route in console.router.routes()
            if (path := _path_of(route)) is not None and route.method not in {"HEAD", "OPTIONS"}}
