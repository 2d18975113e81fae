# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Request bodies: each route's bound on the inflated body, refusals in the route's shape (console
envelope, OpenAI error), unknown and corrupt encodings and charsets answered 400, and nothing a
handler left unread inflated after the answer."""
from __future__ import annotations

import asyncio
import gzip
import io
import zlib
from functools import cache

import aiohttp
import orjson
import pytest
from aiohttp import web

from api.bodies import CONSOLE_MAX_BODY, COUNT_MAX_BODY, MAX_BODY, MIB, body_limit, read_body, setup_bodies
from tests.helpers import eventually
from tests.relay.fakes import gateway, headers_for, make_key, rich_user  # noqa: F401

LOGIN = {"username": "root", "password": "123456"}


@cache
def bomb(size: int = 63 * MIB, wbits: int = 31) -> bytes:
    """`size` spaces, gzip (wbits 31) or zlib-wrapped deflate (15): ~1000 times smaller."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(b" " * size) + packer.flush()


def gzipped(headers: dict[str, str] | None = None) -> dict[str, str]:
    return {"Content-Encoding": "gzip", "Content-Type": "application/json", **(headers or {})}


def connection_closed(task: asyncio.Task):
    """The server is done with a request's connection (the task serving it: its drain included)."""
    async def check() -> bool:
        return task.done()
    return check


async def envelope(resp: aiohttp.ClientResponse) -> dict:
    body = await resp.json(content_type=None)
    assert set(body) == {"success", "message", "data"} and body["success"] is False, body
    return body


# -- the bound of each route --------------------------------------------------------------------------


def test_each_route_has_its_bound() -> None:
    assert body_limit("/api/user/login") == CONSOLE_MAX_BODY == 1 * MIB
    assert body_limit("/api/option/") > CONSOLE_MAX_BODY  # what an administrator pastes
    assert body_limit("/v1/chat/completions") == body_limit("/v1beta/models/g:generateContent") == MAX_BODY
    assert body_limit("/mj-fast/mj/submit/imagine") == body_limit("/pg/chat/completions") == MAX_BODY
    assert body_limit("/v1/messages/count_tokens") == body_limit("/v1beta/models/g:countTokens") == COUNT_MAX_BODY
    assert body_limit("/") == body_limit("/healthz") < CONSOLE_MAX_BODY


async def test_a_console_bomb_is_refused_413_in_the_envelope(client) -> None:
    resp = await client.post("/api/user/login", data=bomb(), headers=gzipped())
    assert resp.status == 413
    assert "1 MiB" in (await envelope(resp))["message"]
    resp = await client.post("/api/user/login", data=io.BytesIO(b"{" + b" " * (CONSOLE_MAX_BODY + 10) + b"}"),
                             headers={"Content-Type": "application/json"})
    assert resp.status == 413  # uncompressed: refused by its Content-Length, unread


async def test_a_compressed_console_body_is_still_taken(client) -> None:
    resp = await client.post("/api/user/login", data=gzip.compress(orjson.dumps(LOGIN)), headers=gzipped())
    assert resp.status == 200 and (await resp.json())["success"] is True
    deflated = zlib.compress(orjson.dumps(LOGIN))
    resp = await client.post("/api/user/login", data=deflated, headers=gzipped({"Content-Encoding": "Deflate"}))
    assert resp.status == 200 and (await resp.json())["success"] is True


async def test_inflating_stops_at_the_bound(aiohttp_client) -> None:
    """The console's bound is passed: a few MiB were inflated, not 63."""
    seen: list[web.Request] = []
    tasks: list[asyncio.Task] = []

    async def login(request: web.Request) -> web.Response:
        seen.append(request)
        tasks.append(request.task)
        await read_body(request)
        return web.Response(text="read")

    app = web.Application(client_max_size=MAX_BODY)
    setup_bodies(app)
    app.router.add_post("/api/user/login", login)
    client = await aiohttp_client(app)
    async with aiohttp.ClientSession() as http, http.post(client.make_url("/api/user/login"), data=bomb(),
                                                          headers=gzipped()) as resp:
        assert resp.status == 413
        assert resp.headers["Connection"] == "close"
    await eventually(connection_closed(tasks[0]), timeout=10)
    assert seen[0].content.total_bytes < 4 * CONSOLE_MAX_BODY  # the bound and what the parser inflated ahead


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/user/login", "/"])
async def test_an_unread_compressed_body_is_not_inflated_after_the_answer(aiohttp_client, path: str) -> None:
    """A handler that answers without reading (no key: 401; a page: 405) leaves the body unread:
    aiohttp would inflate all of it to drain the connection; it closes the connection instead."""
    seen: list[web.Request] = []
    tasks: list[asyncio.Task] = []

    async def refuse(request: web.Request) -> web.Response:
        seen.append(request)
        tasks.append(request.task)
        raise web.HTTPUnauthorized()

    app = web.Application(client_max_size=MAX_BODY)
    setup_bodies(app)
    app.router.add_route("*", path, refuse)
    client = await aiohttp_client(app)
    async with aiohttp.ClientSession() as http, http.post(client.make_url(path), data=bomb(),
                                                          headers=gzipped()) as resp:
        assert resp.status == 401
        assert resp.headers["Connection"] == "close"
    await eventually(connection_closed(tasks[0]), timeout=10)
    assert seen[0].content.total_bytes < 1 * MIB  # what the parser had inflated before the answer


# -- encodings and charsets ---------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "data", "words"), [
    ("deflate", b"this is not deflate data", "decompressed as 'deflate'"),
    ("gzip", b"\x1f\x8bnot gzip data at all", "decompressed as 'gzip'"),
    ("compress", orjson.dumps(LOGIN), "Unsupported Content-Encoding 'compress'"),
    ("gzip, gzip", orjson.dumps(LOGIN), "Unsupported Content-Encoding"),
    ("x-\xff", orjson.dumps(LOGIN), "Unsupported Content-Encoding 'x-?'"),
])
async def test_a_corrupt_or_unknown_encoding_is_400(client, encoding: str, data: bytes, words: str) -> None:
    resp = await client.post("/api/user/login", data=data, headers=gzipped({"Content-Encoding": encoding}))
    assert resp.status == 400
    assert words in (await envelope(resp))["message"]


@pytest.mark.parametrize(("content_type", "data", "words"), [
    ("application/json; charset=latin-1", '{"username": "r\xf6ot"}'.encode("latin-1"), "charset 'latin-1'"),
    ("application/json; charset=x-\xff\xfe", orjson.dumps(LOGIN), "charset 'x-??'"),
    ("application/json; charset=no-such-charset", orjson.dumps(LOGIN), "charset 'no-such-charset'"),
    ("application/json", '{"username": "r\xf6ot", "password": "x"}'.encode("latin-1"), "not valid UTF-8"),
    ("text/plain", b"\xff\xfe{\x00}", "NUL"),
])
async def test_a_body_that_is_not_utf8_is_400(client, content_type: str, data: bytes, words: str) -> None:
    resp = await client.post("/api/user/login", data=data, headers={"Content-Type": content_type})
    assert resp.status == 400
    assert words in (await envelope(resp))["message"]


async def test_utf8_charsets_are_taken(client) -> None:
    for charset in ("utf-8", "UTF-8", "utf8"):
        resp = await client.post("/api/user/login", data=orjson.dumps(LOGIN),
                                 headers={"Content-Type": f"application/json; charset={charset}"})
        assert (await resp.json())["success"] is True, charset


# -- the relay: the key first, then the body ----------------------------------------------------------


async def test_the_relay_checks_the_key_before_reading(gateway) -> None:
    resp = await gateway.post("/v1/chat/completions", data=bomb(), headers=gzipped())
    assert resp.status == 401 and "error" in await resp.json()
    resp = await gateway.post("/v1/chat/completions", data=b"not deflate", headers=gzipped(
        {"Content-Encoding": "deflate"}))
    assert resp.status == 401


async def test_relay_bodies_are_refused_in_the_openai_shape(gateway) -> None:
    token = await make_key(await rich_user())
    resp = await gateway.post("/v1/chat/completions", data=bomb(MAX_BODY + MIB), headers=gzipped(headers_for(token)))
    assert resp.status == 413
    error = (await resp.json())["error"]
    assert "64 MiB" in error["message"] and error["type"] == "invalid_request_error"
    resp = await gateway.post("/v1/chat/completions", data=b"not deflate",
                              headers=gzipped({**headers_for(token), "Content-Encoding": "deflate"}))
    assert resp.status == 400
    assert "decompressed as 'deflate'" in (await resp.json())["error"]["message"]
    resp = await gateway.post("/v1/messages/count_tokens", data=bomb(COUNT_MAX_BODY + MIB),
                              headers=gzipped({**headers_for(token), "anthropic-version": "2023-06-01"}))
    assert resp.status == 413
    body = await resp.json()
    assert body["type"] == "error" and "32 MiB" in body["error"]["message"]  # Anthropic's shape
