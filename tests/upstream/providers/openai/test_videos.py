"""/v1/videos through the openai SDK on an OpenAI-format upstream: create (a form with an image) →
the workers' poll → retrieve, list → download_content, billed per second to the unit; the gateway's
own ids; another user's video is 404; bad input is a 400 that changes nothing; the per-video
price option; a redirect to a signed URL only when the operator chooses it."""
from __future__ import annotations

import base64

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
from tests.upstream.providers.fake_videos import MP4, OPENAI_KEY, FakeOpenAIVideos
from tests.upstream.providers.kit import sdk

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
MODEL = "sora-compatible-1"
PER_SECOND = 0.05  # USD, set by the tests
QUOTA = 1_000_000


@pytest.fixture
async def upstream(serve) -> FakeOpenAIVideos:
    return await serve(FakeOpenAIVideos())


async def priced(gateway, **extra: str) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelPrice", orjson.dumps({**(options.get_json("ModelPrice") or {}),
                                                     MODEL: PER_SECOND}).decode())
    for name, value in extra.items():
        await options.update(name, value)


async def setup(gateway, upstream: FakeOpenAIVideos):
    await priced(gateway)
    channel = await add_channel(gateway, upstream, models=MODEL, type=int(ChannelType.OPENAI), key=OPENAI_KEY)
    user = await rich_user("vid", quota=QUOTA)
    return channel, user, await make_key(user, remain_quota=300_000, unlimited=False)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


async def test_create_poll_retrieve_download_billed_per_second(gateway, upstream) -> None:
    channel, user, key = await setup(gateway, upstream)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a fox in the snow", model=MODEL, seconds="8", size="1280x720",
                                           input_reference=("fox.png", PNG, "image/png"))
        cost = pricing.per_call_quota(PER_SECOND * 8)
        assert cost == 200_000
        assert (video.object, video.status, video.model, video.seconds, video.size) == (
            "video", "queued", MODEL, "8", "1280x720")
        assert video.id.startswith("video_") and video.id not in upstream.videos  # the gateway's own id
        [sent] = upstream.seen
        assert (sent["prompt"], sent["model"], sent["seconds"], sent["size"]) == ("a fox in the snow", MODEL, "8",
                                                                                   "1280x720")
        assert sent["image"] == ("image/png", PNG)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        assert await live_balance(gateway, user.id, key.id) == 300_000 - cost
        row = await Task.get(task_id=video.id)
        assert (row.platform, row.status, row.quota, row.channel_id) == ("video", "SUBMITTED", cost, channel.id)
        [upstream_id] = upstream.videos
        upstream.videos[upstream_id].update(status="in_progress", progress=40)
        assert (await poll_all(gateway)).claimed == 1
        again = await client.videos.retrieve(video.id)
        assert (again.status, again.progress) == ("in_progress", 40)
        with pytest.raises(openai.BadRequestError):  # not ready yet
            await client.videos.download_content(video.id)
        upstream.finish(upstream_id)
        result = await poll_all(gateway)
        assert (result.updated, result.refunded) == (1, [])
        done = await client.videos.poll(video.id, poll_interval_ms=1)
        assert (done.status, done.progress, done.expires_at) == ("completed", 100, 1_790_086_400)
        content = await client.videos.download_content(video.id)
        assert content.content == MP4
        thumb = await client.videos.download_content(video.id, variant="thumbnail")
        assert thumb.content.startswith(b"\x89PNG")
        page = await client.videos.list(limit=10)
        assert [v.id for v in page.data] == [video.id]
        await drain(gateway)
        [log] = await Log.filter(user_id=user.id, type=LogType.CONSUME)
        assert (log.quota, log.model_name) == (cost, MODEL)
        assert orjson.loads(log.other)["model_price"] == pytest.approx(PER_SECOND * 8)  # the video's price
        assert await live_balance(gateway, user.id) == QUOTA - cost


async def test_another_users_video_is_404_and_bad_input_changes_nothing(gateway, upstream) -> None:
    _, user, key = await setup(gateway, upstream)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a fox", model=MODEL)  # 4 seconds, 720x1280: OpenAI's defaults
        assert (video.seconds, video.size) == ("4", "720x1280")
        other = await rich_user("other", quota=QUOTA)
        other_key = await make_key(other, remain_quota=300_000, unlimited=False)
        async with sdk(gateway, other_key) as stranger:
            for call in (stranger.videos.retrieve(video.id), stranger.videos.download_content(video.id),
                         stranger.videos.retrieve("video_nope")):
                with pytest.raises(openai.NotFoundError):
                    await call
            assert (await stranger.videos.list()).data == []
        rows, seen = await Task.all().count(), len(upstream.seen)
        before = await live_balance(gateway, user.id)
        bad = [dict(prompt=""), dict(prompt="x", seconds="0"), dict(prompt="x", size="huge"),
               dict(prompt="x", input_reference=("a.gif", b"GIF89a", "image/gif")),
               dict(prompt="x", extra_body={"colour": "red"})]
        for request in bad:
            with pytest.raises(openai.BadRequestError) as refused:
                await client.videos.create(model=MODEL, **request)
            assert refused.value.status_code == 400
        resp = await gateway.post("/v1/videos", data=b"{not json", headers={"Authorization": f"Bearer sk-{key.key}",
                                                                               "Content-Type": "application/json"})
        assert resp.status == 400 and (await resp.json())["error"]["type"] == "invalid_request_error"
        for no_model in (dict(prompt="x"), dict(prompt="x", model="")):  # OpenAI's default went with Sora
            resp = await gateway.post("/v1/videos", json=no_model, headers={"Authorization": f"Bearer sk-{key.key}"})
            assert resp.status == 400 and (await resp.json())["error"]["param"] == "model"
        assert (await Task.all().count(), len(upstream.seen)) == (rows, seen)
        assert await live_balance(gateway, user.id) == before
        resp = await gateway.get("/v1/videos/whatever")
        assert resp.status == 401


async def test_per_video_price_and_the_upstream_refusal_refunded(gateway, upstream) -> None:
    _, user, key = await setup(gateway, upstream)
    await priced(gateway, VideoPerVideoModels=f"other-model, {MODEL}")
    async with sdk(gateway, key) as client:
        await client.videos.create(prompt="a fox", model=MODEL, seconds="12")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND)
        with pytest.raises(openai.BadRequestError) as refused:  # the upstream refuses 16 seconds: nothing is kept
            await client.videos.create(prompt="a fox", model=MODEL, seconds="16")
        assert "seconds" in refused.value.message
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND)
        assert await Task.all().count() == 1
    # JSON with a data URL as the reference image: the upstream gets it as the form's file part.
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    resp = await gateway.post("/v1/videos", json={"prompt": "a fox", "model": MODEL, "seconds": 4,
                                                  "input_reference": {"image_url": data_url}},
                              headers={"Authorization": f"Bearer sk-{key.key}"})
    assert resp.status == 200 and (await resp.json())["seconds"] == "4"
    assert upstream.seen[-1]["image"] == ("image/png", PNG)
    resp = await gateway.post("/v1/videos", json={"prompt": "a fox", "model": MODEL,
                                                  "input_reference": {"image_url": "https://example.com/a.png"}},
                              headers={"Authorization": f"Bearer sk-{key.key}"})
    assert resp.status == 400 and (await resp.json())["error"]["param"] == "input_reference"


async def test_a_failed_video_is_refunded_and_shows_its_error(gateway, upstream) -> None:
    _, user, key = await setup(gateway, upstream)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a fox", model=MODEL, seconds="4")
        [upstream_id] = upstream.videos
        upstream.fail(upstream_id)
        result = await poll_all(gateway)
        assert len(result.refunded) == 1
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.message == "the video was blocked by moderation"
        assert await live_balance(gateway, user.id) == QUOTA
        assert await live_balance(gateway, user.id, key.id) == 300_000
        await drain(gateway)
        [refund] = await Log.filter(user_id=user.id, type=LogType.SYSTEM)
        assert refund.quota == pricing.per_call_quota(PER_SECOND * 4)


async def test_the_console_plays_the_users_own_video_and_hides_the_upstream(gateway, upstream) -> None:
    from aiohttp.test_utils import TestClient

    from tests.helpers import ApiClient

    _, user, key = await setup(gateway, upstream)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a fox", model=MODEL)
    [upstream_id] = upstream.videos
    upstream.finish(upstream_id)
    await poll_all(gateway)
    other = await rich_user("watcher", quota=QUOTA)
    browsers = [TestClient(gateway.server), TestClient(gateway.server)]
    try:
        mine, theirs = ApiClient(browsers[0]), ApiClient(browsers[1])
        await mine.login(user.username, "password123")
        await theirs.login(other.username, "password123")
        resp = await browsers[0].get(f"/api/task/video/{video.id}/content", headers={"New-Api-User": str(user.id)})
        assert resp.status == 200 and await resp.read() == MP4
        resp = await browsers[1].get(f"/api/task/video/{video.id}/content", headers={"New-Api-User": str(other.id)})
        assert resp.status == 404
        resp = await browsers[0].get(f"/api/task/video/{video.id}/content")  # no user header: refused
        assert resp.status in (200, 401) and await resp.read() != MP4
        listed = await mine.get("/api/task/self?p=0&start_timestamp=0")
        [row] = listed["data"]["items"]
        assert row["task_id"] == video.id and upstream_id not in orjson.dumps(row).decode()
    finally:
        for browser in browsers:
            await browser.session.close()


async def test_delete_a_finished_video(gateway, upstream) -> None:
    """videos.delete: refused while the video is being made (nothing changes); once completed, deleted here
    and upstream, then unknown to its owner's API (retrieve, list, content, delete again: 404) while its task
    row and its charge stay; a failed video (refunded) is deleted too, its refund untouched."""
    _, user, key = await setup(gateway, upstream)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a fox in the snow", model=MODEL, seconds="8")
        [upstream_id] = upstream.videos
        with pytest.raises(openai.BadRequestError, match="still being generated"):
            await client.videos.delete(video.id)
        assert (await client.videos.retrieve(video.id)).status == "queued" and upstream.deleted == []
        upstream.finish(upstream_id)
        await poll_all(gateway)
        gone = await client.videos.delete(video.id)
        assert (gone.id, gone.object, gone.deleted) == (video.id, "video.deleted", True)
        assert upstream.deleted == [upstream_id]
        for call in (client.videos.retrieve, client.videos.download_content, client.videos.delete):
            with pytest.raises(openai.NotFoundError):
                await call(video.id)
        assert (await client.videos.list()).data == []
        failed = await client.videos.create(prompt="a fox", model=MODEL, seconds="4")
        [failed_upstream] = [v for v in upstream.videos if v != upstream_id]
        upstream.fail(failed_upstream)
        assert len((await poll_all(gateway)).refunded) == 1
        assert (await client.videos.delete(failed.id)).deleted
    cost = pricing.per_call_quota(PER_SECOND * 8)
    row = await Task.get(task_id=video.id)
    assert (row.status, row.quota, row.deleted_at > 0) == ("SUCCESS", cost, True)
    assert await live_balance(gateway, user.id) == QUOTA - cost
    assert await live_balance(gateway, user.id, key.id) == 300_000 - cost
