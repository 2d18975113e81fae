# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The images the gateway fetches for one request (image URLs inlined for Gemini) have a budget: a
count checked before any fetch, a total of bytes checked as they arrive, and a bound on the fetches
running at once; a refusal is a 400 `invalid_image_url` and nothing is sent upstream."""
from __future__ import annotations

import asyncio
import base64

import pytest
from aiohttp import web

from api import keys
from api.upstream import media
from api.upstream.catalogue import ChannelType
from api.upstream.errors import RelayError
from api.upstream.media import FETCH_CONCURRENCY, MAX_IMAGES, MAX_MEDIA_BYTES, fetch_images
from tests.helpers import eventually
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, rich_user  # noqa: F401
from tests.upstream.providers.gemini.fake_gemini import FakeGemini

MODEL = "gemini-2.0-flash"


class Images:
    """An image server: `/<n>.png?size=…` answers `size` bytes of PNG; counts what it was asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.running = 0
        self.most_running = 0
        self.gate: asyncio.Event | None = None
        self.server = None

    async def image(self, request: web.Request) -> web.Response:
        self.asked += 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            return web.Response(body=b"\x89PNG" + b"\0" * int(request.query.get("size", "100")),
                                content_type="image/png")
        finally:
            self.running -= 1

    def url(self, n: int, size: int = 100) -> str:
        assert self.server is not None
        return str(self.server.make_url(f"/{n}.png?size={size}"))


@pytest.fixture
async def images(aiohttp_server) -> Images:
    server = Images()
    app = web.Application()
    app.router.add_get("/{name}", server.image)
    server.server = await aiohttp_server(app)
    return server


def test_the_budget_is_sane() -> None:
    assert MAX_IMAGES == 16 and MAX_MEDIA_BYTES == 40 * 1024 * 1024 and FETCH_CONCURRENCY == 4


async def test_too_many_images_are_refused_before_any_fetch(images: Images) -> None:
    with pytest.raises(RelayError) as refused:
        await fetch_images([images.url(n) for n in range(MAX_IMAGES + 1)], allow_private=True)
    assert refused.value.status == 400 and refused.value.code == "invalid_image_url"
    assert f"at most {MAX_IMAGES} images" in refused.value.message
    assert images.asked == 0
    fetched = await fetch_images([images.url(n, size=n) for n in range(MAX_IMAGES)], allow_private=True)
    assert [len(data) for _, data in fetched] == [4 + n for n in range(MAX_IMAGES)]  # in order
    assert {mime for mime, _ in fetched} == {"image/png"}


async def test_the_bytes_of_a_request_are_counted_together(images: Images) -> None:
    urls = [images.url(n, size=40_000) for n in range(3)]
    with pytest.raises(RelayError, match="larger than 100000 bytes together") as refused:
        await fetch_images(urls, allow_private=True, max_bytes=100_000)  # each fits, the three do not
    assert refused.value.status == 400
    assert len(await fetch_images(urls[:2], allow_private=True, max_bytes=100_000)) == 2


async def test_fetches_of_one_request_run_a_few_at_a_time(images: Images) -> None:
    images.gate = asyncio.Event()
    fetching = asyncio.ensure_future(fetch_images([images.url(n) for n in range(10)], allow_private=True))

    async def slots_full() -> bool:
        return images.running == FETCH_CONCURRENCY

    try:
        await eventually(slots_full, timeout=10)
        await asyncio.sleep(0)  # nothing else may start while the slots are held
        assert images.running == FETCH_CONCURRENCY
    finally:
        images.gate.set()
    assert len(await fetching) == 10
    assert images.most_running == FETCH_CONCURRENCY and images.asked == 10


async def test_a_gemini_request_with_too_many_images_is_refused(gateway, images: Images, aiohttp_server,
                                                                monkeypatch) -> None:
    fake = FakeGemini()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")  # the image server is local
    token = await make_key(await rich_user())

    def ask(count: int, size: int = 100):
        parts = [{"type": "image_url", "image_url": {"url": images.url(n, size)}} for n in range(count)]
        return gateway.post("/v1/chat/completions", headers=headers_for(token), json={
            "model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": "What?"}, *parts]}]})

    resp = await ask(MAX_IMAGES + 1)
    assert resp.status == 400
    error = (await resp.json())["error"]
    assert error["code"] == "invalid_image_url" and f"at most {MAX_IMAGES} images" in error["message"]
    assert images.asked == 0 and not fake.seen
    monkeypatch.setattr(media, "MAX_MEDIA_BYTES", 1000)  # the default of fetch_images is read when called
    resp = await ask(3, size=400)
    assert resp.status == 400 and "together" in (await resp.json())["error"]["message"]
    assert not fake.seen
    resp = await ask(2)
    assert resp.status == 200, await resp.text()
    parts = fake.seen[0]["body"]["contents"][0]["parts"]
    png = base64.b64encode(b"\x89PNG" + b"\0" * 100).decode()
    assert [part["inlineData"] for part in parts[1:]] == [{"mimeType": "image/png", "data": png}] * 2
