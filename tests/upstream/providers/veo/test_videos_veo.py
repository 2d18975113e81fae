"""/v1/videos converted for Veo: on the Gemini API (the key only ever sent to the channel's origin, the
content always proxied) and on Vertex AI with a service-account key and with an express API key (the
video inline in the operation); billed per second at the default Veo prices; sizes and durations Veo
has not are refused before anything is kept; a video the safety filters took is refunded."""
from __future__ import annotations

import base64

import openai
import pytest

from api import keys
from api.relay.tasks.poll import VIDEO, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Task
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import PNG
from tests.upstream.providers.fake_videos import GEMINI_KEY, MP4, FakeVeoGemini, FakeVeoVertex
from tests.upstream.providers.kit import sdk
from tests.upstream.providers.vertex.fake_vertex import API_KEY as VERTEX_API_KEY
from tests.upstream.providers.vertex.fake_vertex import PROJECT

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
VEO = "veo-3.1-generate-preview"  # $0.40 a second by default
FAST = "veo-3.0-fast-generate-001"  # $0.15 a second
QUOTA = 10_000_000


@pytest.fixture
async def gemini(serve) -> FakeVeoGemini:
    return await serve(FakeVeoGemini())


@pytest.fixture
async def vertex(serve) -> FakeVeoVertex:
    return await serve(FakeVeoVertex())


async def customer():
    user = await rich_user("veo", quota=QUOTA)
    return user, await make_key(user)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


async def test_veo_on_the_gemini_api(gateway, gemini) -> None:
    await add_channel(gateway, gemini, models=VEO, type=int(ChannelType.GEMINI), key=GEMINI_KEY)
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron takes off", model=VEO, seconds="8", size="720x1280",
                                           input_reference=("heron.png", PNG, "image/png"))
        cost = pricing.per_call_quota(0.4 * 8)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        [sent] = gemini.seen
        assert sent == {"model": VEO, "instances": [{"prompt": "a heron takes off", "image": {
            "bytesBase64Encoded": base64.b64encode(PNG).decode(), "mimeType": "image/png"}}],
            "parameters": {"aspectRatio": "9:16", "resolution": "720p", "durationSeconds": 8}}
        [name] = gemini.operations
        assert name not in video.id
        assert (await poll_all(gateway)).claimed == 1
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        gemini.finish(name)
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "completed"
        content = await client.videos.download_content(video.id)
        assert content.content == MP4 and len(gemini.downloads) == 1
        with pytest.raises(openai.BadRequestError):  # Veo makes no thumbnails
            await client.videos.download_content(video.id, variant="thumbnail")
        # A result URI off the channel's origin is never asked with the key.
        row = await Task.get(task_id=video.id)
        row.data = '{"kind": "veo", "uri": "https://elsewhere.example/v1beta/files/x:download?alt=media"}'
        await row.save()
        with pytest.raises(openai.APIStatusError) as unavailable:
            await client.videos.download_content(video.id)
        assert unavailable.value.status_code == 502 and len(gemini.downloads) == 1
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA - cost


async def test_veo_refuses_what_it_cannot_render_and_a_failure_is_refunded(gateway, gemini) -> None:
    await add_channel(gateway, gemini, models=FAST, type=int(ChannelType.GEMINI), key=GEMINI_KEY)
    user, key = await customer()
    async with sdk(gateway, key) as client:
        for request in (dict(seconds="12"), dict(size="1024x1792")):
            with pytest.raises(openai.BadRequestError):
                await client.videos.create(prompt="a heron", model=FAST, **request)
        assert gemini.seen == [] and await Task.all().count() == 0
        assert await live_balance(gateway, user.id) == QUOTA
        video = await client.videos.create(prompt="a heron", model=FAST, seconds="4", size="1280x720")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(0.15 * 4)
        [name] = gemini.operations
        gemini.fail(name, "Veo could not generate a video for this prompt")
        assert len((await poll_all(gateway)).refunded) == 1
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.message == "Veo could not generate a video for this prompt"
        assert await live_balance(gateway, user.id) == QUOTA


@pytest.mark.parametrize("credential", ["service_account", "express"])
async def test_veo_on_vertex(gateway, vertex, credential) -> None:
    key_text = vertex.service_account() if credential == "service_account" else VERTEX_API_KEY
    await add_channel(gateway, None, models=VEO, type=int(ChannelType.VERTEX_AI), key=key_text, base_url=vertex.url,
                      other='{"default": "europe-west4"}')
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron lands", model=VEO, seconds="6", size="1920x1080")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(0.4 * 6)
        [sent] = vertex.veo_seen
        assert sent == {"model": VEO, "instances": [{"prompt": "a heron lands"}], "parameters": {
            "aspectRatio": "16:9", "resolution": "1080p", "durationSeconds": 6, "sampleCount": 1}}
        [name] = vertex.operations
        if credential == "service_account":
            assert name.startswith(f"projects/{PROJECT}/locations/europe-west4/publishers/google/models/{VEO}/")
            assert vertex.tokens  # exchanged for an access token; the key itself never sent
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        vertex.finish(name)
        await poll_all(gateway)
        done = await client.videos.retrieve(video.id)
        assert (done.status, done.seconds, done.size) == ("completed", "6", "1920x1080")
        assert (await client.videos.download_content(video.id)).content == MP4
        assert vertex.polls == [name, name, name]  # two polls, then the content: the operation again


async def test_veo_on_vertex_filtered_is_refunded(gateway, vertex) -> None:
    await add_channel(gateway, None, models=VEO, type=int(ChannelType.VERTEX_AI), key=VERTEX_API_KEY,
                      base_url=vertex.url)
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="something the filters take", model=VEO, seconds="4",
                                           size="1280x720")
        [name] = vertex.operations
        vertex.filtered(name)
        assert len((await poll_all(gateway)).refunded) == 1
        failed = await client.videos.retrieve(video.id)
        assert failed.error is not None and "safety filters" in failed.error.message
        assert await live_balance(gateway, user.id) == QUOTA


async def test_a_redirected_download_is_followed_or_handed_out_as_the_operator_chooses(gateway, gemini) -> None:
    await add_channel(gateway, gemini, models=FAST, type=int(ChannelType.GEMINI), key=GEMINI_KEY)
    gemini.redirect_downloads = True
    options = gateway.server.app[keys.OPTIONS]
    _, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron", model=FAST, seconds="4", size="1280x720")
        [name] = gemini.operations
        gemini.finish(name)
        await poll_all(gateway)
        auth = {"Authorization": f"Bearer sk-{key.key}"}
        # Proxied: the signed URL is followed without the key, to public addresses only (the fake is on loopback).
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers=auth)
        assert resp.status == 502 and gemini.signed_hits == 0
        await options.update("MediaFetchPrivateEnabled", "true")
        assert (await client.videos.download_content(video.id)).content == MP4
        assert gemini.signed_hits == 1
        # Redirect: the client is sent to the signed URL, which carries no key.
        await options.update("VideoContentMode", "redirect")
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers=auth, allow_redirects=False)
        assert resp.status == 302 and "/signed/" in resp.headers["Location"]
        assert GEMINI_KEY not in resp.headers["Location"]
        assert (await client.videos.download_content(video.id)).content == MP4  # the SDK follows it
        assert gemini.signed_hits == 2


@pytest.mark.parametrize("mime", ["video/mp4\r\nSet-Cookie: a=b", "video/mp4; charset=binary", "video/m\x00p4\u00e9"])
async def test_vertex_inline_video_whatever_its_mime_type(gateway, vertex, mime) -> None:
    """The inline video's mimeType is the upstream's text: a CR/LF, a NUL or a charset in it no longer loses
    the paid video to a 500; it is sent percent-encoded where it is not printable ASCII."""
    await add_channel(gateway, None, models=VEO, type=int(ChannelType.VERTEX_AI), key=VERTEX_API_KEY,
                      base_url=vertex.url, other='{"default": "europe-west4"}')
    _, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron lands", model=VEO, seconds="6", size="1920x1080")
        [name] = vertex.operations
        vertex.finish(name)
        vertex.operations[name]["response"]["videos"][0]["mimeType"] = mime
        await poll_all(gateway)
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers={"Authorization": f"Bearer sk-{key.key}"})
        assert resp.status == 200 and await resp.read() == MP4
        assert resp.headers["Content-Type"].startswith("video/m") and "\n" not in resp.headers["Content-Type"]
        assert "Set-Cookie" not in resp.headers
