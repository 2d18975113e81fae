"""GET /mj/image/{id} (no key): the image is fetched upstream once and then served from the cache;
the route is rate-limited per client address (429 in Midjourney's shape); a private address is
fetched only when it is the task's own channel, host AND port."""
from __future__ import annotations

from dataclasses import replace

from aiohttp import web

from api import keys
from api.app import create_app
from api.relay.tasks.mj_media import is_channel_address
from api.upstream.catalogue import ChannelType
from models import Midjourney
from tests.relay.fakes import add_channel, make_key, rich_user
from tests.upstream.providers.fake_tasks import MJ_SECRET, PNG, FakeMidjourney


async def drawn(client, proxy: FakeMidjourney, image_path: str = "/images/a.png") -> str:
    """A finished task of a new user on the proxy's channel; its id."""
    await add_channel(client, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY), base_url=proxy.url,
                      key=MJ_SECRET)
    user = await rich_user("alice", quota=1_000_000)
    key = await make_key(user)
    resp = await client.post("/mj/submit/imagine", json={"prompt": "a fox"}, headers={"mj-api-secret": f"sk-{key.key}"})
    task_id = (await resp.json())["result"]
    await Midjourney.filter(mj_id=task_id).update(status="SUCCESS", progress="100%", image_url=proxy.url + image_path)
    return task_id


async def test_the_image_is_fetched_once(gateway, proxy) -> None:
    task_id = await drawn(gateway, proxy)
    for _ in range(3):
        resp = await gateway.get(f"/mj/image/{task_id}")
        assert resp.status == 200 and resp.content_type == "image/png" and await resp.read() == PNG
        assert resp.headers["Cache-Control"] == "public, max-age=86400"
    assert proxy.image_hits == 1
    # Another image URL for the task (a new upscale of the row) is fetched anew.
    await Midjourney.filter(mj_id=task_id).update(image_url=f"{proxy.url}/images/b.png")
    assert (await gateway.get(f"/mj/image/{task_id}")).status == 200
    assert proxy.image_hits == 2


async def test_the_image_route_is_rate_limited_per_address(aiohttp_client, settings, proxy) -> None:
    client = await aiohttp_client(create_app(replace(settings, rate_limit_api=3, streaming_timeout=1.0)))
    task_id = await drawn(client, proxy)
    statuses = [(await client.get(f"/mj/image/{task_id}")).status for _ in range(3)]
    assert statuses == [200, 200, 200]
    resp = await client.get(f"/mj/image/{task_id}")
    body = await resp.json()
    assert resp.status == 429 and body["code"] == 4 and body["description"], body
    assert (await client.get("/mj/image/unknown-id")).status == 429  # guessing ids counts too
    await client.server.app[keys.LIMITER].reset("mj-image", "127.0.0.1")
    assert (await client.get(f"/mj/image/{task_id}")).status == 200


async def test_a_private_address_is_allowed_only_on_the_channel_port(gateway, proxy, aiohttp_server) -> None:
    other = web.Application()  # another service on the proxy's host (a Redis admin, a metadata page…)

    async def secret(request: web.Request) -> web.Response:
        return web.Response(body=PNG, content_type="image/png")

    other.router.add_get("/secret.png", secret)
    server = await aiohttp_server(other)
    task_id = await drawn(gateway, proxy)
    await Midjourney.filter(mj_id=task_id).update(image_url=f"http://127.0.0.1:{server.port}/secret.png")
    resp = await gateway.get(f"/mj/image/{task_id}")
    assert resp.status == 400 and "non-public address" in (await resp.json())["description"]
    await Midjourney.filter(mj_id=task_id).update(image_url=f"{proxy.url}/images/c.png")
    assert (await gateway.get(f"/mj/image/{task_id}")).status == 200
    # The proxy's own address redirecting to another private port is judged again at that hop.
    proxy.image_redirect = f"http://127.0.0.1:{server.port}/secret.png"
    await Midjourney.filter(mj_id=task_id).update(image_url=f"{proxy.url}/images/d.png")
    resp = await gateway.get(f"/mj/image/{task_id}")
    assert resp.status == 400 and "non-public address" in (await resp.json())["description"]


def test_channel_address_is_host_and_port() -> None:
    assert is_channel_address("http://proxy:8080", "http://proxy:8080/a.png")
    assert is_channel_address("proxy:8080", "https://PROXY:8080/a.png")  # a base URL without scheme
    assert is_channel_address("http://proxy", "http://proxy:80/a.png")
    assert not is_channel_address("http://proxy:8080", "http://proxy:6379/a.png")
    assert not is_channel_address("http://proxy", "https://proxy/a.png")  # 80 is not 443
    assert not is_channel_address("http://proxy:8080", "http://proxy2:8080/a.png")
    assert not is_channel_address("http://proxy:99999", "http://proxy:99999/a.png")  # no such port
    assert not is_channel_address("", "http://proxy/a.png")
