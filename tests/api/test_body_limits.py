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

from api import bodies
from api.bodies import (
    CONSOLE_MAX_BODY,
    COUNT_MAX_BODY,
    MAX_BODY,
    MAX_CONTAINERS,
    MAX_RATIO,
    MIB,
    _large_body_turn,
    body_limit,
    read_body,
    setup_bodies,
)
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


async def test_brotli_and_zstd_bodies_are_taken(client) -> None:
    import brotli  # both in requirements.txt: aiohttp inflates these encodings only with them
    from backports import zstd

    for encoding, data in (("br", brotli.compress(orjson.dumps(LOGIN))), ("zstd", zstd.compress(orjson.dumps(LOGIN)))):
        resp = await client.post("/api/user/login", data=data, headers=gzipped({"Content-Encoding": encoding}))
        assert resp.status == 200 and (await resp.json())["success"] is True, encoding
    for encoding, data in (("br", brotli.compress(b" " * 63 * MIB)), ("zstd", zstd.compress(b" " * 63 * MIB))):
        assert len(data) < 100_000
        resp = await client.post("/api/user/login", data=data, headers=gzipped({"Content-Encoding": encoding}))
        assert resp.status == 413 and "1 MiB" in (await envelope(resp))["message"], encoding


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


async def test_large_bodies_go_to_their_parsers_one_a_loop_iteration() -> None:
    """Large bodies read at the same moment are parsed in turn, the loop polling its sockets between
    two, not all in one iteration with every other request waiting."""
    loop = asyncio.get_running_loop()
    iteration = 0

    def count_iterations() -> None:
        nonlocal iteration
        iteration += 1
        if not done.is_set():
            loop.call_soon(count_iterations)

    async def read_one(handed: list[int]) -> None:
        await _large_body_turn()
        handed.append(iteration)  # its parse would run here, before the task awaits again

    done = asyncio.Event()
    loop.call_soon(count_iterations)
    handed: list[int] = []
    await asyncio.gather(*[read_one(handed) for _ in range(4)])
    done.set()
    assert len(set(handed)) == 4, handed


# -- encodings and charsets ---------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "data", "words"), [
    ("deflate", b"this is not deflate data", "decompressed as 'deflate'"),
    ("gzip", b"\x1f\x8bnot gzip data at all", "decompressed as 'gzip'"),
    ("compress", orjson.dumps(LOGIN), "Unsupported Content-Encoding 'compress'"),
    ("gzip, gzip", orjson.dumps(LOGIN), "Unsupported Content-Encoding"),
    ("x-\xff", orjson.dumps(LOGIN), "Unsupported Content-Encoding 'x-?'"),
    ("br", b"this is not brotli", "decompressed as 'br'"),
    ("zstd", b"this is not zstd", "decompressed as 'zstd'"),
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


async def raw_post(client, path: str, header: bytes, body: bytes) -> tuple[int, dict]:
    """A request written byte for byte (a header that is not UTF-8, as no HTTP client sends one)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n"
                     + b"Content-Length: " + str(len(body)).encode() + b"\r\n" + header + b"\r\n\r\n" + body)
        answer = await reader.read()
    finally:
        writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), orjson.loads(payload)


@pytest.mark.parametrize(("header", "words"), [
    (b"Content-Type: application/json; charset=\xff\xfe", "Unsupported charset '??'"),
    (b"Content-Encoding: gz\xffip", "Unsupported Content-Encoding 'gz?ip'"),
])
async def test_a_header_that_is_not_utf8_is_400(client, header: bytes, words: str) -> None:
    status, body = await raw_post(client, "/api/user/login", header, orjson.dumps(LOGIN))
    assert status == 400 and body["success"] is False and words in body["message"], body


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


async def test_relay_bodies_are_refused_in_the_openai_shape(gateway, monkeypatch) -> None:
    monkeypatch.setattr(bodies, "MAX_RATIO", 10_000)  # the bound is passed before the ratio
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


async def test_a_body_inflating_past_the_ratio_is_413(gateway) -> None:
    """Past RATIO_FLOOR, a body may inflate to MAX_RATIO times what came compressed, JSON or a form,
    whatever its route's bound: 2 MiB of JSON from 2 KB of gzip are refused, the same JSON sent as
    it is, or compressed as real text compresses, is read."""
    token = await make_key(await rich_user())
    padded = orjson.dumps({"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}],
                           "user": "u" * 2 * MIB})
    assert len(gzip.compress(padded)) * MAX_RATIO < len(padded)
    resp = await gateway.post("/v1/chat/completions", data=gzip.compress(padded), headers=gzipped(headers_for(token)))
    error = (await resp.json())["error"]
    assert resp.status == 413 and f"{MAX_RATIO} times" in error["message"], error
    text = orjson.dumps({"model": "no-such-model",
                         "messages": [{"role": "user", "content": str(list(range(400_000)))}]})
    assert len(text) > 2 * MIB and len(gzip.compress(text)) * MAX_RATIO > len(text)
    for data, headers in ((padded, {"Content-Type": "application/json"}), (gzip.compress(text), gzipped())):
        resp = await gateway.post("/v1/chat/completions", data=io.BytesIO(data),
                                  headers={**headers_for(token), **headers})
        assert resp.status != 413, await resp.text()  # read: refused for its model, not its size
    boundary = "gw"
    form = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n'.encode()
            + b"\0" * 4 * MIB + f"\r\n--{boundary}--\r\n".encode())
    resp = await gateway.post("/v1/audio/transcriptions", data=gzip.compress(form), headers={
        **headers_for(token), "Content-Encoding": "gzip", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert resp.status == 413 and f"{MAX_RATIO} times" in (await resp.json())["error"]["message"]


async def test_a_body_of_too_many_objects_is_413_before_it_is_parsed(gateway) -> None:
    """Parsing and walking a body costs its event loop per object: past MAX_CONTAINERS objects and
    arrays a body is refused as it arrives; a large body of media or text, or one just within, is read."""
    token = await make_key(await rich_user())
    head, tail = b'{"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}], "x": [', b"]}"
    many = head + b",".join([b"{}"] * MAX_CONTAINERS) + tail
    resp = await gateway.post("/v1/chat/completions", data=io.BytesIO(many),
                              headers={**headers_for(token), "Content-Type": "application/json"})
    error = (await resp.json())["error"]
    assert resp.status == 413 and f"{MAX_CONTAINERS:,} JSON objects" in error["message"], error
    within = head + b",".join([b"[]"] * (MAX_CONTAINERS - 10)) + tail
    media = orjson.dumps({"model": "no-such-model", "messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,"
                                                                         + "QUFB" * 2 * MIB}}]}]})
    for data in (within, media):
        resp = await gateway.post("/v1/chat/completions", data=io.BytesIO(data),
                                  headers={**headers_for(token), "Content-Type": "application/json"})
        assert resp.status != 413, await resp.text()  # read: refused for its model, not its shape


async def test_task_bodies_are_read_the_same_way(gateway) -> None:
    token = await make_key(await rich_user())
    resp = await gateway.post("/mj/submit/imagine", data=b"not deflate",
                              headers=gzipped({**headers_for(token), "Content-Encoding": "deflate"}))
    assert resp.status == 400
    body = await resp.json()
    assert body["code"] == 4 and "decompressed as 'deflate'" in body["description"]  # Midjourney's shape
