"""/v1/videos converted for Jimeng (channel type 51): each call signed with Volcengine's signature (the key
pair never sent, never in an answer or a log), the req_key picked by the model and the image, polls naming
it, the video fetched from its URL without a credential; billed per second to the unit; what Jimeng cannot
render refused before anything is kept; a failed or lost video refunded once; a busy account hands the
video to another channel; a refused signature or a malformed key is the channel's failure."""
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
from tests.upstream.providers.jimeng.fake_jimeng import ACCESS_KEY, KEY, SECRET_KEY, FakeJimeng
from tests.upstream.providers.kit import consume_logs, sdk

pytestmark = pytest.mark.filterwarnings("ignore:The Sora API is scheduled:DeprecationWarning")
MODEL = "jimeng_v30"
MODELS = "jimeng_v30,jimeng_t2v_v30,jimeng_i2v_first_v30"
PER_SECOND = 0.04
QUOTA = 10_000_000


@pytest.fixture
async def jimeng(serve) -> FakeJimeng:
    return await serve(FakeJimeng())


async def priced(gateway) -> None:
    options = gateway.server.app[keys.OPTIONS]
    prices = {**(options.get_json("ModelPrice") or {}), **{model: PER_SECOND for model in MODELS.split(",")}}
    await options.update("ModelPrice", orjson.dumps(prices).decode())
    await options.update("MediaFetchPrivateEnabled", "true")  # the fake CDN listens on loopback


async def setup(gateway, jimeng: FakeJimeng, key: str = KEY):
    await priced(gateway)
    await add_channel(gateway, jimeng, models=MODELS, type=int(ChannelType.JIMENG), key=key)
    user = await rich_user("jimeng", quota=QUOTA)
    return user, await make_key(user)


async def poll_all(gateway):
    return await poll(VIDEO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])


def no_secret(text: str) -> None:
    assert SECRET_KEY not in text and ACCESS_KEY not in text and "HMAC-SHA256" not in text, text


async def test_text_and_image_to_video_billed_polled_and_downloaded(gateway, jimeng, caplog) -> None:
    caplog.set_level(logging.INFO)
    user, key = await setup(gateway, jimeng)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron takes off", model=MODEL, seconds="10", size="1280x720")
        cost = pricing.per_call_quota(PER_SECOND * 10)
        assert await live_balance(gateway, user.id) == QUOTA - cost
        no_secret(video.model_dump_json())
        still = await client.videos.create(prompt="the heron lands", model=MODEL, seconds="5", size="720x1280",
                                           input_reference=("heron.png", PNG, "image/png"))
        both = cost + pricing.per_call_quota(PER_SECOND * 5)
        assert await live_balance(gateway, user.id) == QUOTA - both
        assert jimeng.seen == [
            {"req_key": "jimeng_t2v_v30", "prompt": "a heron takes off", "frames": 241, "aspect_ratio": "16:9"},
            {"req_key": "jimeng_i2v_first_v30", "prompt": "the heron lands", "frames": 121,
             "binary_data_base64": [base64.b64encode(PNG).decode()]}]
        assert jimeng.refusals == []  # every call was signed with the secret key
        first, second = jimeng.tasks
        assert first not in video.id and second not in still.id
        assert (await poll_all(gateway)).claimed == 2
        assert sorted(jimeng.polls) == sorted([("jimeng_t2v_v30", first), ("jimeng_i2v_first_v30", second)])
        assert (await client.videos.retrieve(video.id)).status == "queued"
        jimeng.poll_busy = True  # the account's limit answers a poll: the video waits, nothing fails
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "queued"
        jimeng.poll_busy = False
        jimeng.start(first)
        await poll_all(gateway)
        assert (await client.videos.retrieve(video.id)).status == "in_progress"
        jimeng.finish(first)
        jimeng.finish(second)
        await poll_all(gateway)
        done = await client.videos.retrieve(video.id)
        assert (done.status, done.seconds, done.size) == ("completed", "10", "1280x720")
        assert done.expires_at is not None and done.expires_at - (done.completed_at or 0) == 3600
        assert (await client.videos.download_content(video.id)).content == MP4
        assert (await client.videos.download_content(still.id)).content == MP4
        assert jimeng.downloads == 2
        # Redirect mode hands out the video's URL: it carries no credential of the channel.
        await gateway.server.app[keys.OPTIONS].update("VideoContentMode", "redirect")
        resp = await gateway.get(f"/v1/videos/{video.id}/content", headers={"Authorization": f"Bearer sk-{key.key}"},
                                 allow_redirects=False)
        assert resp.status == 302 and resp.headers["Location"] == f"{jimeng.url}/cdn/{first}.mp4?x-expires=3600"
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA - both
        assert sorted(log.quota for log in await consume_logs(user)) == sorted([cost, both - cost])
    no_secret(caplog.text)


@pytest.mark.parametrize(("model", "request_", "param"), [
    (MODEL, dict(seconds="4", size="1280x720"), "seconds"),  # OpenAI's default length
    (MODEL, dict(seconds="5", size="1920x1080"), "size"),  # jimeng_v30 renders 720p
    (MODEL, dict(seconds="5", size="1024x1792"), "size"),
    (MODEL, dict(seconds="5", size="1280x720", input_reference=("h.webp", b"RIFF0000WEBP", "image/webp")),
     "input_reference"),
    ("jimeng_t2v_v30", dict(seconds="5", size="1280x720", input_reference=("h.png", PNG, "image/png")),
     "input_reference"),
    ("jimeng_i2v_first_v30", dict(seconds="5", size="1280x720"), "input_reference"),
])
async def test_what_jimeng_cannot_render_changes_nothing(gateway, jimeng, model, request_, param) -> None:
    user, key = await setup(gateway, jimeng)
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            await client.videos.create(prompt="a heron", model=model, **request_)
    assert refused.value.body["param"] == param, refused.value.body
    no_secret(str(refused.value.body))
    assert jimeng.seen == [] and await Task.all().count() == 0
    assert await live_balance(gateway, user.id) == QUOTA
    await drain(gateway)
    assert await consume_logs(user) == []


async def test_a_refused_video_is_refunded_once_and_its_reason_masked(gateway, jimeng, caplog) -> None:
    user, key = await setup(gateway, jimeng)
    async with sdk(gateway, key) as client:
        video = await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
        assert await live_balance(gateway, user.id) == QUOTA - pricing.per_call_quota(PER_SECOND * 5)
        [task_id] = jimeng.tasks
        jimeng.fail(task_id, f"Post Video Risk Not Pass (key {ACCESS_KEY}|{SECRET_KEY})")
        assert len((await poll_all(gateway)).refunded) == 1
        assert len((await poll_all(gateway)).refunded) == 0  # once
        failed = await client.videos.retrieve(video.id)
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.message.startswith("Post Video Risk Not Pass") and "50516" in failed.error.message
        no_secret(failed.model_dump_json())
        await drain(gateway)
        assert await live_balance(gateway, user.id) == QUOTA
        with pytest.raises(openai.BadRequestError):
            await client.videos.download_content(video.id)
    no_secret(caplog.text)


async def test_an_expired_or_lost_task_fails_and_is_refunded(gateway, jimeng) -> None:
    user, key = await setup(gateway, jimeng)
    async with sdk(gateway, key) as client:
        expired = await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
        lost = await client.videos.create(prompt="a crane", model=MODEL, seconds="5", size="1280x720")
        first, second = jimeng.tasks
        jimeng.expire(first)
        del jimeng.tasks[second]  # Jimeng keeps a task 12 hours: then not_found
        assert len((await poll_all(gateway)).refunded) == 2
        assert (await client.videos.retrieve(expired.id)).error.message == "the task expired at Jimeng"
        assert "no such task" in (await client.videos.retrieve(lost.id)).error.message
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA


async def test_a_busy_account_hands_the_video_to_another_channel(gateway, jimeng, aiohttp_server) -> None:
    user, key = await setup(gateway, jimeng)
    jimeng.full = True
    other = FakeJimeng()
    other.server = await aiohttp_server(other.app())
    await add_channel(gateway, other, models=MODELS, type=int(ChannelType.JIMENG), key=KEY, name="second")
    async with sdk(gateway, key) as client:
        for _ in range(2):  # whichever channel is picked first, the free one takes the video
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
    assert jimeng.tasks == {} and len(other.tasks) == 2
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA - 2 * pricing.per_call_quota(PER_SECOND * 5)


async def test_a_refused_signature_is_the_channels_failure_masked(gateway, jimeng, caplog) -> None:
    caplog.set_level(logging.INFO)
    user, key = await setup(gateway, jimeng, key=f"{ACCESS_KEY}|wrong-secret-0000")
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.APIStatusError) as refused:
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
    assert refused.value.status_code == 502 and "SignatureDoesNotMatch" in str(refused.value.body)
    no_secret(str(refused.value.body))
    assert "wrong-secret-0000" not in str(refused.value.body) + caplog.text
    assert len(jimeng.refusals) == 1 and jimeng.tasks == {} and await Task.all().count() == 0
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA
    no_secret(caplog.text)


async def test_a_malformed_stored_key_is_the_channels_failure_not_a_500(gateway, jimeng) -> None:
    """A key that is not AccessKey|SecretKey (imported, or written past the form): a 502 in OpenAI's
    shape naming the channel's key, refunded, nothing sent."""
    await priced(gateway)
    channel = await add_channel(gateway, jimeng, models=MODELS, type=int(ChannelType.JIMENG), key=KEY)
    await Channel.filter(id=channel.id).update(key="sk-not-a-key-pair")
    gateway.server.app[RELAY].index.schedule_rebuild()
    await eventually(lambda: _keyed(gateway, channel.id, "sk-not-a-key-pair"), timeout=10)
    user = await rich_user("jimeng", quota=QUOTA)
    key = await make_key(user)
    async with sdk(gateway, key) as client:
        with pytest.raises(openai.APIStatusError) as refused:
            await client.videos.create(prompt="a heron", model=MODEL, seconds="5", size="1280x720")
    assert refused.value.status_code == 502 and "AccessKey|SecretKey" in str(refused.value.body)
    assert "sk-not-a-key-pair" not in str(refused.value.body)
    assert jimeng.seen == [] and await Task.all().count() == 0
    await drain(gateway)
    assert await live_balance(gateway, user.id) == QUOTA


async def _keyed(gateway, channel_id: int, key: str) -> bool:
    info = gateway.server.app[RELAY].index.get(channel_id)
    return info is not None and info.key == key
