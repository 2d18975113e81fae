"""The console's static build, with the single-page-app fallback, and 404s for unknown API paths.

The build (`npm run build`) writes a brotli (`.br`) and a gzip (`.gz`) copy beside each script, style
sheet, page and SVG; aiohttp's FileResponse sends the copy the browser accepts (brotli first, then
gzip, else the plain file) with its Content-Encoding. It matches the codings' names in
Accept-Encoding and reads no q-values (a `br;q=0` still gets brotli; no browser sends one, and
curl or a script asking for `identity` gets the plain file). Every asset answer carries `Vary:
Accept-Encoding`, so a shared cache keeps one copy per encoding. Hashed files under /static/ are
immutable; the page itself (index.html) is never cached, and is rendered per request: its
`<html lang>` is the language the console will pick (the first of Accept-Language, as the console's
own detection does), and its `<title>` the configured system name, from the first byte on. Source
maps never leave the build machine: `.map` answers 404 even if a build left one behind, and so does
any missing file under /static/ (a stale chunk must fail as a script, not load the page as one).
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.web import ContentCoding

from api import keys
from api.i18n import language, translate
from api.response import fail, json_body

# First path segments that belong to an API, never to the console's pages.
API_ROOTS = frozenset({"api", "v1", "v1beta", "pg", "mj", "mj-fast", "mj-turbo", "mj-relax", "suno", "dashboard",
                       "mcp"})
IMMUTABLE = "public, max-age=31536000, immutable"
HTML_LANG = re.compile(r'(<html\b[^>]*?\blang=")[^"]*(")', re.IGNORECASE)
TITLE = re.compile(r"(<title>)[^<]*(</title>)", re.IGNORECASE)


def render_index(page: str, lang: str, system_name: str) -> str:
    """index.html as this visitor's first paint: their language, the site's name."""
    page = HTML_LANG.sub(lambda m: f"{m.group(1)}{lang}{m.group(2)}", page, count=1)
    if system_name:
        page = TITLE.sub(lambda m: f"{m.group(1)}{html.escape(system_name)}{m.group(2)}", page, count=1)
    return page


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header admits gzip (by name or `*`, with a q-value above 0)."""
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        if coding.strip() in {"gzip", "*"}:
            q = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


def _index_response(request: web.Request, index: Path) -> web.Response:
    options = request.config_dict.get(keys.OPTIONS)
    name = options.get("SystemName") if options is not None else ""
    page = render_index(index.read_text(encoding="utf-8"), language(request), name)
    response = web.Response(text=page, content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-cache", "Vary": "Accept-Encoding, Accept-Language"})
    if accepts_gzip(request.headers.get("Accept-Encoding", "")):
        response.enable_compression(ContentCoding.gzip)  # a few hundred bytes: compressed on the fly
    return response


async def fallback(request: web.Request) -> web.StreamResponse:
    path = request.path
    root = path.split("/", 2)[1]
    if root in API_ROOTS:
        if root == "api":
            return fail(translate("not_found", language(request)), status=404)
        request_id = request.get(keys.REQUEST_ID, "")
        message = f"Invalid URL ({request.method} {path}) (request id: {request_id})"
        if root == "v1beta":  # Google's error shape
            body: dict[str, Any] = {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}
        else:
            body = {"error": {"message": message, "type": "invalid_request_error", "param": "", "code": ""}}
        return web.Response(body=json_body(body), status=404, content_type="application/json")
    if request.method not in {"GET", "HEAD"}:
        raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD"])
    build: Path = request.config_dict[keys.SETTINGS].frontend_dir
    if "\x00" in path or path.endswith(".map"):
        raise web.HTTPNotFound()
    if build.is_dir():
        index = build / "index.html"
        candidate = (build / path.lstrip("/")).resolve()
        if candidate.is_file() and build.resolve() in candidate.parents and candidate != index.resolve():
            headers = {"Vary": "Accept-Encoding"}
            if path.startswith("/static/"):
                headers["Cache-Control"] = IMMUTABLE
            return web.FileResponse(candidate, headers=headers)
        if path.startswith("/static/"):
            raise web.HTTPNotFound()
        if index.is_file():
            return _index_response(request, index)
    return web.Response(text="The console is not built: run `make run` or `npm run build` in frontend/.",
                        status=404)


def setup_static(app: web.Application) -> None:
    app.router.add_route("*", "/{tail:.*}", fallback)
