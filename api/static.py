"""The console's static build, with the single-page-app fallback, and 404s for unknown API paths."""
from __future__ import annotations

from pathlib import Path

from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.response import fail, json_body

# First path segments that belong to an API, never to the console's pages.
API_ROOTS = frozenset({"api", "v1", "v1beta", "pg", "mj", "mj-fast", "mj-turbo", "mj-relax", "suno", "dashboard"})


async def fallback(request: web.Request) -> web.StreamResponse:
    path = request.path
    root = path.split("/", 2)[1]
    if root in API_ROOTS:
        if root == "api":
            return fail(translate("not_found", language(request)), status=404)
        request_id = request.get(keys.REQUEST_ID, "")
        message = f"Invalid URL ({request.method} {path}) (request id: {request_id})"
        if root == "v1beta":  # Google's error shape
            body: dict = {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}
        else:
            body = {"error": {"message": message, "type": "invalid_request_error", "param": "", "code": ""}}
        return web.Response(body=json_body(body), status=404, content_type="application/json")
    if request.method not in {"GET", "HEAD"}:
        raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD"])
    build: Path = request.config_dict[keys.SETTINGS].frontend_dir
    if "\x00" in path:
        raise web.HTTPNotFound()
    if build.is_dir():
        candidate = (build / path.lstrip("/")).resolve()
        if candidate.is_file() and build.resolve() in candidate.parents:
            headers = {"Cache-Control": "public, max-age=31536000, immutable"} if "/static/" in path else {}
            return web.FileResponse(candidate, headers=headers)
        index = build / "index.html"
        if index.is_file():
            return web.FileResponse(index, headers={"Cache-Control": "no-cache"})
    return web.Response(text="The console is not built: run `make run` or `npm run build` in frontend/.",
                        status=404)


def setup_static(app: web.Application) -> None:
    app.router.add_route("*", "/{tail:.*}", fallback)
