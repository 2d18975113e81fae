# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Redirect mode (VideoContentMode = redirect) hands a client only URLs the media policy allows: http or
https, to public addresses (private ones too with MediaFetchPrivateEnabled). A Location an OpenAI-format
upstream names, or a signed result URL (Seedance's), that points at loopback, link-local (cloud
metadata), a private network or another scheme is answered 502, never handed out nor fetched."""
from __future__ import annotations

import orjson
import pytest
from aiohttp import web

from api import keys
from models import Task
from tests.relay.fakes import gateway  # noqa: F401
from tests.upstream.providers.fake_videos import MP4, FakeOpenAIVideos
from tests.upstream.providers.kit import sdk
from tests.upstream.providers.openai.test_videos import poll_all, setup
from tests.upstream.providers.seedance.test_videos_seedance import PRO, ark, channel, customer  # noqa: F401
from tests.upstream.providers.seedance.test_videos_seedance import poll_all as poll_seedance

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
REFUSED = ["http://169.254.169.254/latest/meta-data/iam/security-credentials/", "http://10.1.2.3/v.mp4",
           "http://192.168.0.9:8080/v.mp4", "http://[::1]:9/v.mp4", "http://127.0.0.1:9/v.mp4",
           "file:///etc/passwd", "ftp://cdn.example.com/v.mp4", "javascript:alert(1)", "http://cdn.example.com:99999/",
           # Loopback spelled otherwise: a decimal, octal or hexadecimal IPv4, IPv4-mapped IPv6, the unspecified
           # address, a user name before the host, a DNS name, no host at all.
           "http://2130706433/v.mp4", "http://0177.0.0.1/v.mp4", "http://0x7f.1/v.mp4", "http://[::ffff:127.0.0.1]/",
           "http://[::]/v.mp4", "http://cdn.example.com@127.0.0.1/v.mp4", "http://localhost:9/v.mp4",
           "http:///127.0.0.1/v.mp4", "//127.0.0.1/v.mp4"]


class RedirectingVideos(FakeOpenAIVideos):
    """Answers a finished video's content with a redirect to `location`."""

    location: str = ""
    contents: int = 0

    async def content(self, request: web.Request) -> web.Response:
        self.contents += 1
        if request.path.startswith("/v1/videos/") and self.location:  # as sent, unparsed
            return web.Response(status=302, headers={"Location": self.location})
        return await super().content(request)


@pytest.fixture
async def upstream(aiohttp_server) -> RedirectingVideos:
    fake = RedirectingVideos()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def finished_video(gateway, upstream, client) -> str:
    video = await client.videos.create(prompt="a fox", model="sora-compatible-1", seconds="4")
    [upstream_id] = upstream.videos
    upstream.finish(upstream_id)
    await poll_all(gateway)
    return video.id


async def test_an_upstreams_location(gateway, upstream) -> None:
    _, _, key = await setup(gateway, upstream)
    options = gateway.server.app[keys.OPTIONS]
    await options.update("VideoContentMode", "redirect")
    auth = {"Authorization": f"Bearer sk-{key.key}"}
    async with sdk(gateway, key) as client:
        video_id = await finished_video(gateway, upstream, client)
    for location in REFUSED:
        upstream.location = location
        resp = await gateway.get(f"/v1/videos/{video_id}/content", headers=auth, allow_redirects=False)
        body = await resp.read()
        assert resp.status == 502 and "Location" not in resp.headers, (location, body)
        assert orjson.loads(body)["error"]["code"] == "upstream_unreachable"
    assert upstream.contents == len(REFUSED)  # asked of the channel only; nothing else fetched
    # An operator who allows private addresses may have clients sent to the loopback fake, never to another scheme.
    await options.update("MediaFetchPrivateEnabled", "true")
    upstream.location = f"{upstream.url}/files/v.mp4"
    resp = await gateway.get(f"/v1/videos/{video_id}/content", headers=auth, allow_redirects=False)
    assert resp.status == 302 and resp.headers["Location"] == upstream.location
    # A backslash before `@`: a browser would go to the host before it, Python's urlsplit reads the one after
    # it, the Location's own parser refuses it. Refused (502), neither handed out nor a 500.
    for location in ("file:///etc/passwd", f"http://127.0.0.1\\@{upstream.url.split('//')[1]}/files/v.mp4"):
        upstream.location = location
        resp = await gateway.get(f"/v1/videos/{video_id}/content", headers=auth, allow_redirects=False)
        assert resp.status == 502 and "Location" not in resp.headers, location
    upstream.location = ""  # proxied again
    await options.update("VideoContentMode", "proxy")
    resp = await gateway.get(f"/v1/videos/{video_id}/content", headers=auth)
    assert resp.status == 200 and await resp.read() == MP4


async def test_a_signed_result_url(gateway, ark) -> None:
    await channel(gateway, ark)
    _, key = await customer()
    options = gateway.server.app[keys.OPTIONS]
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron", model=PRO, seconds="5", size="1920x1080")
        [task_id] = ark.tasks
        ark.finish(task_id)
        for _ in range(3):  # queued, running, done
            await poll_seedance(gateway)
        assert (await client.videos.retrieve(video.id)).status == "completed"
    await options.update("VideoContentMode", "redirect")
    row = await Task.get(task_id=video.id)
    data = orjson.loads(row.data)
    assert "/tos/" in data["url"]  # where the content is: the signed URL the result named
    auth = {"Authorization": f"Bearer sk-{key.key}"}
    for url in REFUSED:
        await Task.filter(id=row.id).update(data=orjson.dumps({**data, "url": url}).decode())
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers=auth, allow_redirects=False)
        assert resp.status == 502 and "Location" not in resp.headers, url
    assert ark.downloads == []

