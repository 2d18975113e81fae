"""The console's build as the API process serves it: pre-compressed copies by Accept-Encoding, the
plain file otherwise, no source maps, and a page in the visitor's language that is never cached."""
from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import brotli
import pytest
from aiohttp import web

from api import keys
from api.app import create_app
from api.static import setup_static
from models.settings import Settings
from tests.helpers import ApiClient

SCRIPT = b"console.log('the console');\n" * 200
PAGE = ('<!doctype html><html lang="en"><head><title>AI Gateway</title>'
        '<script defer="defer" src="/static/js/main.1a2b.js"></script></head><body><div id="root"></div></body></html>')


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A console build as `npm run build` leaves it: hashed assets with their .br and .gz copies."""
    root = tmp_path / "build"
    (root / "static" / "js").mkdir(parents=True)
    (root / "static" / "css").mkdir()
    (root / "index.html").write_text(PAGE)
    (root / "index.html.gz").write_bytes(gzip.compress(PAGE.encode()))  # the build's copy, in English
    script = root / "static" / "js" / "main.1a2b.js"
    script.write_bytes(SCRIPT)
    script.with_name(script.name + ".br").write_bytes(brotli.compress(SCRIPT))
    script.with_name(script.name + ".gz").write_bytes(gzip.compress(SCRIPT))
    script.with_name(script.name + ".map").write_text('{"version": 3}')  # left behind by a build with maps
    (root / "static" / "css" / "main.3c4d.css").write_text("body { color: black; }\n" * 50)  # no copies
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return root


@pytest.fixture
async def console(aiohttp_client, build: Path, tmp_path: Path):
    """Only the static routes, on a bare application (no database, no Redis)."""
    app = web.Application()
    app[keys.SETTINGS] = Settings.from_env({"SESSION_SECRET": "static-tests", "DATA_DIR": str(tmp_path),
                                            "FRONTEND_DIR": str(build)})
    setup_static(app)
    return await aiohttp_client(app, auto_decompress=False)


@pytest.mark.parametrize(("accept", "encoding", "copy"), [
    ("gzip, deflate, br, zstd", "br", ".br"),  # Chromium's header: brotli preferred
    ("gzip, deflate", "gzip", ".gz"),
    ("identity", None, ""),
    ("", None, ""),
])
async def test_a_script_goes_out_in_the_encoding_the_browser_accepts(console, build: Path, accept: str,
                                                                     encoding: str | None, copy: str) -> None:
    path = "/static/js/main.1a2b.js"
    resp = await console.get(path, headers={"Accept-Encoding": accept})
    assert resp.status == 200
    assert await resp.read() == (build / (path.lstrip("/") + copy)).read_bytes()
    assert resp.headers.get("Content-Encoding") == encoding
    assert resp.content_type in {"text/javascript", "application/javascript"}
    assert resp.headers["Vary"] == "Accept-Encoding"
    assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert resp.headers["ETag"]


async def test_each_encoding_has_its_own_etag_and_revalidates(console) -> None:
    path = "/static/js/main.1a2b.js"
    tags = set()
    for accept in ("br", "gzip", "identity"):
        resp = await console.get(path, headers={"Accept-Encoding": accept})
        tags.add(resp.headers["ETag"])
        again = await console.get(path, headers={"Accept-Encoding": accept, "If-None-Match": resp.headers["ETag"]})
        assert again.status == 304
    assert len(tags) == 3


async def test_ranges_are_served_from_the_plain_file(console) -> None:
    resp = await console.get("/static/js/main.1a2b.js", headers={"Accept-Encoding": "identity", "Range": "bytes=0-10"})
    assert resp.status == 206
    assert await resp.read() == SCRIPT[:11]
    assert resp.headers["Content-Range"] == f"bytes 0-10/{len(SCRIPT)}"


async def test_a_file_without_copies_goes_out_plain(console, build: Path) -> None:
    resp = await console.get("/static/css/main.3c4d.css", headers={"Accept-Encoding": "gzip, br"})
    assert resp.status == 200
    assert "Content-Encoding" not in resp.headers
    assert resp.content_type == "text/css"
    assert await resp.read() == (build / "static/css/main.3c4d.css").read_bytes()
    assert resp.headers["Vary"] == "Accept-Encoding"
    resp = await console.get("/logo.png")
    assert resp.content_type == "image/png" and "immutable" not in resp.headers.get("Cache-Control", "")


async def test_source_maps_and_missing_assets_answer_404(console) -> None:
    assert (await console.get("/static/js/main.1a2b.js.map")).status == 404  # present in the build, still private
    assert (await console.get("/static/js/main.ffff.js.map")).status == 404
    # A chunk of an older build is gone: 404, not the page (which the browser would run as a script).
    resp = await console.get("/static/js/main.0000.js")
    assert resp.status == 404 and "<html" not in await resp.text()


@pytest.mark.parametrize(("accept_language", "lang"), [
    ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
    ("zh-TW", "zh"),
    ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
    ("fr-FR,fr;q=0.9", "en"),
    (None, "en"),
])
async def test_the_page_speaks_the_visitors_language_and_is_never_cached(console, accept_language: str | None,
                                                                         lang: str) -> None:
    headers = {"Accept-Encoding": "identity"}
    if accept_language:
        headers["Accept-Language"] = accept_language
    for path in ("/login", "/", "/index.html", "/channel/edit/3"):
        resp = await console.get(path, headers=headers)
        assert resp.status == 200
        page = await resp.text()
        assert f'<html lang="{lang}">' in page
        assert '<script defer="defer" src="/static/js/main.1a2b.js"></script>' in page
        assert resp.headers["Cache-Control"] == "no-cache"
        assert resp.content_type == "text/html" and resp.charset == "utf-8"
        assert set(resp.headers["Vary"].replace(" ", "").split(",")) == {"Accept-Encoding", "Accept-Language"}


async def test_the_page_is_compressed_when_the_browser_accepts_it(console) -> None:
    resp = await console.get("/login", headers={"Accept-Encoding": "gzip, deflate, br", "Accept-Language": "zh-CN"})
    assert resp.headers["Content-Encoding"] == "gzip"
    assert '<html lang="zh">' in gzip.decompress(await resp.read()).decode()  # rendered, not the build's copy
    for refused in ("gzip;q=0, deflate", "identity", "br"):
        resp = await console.get("/login", headers={"Accept-Encoding": refused})
        assert "Content-Encoding" not in resp.headers, refused
        assert '<html lang="en">' in await resp.text()


async def test_the_page_carries_the_configured_name(aiohttp_client, settings, build: Path) -> None:
    client = await aiohttp_client(create_app(replace(settings, frontend_dir=build)))
    page = await (await client.get("/login")).text()
    assert "<title>AI Gateway</title>" in page  # the default system name
    root = ApiClient(client)
    await root.login("root", "123456")
    assert (await root.put("/api/option/", {"key": "SystemName", "value": "Acme <AI> & Co"}))["success"]
    resp = await client.get("/token")
    assert "<title>Acme &lt;AI&gt; &amp; Co</title>" in await resp.text()
    assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]  # still the console's page
