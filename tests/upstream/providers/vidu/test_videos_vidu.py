"""/v1/videos converted for Vidu (channel type 52) through the openai SDK: text-to-video and
image-to-video (the image as a data URL), `Authorization: Token <key>`, the poller in-process, the
content fetched from Vidu's signed URL without the key (or handed out in redirect mode), billed per
second to the unit; what a model does not render refused before anything is kept; a failed video and a
video Vidu refuses refunded once or never charged; the key in no answer and no log."""
from __future__ import annotations

import base64
import logging

import openai
import orjson
import pytest

from api import keys
from api.relay.tasks.poll import VIDEO, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Log, Task
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import PNG
from tests.upstream.providers.kit import sdk
from tests.upstream.providers.vidu.fake_vidu import MP4, VIDU_KEY, FakeVidu

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
Q2, Q1, V2 = "viduq2", "viduq1", "vidu2.0"
PER_SECOND = 0.05  # USD, set by the tests
QUOTA = 10_000_000


@pytest.fixture
async def vidu(serve) -> FakeVidu:
    return await serve(FakeVidu())


async def vidu_channel(gateway, vidu: FakeVidu, models: str, secret: str = VIDU_KEY):
    options = gateway.server.app[keys.OPTIONS]
    prices = {name: PER_SECOND for name in models.split(",")}
    await options.update("ModelPrice", orjson.dumps({**(options.get_json("ModelPrice") or {}), **prices}).decode())
    return await add_channel(gateway, vidu, models=models, type=int(ChannelType.VIDU), key=secret)


async def setup(gateway, vidu: FakeVidu, models: str = f"{Q2},{Q1},{V2}", secret: str = VIDU_KEY):
    channel = await vidu_channel(gateway, vidu, models, secret)
    user = await rich_user("vidu", quota=QUOTA)
    return channel, user, await make_key(user)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


async def test_text_to_video_polled_downloaded_and_billed_per_second(gateway, vidu, caplog) -> None:
    caplog.set_level(logging.INFO)
    _, user, key = await setup(gateway, vidu)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a crane over the river", model=Q2, seconds="8", size="1920x1080")
        cost = pricing.per_call_quota(PER_SECOND * 8)
        assert cost == 200_000
        assert (video.status, video.model, video.seconds, video.size) == ("queued", Q2, "8", "1920x1080")
        [(kind, sent)] = vidu.seen
        assert kind == "text2video" and sent == {"model": Q2, "prompt": "a crane over the river", "duration": 8,
                                                 "resolution": "1080p", "aspect_ratio": "16:9"}
        assert vidu.auth_seen == [f"Token {VIDU_KEY}"]
        [task_id] = vidu.tasks
        assert task_id not in video.id
        assert await live_balance(gateway, user.id) == QUOTA - cost
        assert (await poll_all(gateway)).claimed == 1  # created → queueing: still queued
        assert (await client.videos.retrieve(video.id)).status == "queued"
        await poll_all(gateway)  # processing
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        with pytest.raises(openai.BadRequestError):  # not ready yet
            await client.videos.download_content(video.id)
        vidu.finish(task_id)
        assert (await poll_all(gateway)).refunded == []
        done = await client.videos.retrieve(video.id)
        assert done.status == "completed" and done.expires_at is not None and done.completed_at is not None
        assert done.expires_at - done.completed_at == 24 * 3600  # Vidu's links live 24 hours
        # The signed link is on loopback: followed only once private addresses are allowed (the media policy).
        auth = {"Authorization": f"Bearer sk-{key.key}"}
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers=auth)
        assert resp.status == 502 and vidu.downloads == 0
        options = gateway.server.app[keys.OPTIONS]
        await options.update("MediaFetchPrivateEnabled", "true")
        assert (await client.videos.download_content(video.id)).content == MP4
        assert vidu.downloads == 1 and vidu.polls == [task_id] * 3  # the key went to the API only
        with pytest.raises(openai.BadRequestError):  # Vidu's cover is not relayed as a thumbnail
            await client.videos.download_content(video.id, variant="thumbnail")
        await options.update("VideoContentMode", "redirect")
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers=auth, allow_redirects=False)
        assert resp.status == 302 and resp.headers["Location"].startswith(f"{vidu.url}/media/{task_id}.mp4")
        assert VIDU_KEY not in resp.headers["Location"]
        await drain(gateway)
        [log] = await Log.filter(user_id=user.id, type=LogType.CONSUME)
        assert (log.quota, log.model_name) == (cost, Q2)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        page = await client.videos.list()
        answers = orjson.dumps([v.model_dump() for v in page.data]).decode()
    records = "\n".join(r.getMessage() for r in caplog.records)
    assert VIDU_KEY not in answers and VIDU_KEY not in records


async def test_image_to_video_sends_the_image_as_a_data_url_and_an_expired_link_is_unavailable(gateway, vidu) -> None:
    _, user, key = await setup(gateway, vidu)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="the heron wakes", model=V2, seconds="8", size="1280x720",
                                           input_reference=("heron.png", PNG, "image/png"))
        [(kind, sent)] = vidu.seen
        assert kind == "img2video" and sent == {
            "model": V2, "prompt": "the heron wakes", "duration": 8, "resolution": "720p",
            "images": ["data:image/png;base64," + base64.b64encode(PNG).decode()]}
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND * 8)
        [task_id] = vidu.tasks
        vidu.finish(task_id)
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "completed"
        await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")
        assert (await client.videos.download_content(video.id)).content == MP4
        vidu.expired.add(task_id)  # a day later the link is dead: unavailable, not Vidu's error page
        with pytest.raises(openai.APIStatusError) as gone:
            await client.videos.download_content(video.id)
        assert gone.value.status_code == 502 and vidu.downloads == 1


async def test_what_a_model_cannot_render_is_refused_and_changes_nothing(gateway, vidu) -> None:
    _, user, key = await setup(gateway, vidu)
    async with sdk(gateway, key) as client:
        refused = [dict(model=Q1, seconds="4", size="1920x1080"),  # viduq1: 5 seconds only
                   dict(model=Q1, seconds="5", size="1280x720"),  # viduq1: 1080p only
                   dict(model=Q2, seconds="12", size="1280x720"),  # viduq2: 1 to 10 seconds
                   dict(model=Q2, seconds="4", size="1024x1792"),  # not a size Vidu renders
                   dict(model=Q1, seconds="5", size="960x720"),  # 4:3 is q2 and q3 only
                   dict(model=V2, seconds="8", size="1920x1080",  # vidu2.0 image-to-video: 8 s at 720p only
                        input_reference=("a.png", PNG, "image/png")),
                   dict(model=V2, seconds="4", size="1280x720",  # Vidu's base64 images decode to under 10 MB
                        input_reference=("big.png", PNG + bytes(10 * 1024 * 1024), "image/png"))]
        for request in refused:
            with pytest.raises(openai.BadRequestError) as bad:
                await client.videos.create(prompt="a crane", **request)
            assert bad.value.status_code == 400
        assert vidu.seen == [] and await Task.all().count() == 0
        assert await live_balance(gateway, user.id) == QUOTA
        # A model the gateway does not know goes as asked; Vidu's own refusal is a 400 with nothing kept.
        await vidu_channel(gateway, vidu, "vidu-unknown")
        with pytest.raises(openai.BadRequestError) as upstream_refused:
            await client.videos.create(prompt="a crane", model="vidu-unknown", seconds="5", size="1280x720")
        assert "ModelUnavailable" in upstream_refused.value.message
        assert VIDU_KEY not in upstream_refused.value.message
        assert await Task.all().count() == 0 and await live_balance(gateway, user.id) == QUOTA
        await drain(gateway)
        assert await Log.filter(user_id=user.id, type=LogType.CONSUME).count() == 0


async def test_a_failed_video_is_refunded_once(gateway, vidu) -> None:
    _, user, key = await setup(gateway, vidu)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a crane", model=Q1, seconds="5", size="1080x1920")
        assert vidu.seen[0][1]["aspect_ratio"] == "9:16"
        [task_id] = vidu.tasks
        vidu.fail(task_id, "CreationPolicyViolation")
        assert len((await poll_all(gateway)).refunded) == 1
        assert (await poll_all(gateway)).refunded == []  # a final task is not looked at again
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.message == "CreationPolicyViolation"
        assert await live_balance(gateway, user.id) == QUOTA
        await drain(gateway)
        [refund] = await Log.filter(user_id=user.id, type=LogType.SYSTEM)
        assert refund.quota == pricing.per_call_quota(PER_SECOND * 5)


async def test_a_wrong_key_is_never_shown(gateway, vidu) -> None:
    _, user, key = await setup(gateway, vidu, models=Q2, secret="vda_wrong_secret_key_0000")
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.APIStatusError) as refused:
            await client.videos.create(prompt="a crane", model=Q2, seconds="5", size="1280x720")
        assert "vda_wrong_secret_key_0000" not in str(refused.value.body)
    assert await Task.all().count() == 0 and await live_balance(gateway, user.id) == QUOTA


async def test_a_busy_account_hands_the_video_to_another_channel(gateway, vidu, aiohttp_server) -> None:
    other = FakeVidu()
    other.server = await aiohttp_server(other.app())
    vidu.busy = True
    _, user, key = await setup(gateway, vidu, models=Q2)
    await add_channel(gateway, other, models=Q2, type=int(ChannelType.VIDU), key=VIDU_KEY, priority=-1)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a crane", model=Q2, seconds="5", size="1280x720")
        assert len(vidu.seen) == 1 and vidu.tasks == {} and len(other.tasks) == 1
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND * 5)
        assert (await Task.get(task_id=video.id)).quota == pricing.per_call_quota(PER_SECOND * 5)
