"""/v1/videos converted for Kling (channel type 50): a JWT signed with the channel's secret key (never the
key itself, and never the token in an answer or a log), text2video and image2video with their own polls,
the video fetched from the CDN without a credential; billed per second to the unit; what Kling cannot
render refused before anything is kept; a failed video refunded once."""
from __future__ import annotations

import base64
import logging

import openai
import orjson
import pytest

from api import keys
from api.relay.state import RELAY
from api.relay.tasks.poll import VIDEO, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Channel, Task
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import PNG
from tests.upstream.providers.fake_videos import MP4
from tests.upstream.providers.kit import consume_logs, sdk
from tests.upstream.providers.kling.fake_kling import ACCESS_KEY, KEY, SECRET_KEY, FakeKling

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
MODEL = "kling-v2-6"
PER_SECOND = 0.07
QUOTA = 10_000_000


@pytest.fixture
async def kling(serve) -> FakeKling:
    return await serve(FakeKling())


async def setup(gateway, kling: FakeKling):
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelPrice", orjson.dumps({**(options.get_json("ModelPrice") or {}),
                                                     MODEL: PER_SECOND}).decode())
    await options.update("MediaFetchPrivateEnabled", "true")  # the fake CDN listens on loopback
    await add_channel(gateway, kling, models=MODEL, type=int(ChannelType.KLING), key=KEY)
    user = await rich_user("kling", quota=QUOTA)
    return user, await make_key(user)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


def no_secret(text: str) -> None:
    assert SECRET_KEY not in text and ACCESS_KEY not in text and "eyJ" not in text, text


async def test_text_and_image_to_video_billed_polled_and_downloaded(gateway, kling, caplog) -> None:
    caplog.set_level(logging.INFO)
    user, key = await setup(gateway, kling)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron takes off", model=MODEL, seconds="10", size="1920x1080")
        cost = pricing.per_call_quota(PER_SECOND * 10)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        no_secret(video.model_dump_json())
        still = await client.videos.create(prompt="the heron lands", model=MODEL, seconds="5", size="720x1280",
                                           input_reference=("heron.png", PNG, "image/png"))
        both = cost + pricing.per_call_quota(PER_SECOND * 5)
        assert await live_balance(gateway, user.id) == QUOTA - both
        text_sent, image_sent = kling.seen
        assert text_sent == {"endpoint": "text2video", "model_name": MODEL, "prompt": "a heron takes off",
                             "mode": "pro", "duration": "10", "aspect_ratio": "16:9"}
        assert image_sent == {"endpoint": "image2video", "model_name": MODEL, "prompt": "the heron lands",
                              "mode": "std", "duration": "5", "image": base64.b64encode(PNG).decode()}
        first, second = kling.tasks
        assert first not in video.id and second not in still.id
        assert all(t.startswith("Bearer eyJ") for t in kling.tokens)  # a signed JWT, never the key pair
        assert (await poll_all(gateway)).claimed == 2
        assert sorted(kling.polls) == sorted([f"text2video/{first}", f"image2video/{second}"])
        assert (await client.videos.retrieve(video.id)).status == "queued"
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        kling.finish(first)
        kling.finish(second)
        await poll_all(gateway)
        done = await client.videos.retrieve(video.id)
        assert (done.status, done.seconds, done.size) == ("completed", "10", "1920x1080")
        assert done.expires_at is not None and done.expires_at - (done.completed_at or 0) == 30 * 86400
        assert (await client.videos.download_content(video.id)).content == MP4
        assert (await client.videos.download_content(still.id)).content == MP4
        assert kling.downloads == 2
        with pytest.raises(openai.BadRequestError):  # Kling makes no thumbnails
            await client.videos.download_content(video.id, variant="thumbnail")
        # Redirect mode hands the CDN URL (it carries no credential) to the client.
        await gateway.server.app[keys.OPTIONS].update("VideoContentMode", "redirect")
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers={"Authorization": f"Bearer sk-{key.key}"},
                                 allow_redirects=False)
        assert resp.status == 302 and resp.headers["Location"] == f"{kling.url}/cdn/{first}.mp4"
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA - both
        logs = await consume_logs(user)
        assert sorted(log.quota for log in logs) == sorted([cost, both - cost])
    no_secret(caplog.text)


async def test_what_kling_cannot_render_changes_nothing(gateway, kling) -> None:
    user, key = await setup(gateway, kling)
    async with sdk(gateway, key) as client:
        for request in (dict(seconds="8", size="1280x720"), dict(seconds="5", size="1024x1792"),
                        dict(seconds="5", size="1280x720", input_reference=("h.webp", b"RIFF0000WEBP", "image/webp"))):
            with pytest.raises(openai.BadRequestError) as refused:
                await client.videos.create(prompt="a heron", model=MODEL, **request)
            no_secret(str(refused.value.body))
        assert kling.seen == [] and await Task.all().count() == 0
        assert await live_balance(gateway, user.id) == QUOTA
        await drain(gateway)
        assert await consume_logs(user) == []


async def test_a_failed_video_is_refunded_once_and_its_reason_masked(gateway, kling, caplog) -> None:
    user, key = await setup(gateway, kling)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND * 5)
        [task_id] = kling.tasks
        kling.fail(task_id, f"Failure to pass the risk control system (key {ACCESS_KEY}|{SECRET_KEY})")
        assert len((await poll_all(gateway)).refunded) == 1
        assert len((await poll_all(gateway)).refunded) == 0  # once
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.message.startswith("Failure to pass the risk control system")
        no_secret(failed.model_dump_json())
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA
        with pytest.raises(openai.BadRequestError):
            await client.videos.download_content(video.id)
    no_secret(caplog.text)


async def test_a_refused_key_is_a_failure_that_charges_nothing(gateway, kling) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelPrice", orjson.dumps({MODEL: PER_SECOND}).decode())
    await add_channel(gateway, kling, models=MODEL, type=int(ChannelType.KLING), key=f"{ACCESS_KEY}|wrong-secret-0000")
    user = await rich_user("kling", quota=QUOTA)
    key = await make_key(user)
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.APIStatusError) as refused:
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
        no_secret(str(refused.value.body))
    assert kling.tasks == {} and await Task.all().count() == 0
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA


async def test_a_malformed_stored_key_is_the_channels_failure_not_a_500(gateway, kling) -> None:
    """A key that is not accesskey|secretkey (imported, or written past the form): a 502 in OpenAI's
    shape naming the channel's key, refunded, nothing sent."""
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelPrice", orjson.dumps({MODEL: PER_SECOND}).decode())
    channel = await add_channel(gateway, kling, models=MODEL, type=int(ChannelType.KLING), key=KEY)
    await Channel.filter(id=channel.id).update(key="no-secret-part")
    gateway.server.app[RELAY].index.schedule_rebuild()
    await eventually(lambda: _keyed(gateway, channel.id, "no-secret-part"), timeout=10)
    user = await rich_user("kling", quota=QUOTA)
    key = await make_key(user)
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.APIStatusError) as refused:
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
    assert refused.value.status_code == 502 and "accesskey|secretkey" in str(refused.value.body)
    assert kling.tasks == {} and await Task.all().count() == 0
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA


async def _keyed(gateway, channel_id: int, key: str) -> bool:
    info = gateway.server.app[RELAY].index.get(channel_id)
    return info is not None and info.key == key


async def test_a_full_account_hands_the_video_to_another_channel(gateway, kling, aiohttp_server) -> None:
    user, key = await setup(gateway, kling)
    kling.full = True
    other = FakeKling()
    other.server = await aiohttp_server(other.app())
    await add_channel(gateway, other, models=MODEL, type=int(ChannelType.KLING), key=KEY, name="second")
    async with sdk(gateway, key) as client:
        for _ in range(2):  # whichever channel is picked first, the free one takes the video
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
    assert kling.tasks == {} and len(other.tasks) == 2
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA - 2 * pricing.per_call_quota(PER_SECOND * 5)
