"""/v1/videos converted for Volcengine Ark's Seedance (channel type 54): text- and image-to-video billed
per second at the default price, the signed result URL fetched without the key (or handed out in
redirect mode), sizes and durations Seedance has not refused before anything is kept, a model Ark does
not serve refused with nothing charged, a failed video refunded once, and the Ark key in no answer or log."""
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
from api.upstream.providers.seedance import SeedanceAdaptor
from models import Task
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.kit import (
    consume_logs,
    sdk,
)
from tests.upstream.providers.seedance.fake_seedance import ARK_KEY, MP4, FakeSeedance, png

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
PRO = "doubao-seedance-1-0-pro-250528"  # $0.10 a second by default
QUOTA = 10_000_000
FRAME = png(640, 480)


@pytest.fixture
async def ark(serve) -> FakeSeedance:
    return await serve(FakeSeedance())


async def customer():
    user = await rich_user("seedance", quota=QUOTA)
    return user, await make_key(user)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


async def channel(gateway, ark, models: str = PRO, mapping: str = "") -> None:
    await add_channel(gateway, ark, models=models, type=int(ChannelType.DOUBAO_VIDEO), key=ARK_KEY,
                      **({"model_mapping": mapping} if mapping else {}))


def test_a_base_url_given_with_api_v3_is_the_same_endpoint() -> None:
    for base in ("https://ark.ap-southeast.bytepluses.com", "https://ark.ap-southeast.bytepluses.com/api/v3/"):
        up = SeedanceAdaptor(base, ARK_KEY).fetch(["cgt-1"])
        assert up.url == "https://ark.ap-southeast.bytepluses.com/api/v3/contents/generations/tasks/cgt-1"
    assert SeedanceAdaptor("", ARK_KEY).fetch(["cgt-1"]).url.startswith("https://ark.cn-beijing.volces.com/api/v3/")


async def test_image_to_video_billed_per_second_and_downloaded_without_the_key(gateway, ark, caplog) -> None:
    caplog.set_level(logging.INFO)  # every logger (the database driver's DEBUG echoes the test's own inserts)
    caplog.set_level(logging.DEBUG, logger="api")
    await channel(gateway, ark)
    await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")  # the fake is on loopback
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron takes off", model=PRO, seconds="5", size="1920x1080",
                                           input_reference=("heron.png", FRAME, "image/png"))
        cost = pricing.per_call_quota(0.1 * 5)
        assert video.status == "queued" and await live_balance(gateway, user.id) == QUOTA - cost
        [sent] = ark.seen
        assert sent == {"model": PRO, "content": [
            {"type": "text", "text": "a heron takes off"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(FRAME).decode()},
             "role": "first_frame"}], "resolution": "1080p", "ratio": "16:9", "duration": 5}
        [task_id] = ark.tasks
        assert task_id not in video.id
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "queued"
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        ark.finish(task_id)
        await poll_all(gateway)
        done = await client.videos.retrieve(video.id)
        assert (done.status, done.seconds, done.size) == ("completed", "5", "1920x1080")
        assert done.completed_at == 1_795_000_000 and done.expires_at == 1_795_000_000 + 86_400
        assert (await client.videos.download_content(video.id)).content == MP4
        assert [h for h in ark.downloads if "Authorization" in h] == [] and len(ark.downloads) == 1
        with pytest.raises(openai.BadRequestError):  # Seedance makes no thumbnails
            await client.videos.download_content(video.id, variant="thumbnail")
        # Redirect mode: the client is sent to the signed URL itself, which carries no key.
        await gateway.server.app[keys.OPTIONS].update("VideoContentMode", "redirect")
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers={"Authorization": f"Bearer sk-{key.key}"},
                                 allow_redirects=False)
        assert resp.status == 302 and "/tos/" in resp.headers["Location"] and ARK_KEY not in resp.headers["Location"]
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        [log] = await consume_logs(user)
        assert log.quota == cost and log.model_name == PRO
    assert ARK_KEY not in caplog.text


async def test_text_to_video_and_the_media_policy_guards_the_download(gateway, ark) -> None:
    await channel(gateway, ark, models="doubao-seedance-1-0-lite-t2v-250428")
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a quiet lake", model="doubao-seedance-1-0-lite-t2v-250428",
                                           seconds="10", size="720x1280")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(0.07 * 10)
        assert ark.seen[0]["content"] == [{"type": "text", "text": "a quiet lake"}]
        assert (ark.seen[0]["resolution"], ark.seen[0]["ratio"], ark.seen[0]["duration"]) == ("720p", "9:16", 10)
        [task_id] = ark.tasks
        ark.finish(task_id)
        await poll_all(gateway)
        # The signed URL is on a private address (the fake's loopback): not fetched without MediaFetchPrivateEnabled.
        with pytest.raises(openai.APIStatusError) as unavailable:
            await client.videos.download_content(video.id)
        assert unavailable.value.status_code == 502 and ark.downloads == []


async def test_what_seedance_cannot_render_or_ark_does_not_serve_changes_nothing(gateway, ark) -> None:
    await channel(gateway, ark, mapping=f'{{"{PRO}": "doubao-seedance-9"}}')  # a model Ark does not serve
    await channel(gateway, ark, models="doubao-seedance-1-5-pro-251215")
    await channel(gateway, ark, models="doubao-seedance-2-0-260128")
    options = gateway.server.app[keys.OPTIONS]  # the operator prices the models without a default
    await options.update("ModelPrice", orjson.dumps({**(options.get_json("ModelPrice") or {}),
                                                     "doubao-seedance-1-5-pro-251215": 0.05,
                                                     "doubao-seedance-2-0-260128": 0.3}).decode())
    user, key = await customer()
    async with sdk(gateway, key) as client:
        for model, request, param in ((PRO, dict(seconds="2"), "seconds"), (PRO, dict(seconds="13"), "seconds"),
                                      (PRO, dict(size="1024x1792"), "size"),
                                      ("doubao-seedance-1-5-pro-251215", dict(seconds="3"), "seconds"),
                                      ("doubao-seedance-2-0-260128", dict(seconds="16"), "seconds")):
            with pytest.raises(openai.BadRequestError) as refused:
                await client.videos.create(prompt="a heron", model=model, **request)
            assert param in refused.value.message
        assert ark.seen == [] and await Task.all().count() == 0
        with pytest.raises(openai.APIStatusError) as unknown:  # Ark's 404 for a model it does not serve
            await client.videos.create(prompt="a heron", model=PRO, seconds="5", size="1280x720")
        assert unknown.value.status_code == 400 and "doubao-seedance-9 does not exist" in unknown.value.message
        assert ARK_KEY not in str(unknown.value.body)
        assert [s["model"] for s in ark.seen] == ["doubao-seedance-9"]
        assert await Task.all().count() == 0 and ark.tasks == {}
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA and await consume_logs(user) == []


async def test_a_failed_video_is_refunded_once_and_its_reason_never_shows_the_key(gateway, ark, caplog) -> None:
    caplog.set_level(logging.INFO)  # every logger (the database driver's DEBUG echoes the test's own inserts)
    caplog.set_level(logging.DEBUG, logger="api")
    await channel(gateway, ark)
    user, key = await customer()
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron", model=PRO, seconds="3", size="1280x720")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(0.1 * 3)
        [task_id] = ark.tasks
        ark.fail(task_id, f"The output video may contain sensitive information (key {ARK_KEY}).")
        assert len((await poll_all(gateway)).refunded) == 1
        assert len((await poll_all(gateway)).refunded) == 0  # a final task is not polled nor refunded again
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert "sensitive information" in failed.error.message and ARK_KEY not in failed.error.message
        with pytest.raises(openai.BadRequestError):  # nothing to download
            await client.videos.download_content(video.id)
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA
    assert ARK_KEY not in caplog.text
